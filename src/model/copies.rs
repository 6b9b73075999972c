//! Copies: N instances of one experiment measured at once, one per CPU (`oslab run --copies`),
//! the will-it-scale question of whether a kernel path scales across cores.
//!
//! A result of such a run carries two harness parameters in its parameter map, beside the
//! experiment's own: `copies` (how many ran at once) and `copy_mode` (`processes`, each copy a
//! worker process of its own, or `threads`, the copies threads of one worker sharing its
//! address space and files). Being parameters, they name the configuration everywhere
//! (tables, `compare`'s matching, the report's curves) with nothing else to store. A result
//! without them ran alone: one copy.

use std::collections::BTreeMap;

/// The parameter holding the number of copies.
pub const COPIES: &str = "copies";
/// The parameter holding how the copies ran.
pub const COPY_MODE: &str = "copy_mode";

/// The most copies one configuration may run: beyond this the worker processes alone would
/// exhaust a machine's process table before measuring anything.
pub const MAX_COPIES: u32 = 1024;

/// How the copies of one configuration run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Each copy a worker process of its own (the default): separate address spaces.
    Processes,
    /// The copies threads of one worker: one address space, one file table, one directory.
    Threads,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "processes" => Some(Mode::Processes),
            "threads" => Some(Mode::Threads),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Processes => "processes",
            Mode::Threads => "threads",
        }
    }
}

/// How many copies of a configuration ran, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copies {
    pub count: u32,
    pub mode: Mode,
}

impl Copies {
    /// The copies a result's parameters record; one process when they record none.
    pub fn of(params: &BTreeMap<String, String>) -> Copies {
        let count = params
            .get(COPIES)
            .and_then(|c| c.parse().ok())
            .filter(|&c| c >= 1)
            .unwrap_or(1);
        let mode = params
            .get(COPY_MODE)
            .and_then(|m| Mode::parse(m))
            .unwrap_or(Mode::Processes);
        Copies { count, mode }
    }

    /// Whether the parameters name copies at all (`--copies` was given).
    pub fn recorded(params: &BTreeMap<String, String>) -> bool {
        params.contains_key(COPIES)
    }

    /// Record these copies in a parameter map.
    pub fn record(self, params: &mut BTreeMap<String, String>) {
        params.insert(COPIES.into(), self.count.to_string());
        params.insert(COPY_MODE.into(), self.mode.name().into());
    }

    /// More copies than CPUs: some copies share a CPU (labelled in every scaling table).
    pub fn oversubscribes(self, cpus: usize) -> bool {
        self.count as usize > cpus
    }
}

/// The parameters without the copies: what the configurations of one scaling curve share.
pub fn without_copies(params: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut rest = params.clone();
    rest.remove(COPIES);
    rest.remove(COPY_MODE);
    rest
}

/// `--copies`' list: numbers and `N` (the CPUs this process may use), e.g. `1,2,4,N`;
/// duplicates dropped, in the order given. `Err` is what the user should write instead.
pub fn parse_list(text: &str, cpus: usize) -> Result<Vec<u32>, String> {
    let mut counts = Vec::new();
    for item in text.split(',').map(str::trim) {
        let count = match item {
            "N" | "n" => u32::try_from(cpus.max(1)).unwrap_or(MAX_COPIES),
            _ => item.parse::<u32>().map_err(|_| {
                format!(
                    "--copies {text}: `{item}` is not a number; give e.g. 1,2,4,N (N: the CPUs)"
                )
            })?,
        };
        if count == 0 || count > MAX_COPIES {
            return Err(format!(
                "--copies {text}: give from 1 to {MAX_COPIES} copies (N: the CPUs)"
            ));
        }
        if !counts.contains(&count) {
            counts.push(count);
        }
    }
    Ok(counts)
}

/// `--scale`'s list: 1, then powers of two below `cpus`, then `cpus` (1,2,4,8,12 on 12 CPUs).
pub fn scale_list(cpus: usize) -> Vec<u32> {
    let n = u32::try_from(cpus.clamp(1, MAX_COPIES as usize)).unwrap_or(1);
    let mut counts: Vec<u32> = std::iter::successors(Some(1u32), |c| c.checked_mul(2))
        .take_while(|&c| c < n)
        .collect();
    counts.push(n);
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lists_and_scales() {
        assert_eq!(parse_list("1,2,4,N", 8), Ok(vec![1, 2, 4, 8]));
        assert_eq!(parse_list("N,1, N", 2), Ok(vec![2, 1]));
        assert!(parse_list("0", 2).unwrap_err().contains("from 1 to"));
        assert!(parse_list("two", 2).unwrap_err().contains("not a number"));
        assert!(parse_list("1,,2", 2).is_err());
        assert!(parse_list("5000", 2).is_err());
        assert_eq!(scale_list(1), vec![1]);
        assert_eq!(scale_list(2), vec![1, 2]);
        assert_eq!(scale_list(12), vec![1, 2, 4, 8, 12]);
        assert_eq!(scale_list(16), vec![1, 2, 4, 8, 16]);
    }

    #[test]
    fn copies_round_trip_through_parameters() {
        let mut params = BTreeMap::from([("size".to_string(), "4K".to_string())]);
        assert_eq!(Copies::of(&params).count, 1);
        assert!(!Copies::recorded(&params));
        let copies = Copies {
            count: 4,
            mode: Mode::Threads,
        };
        copies.record(&mut params);
        assert_eq!(Copies::of(&params), copies);
        assert!(copies.oversubscribes(2) && !copies.oversubscribes(4));
        assert_eq!(without_copies(&params).len(), 1);
    }

    proptest! {
        #[test]
        fn any_text_parses_or_says_why(text in "[0-9N, x-]{0,12}", cpus in 1usize..300) {
            match parse_list(&text, cpus) {
                Ok(counts) => prop_assert!(counts.iter().all(|&c| (1..=MAX_COPIES).contains(&c))),
                Err(why) => prop_assert!(why.starts_with("--copies")),
            }
        }

        #[test]
        fn scale_lists_rise_to_the_cpus(cpus in 1usize..5000) {
            let list = scale_list(cpus);
            prop_assert_eq!(list[0], 1);
            prop_assert!(list.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(*list.last().unwrap() as usize, cpus.min(MAX_COPIES as usize));
        }
    }
}

//! Where `oslab run`'s worker processes run: on the CPU `--cpu` names, on the CPUs
//! `--cpu-turns` names in turn, or by default all on one CPU of the fastest kind, the one with
//! the fewest device interrupts, so that the CPU is a fixed condition of the run, said in its
//! settings, and not noise between its processes (issue 34: a CPU that takes the disk's
//! interrupts is a finding, not an error bar; `--cpu-turns` measures whether CPUs differ).

use super::*;
use crate::model::env::CoreKind;

/// Where a run's processes run.
pub(super) struct Placement {
    /// The CPU the workers are pinned to (with `--cpu`, then the other side of cross-CPU
    /// experiments); empty where nothing can be pinned.
    pub(super) cpus: Vec<usize>,
    /// The CPUs the processes take in turn (`--cpu-turns`); empty otherwise.
    pub(super) turns: Vec<usize>,
    /// The other side of cross-CPU experiments.
    pub(super) other_cpu: Option<usize>,
    /// Why the run took the CPU it did, when oslab chose it.
    pub(super) why: Option<String>,
    /// What a test that leaves its processes to the scheduler (UnixBench's) may use: the
    /// CPUs of `--cpu` or `--cpu-turns`, else every CPU of the fastest kind.
    pub(super) free: Vec<usize>,
}

/// The placement the command line asks for, each CPU checked; the first mistake is a
/// [`UserError`] naming the fix.
pub(super) fn placement(args: &RunArgs, kinds: &[CoreKind]) -> Result<Placement, UserError> {
    let allowed = cpu::allowed();
    if let Some(text) = args.cpu_turns.as_deref() {
        let turns = named_cpus("--cpu-turns", text, &allowed)?;
        if turns.len() < 2 {
            return Err(UserError::BadCpu {
                option: "--cpu-turns",
                given: text.to_string(),
                why: "name two CPUs or more, e.g. --cpu-turns 0,1 (one CPU for every process \
                      is --cpu)"
                    .into(),
                allowed: cpu::format_list(&allowed),
            });
        }
        let cpus = turns.last().map(|c| vec![*c]).unwrap_or_default();
        return Ok(Placement {
            other_cpu: other_cpu(&cpus, kinds),
            cpus,
            free: turns.clone(),
            turns,
            why: None,
        });
    }
    if let Some(text) = args.cpu.as_deref() {
        let cpus = named_cpus("--cpu", text, &allowed)?;
        return Ok(Placement {
            other_cpu: other_cpu(&cpus, kinds),
            free: cpus.clone(),
            cpus,
            turns: Vec::new(),
            why: None,
        });
    }
    // A figure mixing big and little cores would describe neither.
    let fastest = crate::model::env::fastest_cpus(kinds, &allowed).0;
    let (cpus, why) = match quietest(&fastest, cpu::device_interrupts().as_deref()) {
        Some((cpu, why)) => (vec![cpu], why),
        None => (Vec::new(), None),
    };
    Ok(Placement {
        other_cpu: other_cpu(&cpus, kinds),
        cpus,
        turns: Vec::new(),
        why,
        free: fastest,
    })
}

/// Worker processes per configuration without `--repeat`: two per CPU with `--cpu-turns`, so
/// that each CPU's processes show the spread against which CPUs are compared.
pub(super) fn default_processes(placement: &Placement) -> u32 {
    if placement.turns.is_empty() {
        DEFAULT_PROCESSES
    } else {
        u32::try_from(placement.turns.len() * 2).unwrap_or(u32::MAX)
    }
}

/// Of `candidates` (ascending), the CPU with the fewest device interrupts since boot, the
/// highest-numbered of equals (the CPU oslab took before it counted them), and why, in the
/// words that follow "CPU n: " in a run's header; `None` without candidates.
pub(super) fn quietest(
    candidates: &[usize],
    interrupts: Option<&[u64]>,
) -> Option<(usize, Option<String>)> {
    let last = *candidates.last()?;
    if candidates.len() == 1 {
        return Some((last, None));
    }
    let Some(counts) = interrupts else {
        return Some((
            last,
            Some("the last this process may use (no per-CPU interrupt counts here)".into()),
        ));
    };
    let count = |c: usize| counts.get(c).copied().unwrap_or(0);
    let best = candidates.iter().rev().copied().min_by_key(|&c| count(c))?;
    let others: Vec<usize> = candidates.iter().copied().filter(|&c| c != best).collect();
    let against = if others.len() <= 3 {
        others
            .iter()
            .map(|&c| format!("CPU {c}: {}", thousands(count(c))))
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        let mut theirs: Vec<u64> = others.iter().map(|&c| count(c)).collect();
        theirs.sort_unstable();
        format!(
            "the other {} CPUs' median: {}",
            others.len(),
            thousands(theirs[theirs.len() / 2])
        )
    };
    Some((
        best,
        Some(format!(
            "the fewest device interrupts since boot ({}; {against})",
            thousands(count(best))
        )),
    ))
}

/// `12376441` as `12,376,441`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// The CPUs `--cpu` or `--cpu-turns` names, checked: a CPU list, none twice, each allowed.
fn named_cpus(
    option: &'static str,
    text: &str,
    allowed: &[usize],
) -> Result<Vec<usize>, UserError> {
    let bad = |why: String| UserError::BadCpu {
        option,
        given: text.to_string(),
        why,
        allowed: cpu::format_list(allowed),
    };
    let cpus = cpu::parse_list(text)
        .ok_or_else(|| bad("not a CPU list (write e.g. 3, 0,2 or 0-3)".into()))?;
    // The list parser folds repeats: look at the parts as written.
    let mut seen: Vec<usize> = Vec::new();
    let twice = text.split(',').find_map(|part| {
        let part = cpu::parse_list(part)?;
        let again = part.iter().copied().find(|c| seen.contains(c));
        seen.extend(part);
        again
    });
    if let Some(twice) = twice {
        let role = if option == "--cpu" {
            "the second CPU is the other side of cross-CPU experiments"
        } else {
            "each CPU takes its turn once"
        };
        return Err(bad(format!("CPU {twice} is named twice ({role})")));
    }
    if let Some(bad_cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(bad(format!(
            "CPU {bad_cpu} is offline or outside this process's affinity"
        )));
    }
    Ok(cpus)
}

/// The other side of cross-CPU experiments: the second CPU given, else the highest other
/// allowed CPU, of the first one's kind of core where the CPU has several kinds.
pub(super) fn other_cpu(cpus: &[usize], kinds: &[CoreKind]) -> Option<usize> {
    if let Some(second) = cpus.get(1) {
        return Some(*second);
    }
    let first = *cpus.first()?;
    let allowed = cpu::allowed();
    let same_kind = kinds
        .iter()
        .find(|k| k.cpus.contains(&first))
        .map(|k| k.cpus.clone())
        .unwrap_or_else(|| allowed.clone());
    let others = |pool: &[usize]| {
        allowed
            .iter()
            .rev()
            .copied()
            .find(|c| *c != first && pool.contains(c))
    };
    others(&same_kind).or_else(|| others(&allowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quietest_cpu_has_the_fewest_device_interrupts() {
        let counts = [28_652, 12_376_441];
        assert_eq!(
            quietest(&[0, 1], Some(&counts)),
            Some((
                0,
                Some("the fewest device interrupts since boot (28,652; CPU 1: 12,376,441)".into())
            ))
        );
        // Equals: the highest-numbered, as before interrupts were counted.
        assert_eq!(quietest(&[0, 1, 2], Some(&[5, 3, 3])).map(|q| q.0), Some(2));
        // Only the candidates count (the fastest kind of core).
        assert_eq!(quietest(&[2, 3], Some(&[0, 0, 9, 7])).map(|q| q.0), Some(3));
        let many: Vec<usize> = (0..8).collect();
        let (cpu, why) = quietest(&many, Some(&[9, 8, 7, 1, 6, 5, 4, 3])).unwrap();
        assert_eq!(cpu, 3);
        assert!(why.unwrap().ends_with("(1; the other 7 CPUs' median: 6)"));
        assert_eq!(quietest(&[4], Some(&[1])), Some((4, None)));
        let (cpu, why) = quietest(&[0, 1], None).unwrap();
        assert_eq!(cpu, 1);
        assert!(why.unwrap().contains("no per-CPU interrupt counts"));
        assert_eq!(quietest(&[], None), None);
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(12_376_441), "12,376,441");
    }

    #[test]
    fn turns_default_to_two_processes_a_cpu() {
        let mut p = Placement {
            cpus: vec![1],
            turns: Vec::new(),
            other_cpu: None,
            why: None,
            free: vec![0, 1],
        };
        assert_eq!(default_processes(&p), DEFAULT_PROCESSES);
        p.turns = vec![0, 1, 2];
        assert_eq!(default_processes(&p), 6);
    }
}

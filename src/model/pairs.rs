//! The parameters made to be compared within one run: two configurations of one experiment
//! that differ only in one of them — the path into the kernel (`entry`: inline against call),
//! transparent huge pages (`thp`: off against on), where the partner runs (`placement`: same
//! against cross CPU) — are a pair. The harness measures a pair in one process, their samples
//! taken in turn (`harness::duet`); the report gives their ratio from the pairs
//! (`report::paired`).

use std::collections::BTreeMap;

/// The compared parameters, each with its baseline value first.
pub const PAIRS: &[(&str, &str, &str)] = &[
    ("entry", "inline", "call"),
    ("thp", "off", "on"),
    ("placement", "same", "cross"),
];

/// The name of the fact a duet's two results carry: the sample pairs the process took.
pub const DUET_FACT: &str = "duet_pairs";

/// One compared parameter and its two values, baseline first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compared {
    pub parameter: &'static str,
    pub a: &'static str,
    pub b: &'static str,
}

/// Whether `b` is `a` with one of [`PAIRS`]'s parameters at its other value, `a` holding the
/// baseline, and every other parameter the same: the parameter, if so.
pub fn compared(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Option<Compared> {
    if a.len() != b.len() {
        return None;
    }
    PAIRS.iter().find_map(|&(parameter, va, vb)| {
        let same_rest = a.iter().all(|(k, v)| k == parameter || b.get(k) == Some(v));
        (a.get(parameter).map(String::as_str) == Some(va)
            && b.get(parameter).map(String::as_str) == Some(vb)
            && same_rest)
            .then_some(Compared {
                parameter,
                a: va,
                b: vb,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_pair_differs_in_one_compared_parameter_baseline_first() {
        let inline = params(&[("entry", "inline"), ("size", "1")]);
        let call = params(&[("entry", "call"), ("size", "1")]);
        let other = params(&[("entry", "call"), ("size", "2")]);
        assert_eq!(
            compared(&inline, &call),
            Some(Compared {
                parameter: "entry",
                a: "inline",
                b: "call"
            })
        );
        assert_eq!(compared(&call, &inline), None, "the baseline comes first");
        assert_eq!(compared(&inline, &other), None, "another parameter differs");
        assert_eq!(compared(&inline, &inline), None);
        let more = params(&[("entry", "call"), ("size", "1"), ("x", "y")]);
        assert_eq!(compared(&inline, &more), None);
        let thp = (params(&[("thp", "off")]), params(&[("thp", "on")]));
        assert_eq!(compared(&thp.0, &thp.1).map(|c| c.parameter), Some("thp"));
    }
}

//! What `oslab compare` says of the floor a time's CI takes from each side's earlier runs
//! (`analysis::processes::ratio_between_runs`): that it applies, and the rows of no change
//! whose width it, not the two runs compared, set, with those earlier runs.

use super::format::{sig3, time_range_ns};
use super::names::config_name;
use crate::analysis::compare::{Metric, Pair, RunComparison};

/// Rows named at most in [`floor_note`].
const FLOOR_ROWS: usize = 5;

/// That a time's CI is at least as wide as each side's earlier runs spread, where a side has
/// enough, and the rows of no change where that spread, not the runs compared, set the CI's
/// width: each side's earlier runs from the fastest to the slowest, so that "could see" is
/// read with what made it wide (an earlier run in a slow phase of the host, for example).
pub(super) fn floor_note(cmp: &RunComparison) -> String {
    let any = |p: &Pair| p.earlier_range.0.is_some() || p.earlier_range.1.is_some();
    if cmp.metric != Metric::Time || !cmp.pairs.iter().any(any) {
        return String::new();
    }
    let set: Vec<String> = cmp
        .pairs
        .iter()
        .filter(|p| p.ci_from_earlier_runs)
        .filter(|p| {
            p.comparison
                .as_ref()
                .is_some_and(|c| !c.verdict.is_change())
        })
        .map(|p| {
            let sides: Vec<String> = [("A", p.earlier_range.0), ("B", p.earlier_range.1)]
                .into_iter()
                .filter_map(|(side, r)| {
                    let r = r?;
                    Some(format!(
                        "{side}'s {} at {} (+{}%)",
                        r.runs,
                        time_range_ns(r.lowest, r.highest, r.lowest),
                        sig3((r.highest / r.lowest - 1.0) * 100.0)
                    ))
                })
                .collect();
            let name = config_name(&p.experiment, p.label.as_deref(), &p.params);
            format!("{name}, {}", sides.join(" and "))
        })
        .collect();
    let mut out =
        "A time's CI is also at least as wide as the spread of the earlier runs that each \
                   side's machine stored with the same settings (docs/compare.md)"
            .to_string();
    if !set.is_empty() {
        let more = match set.len() {
            n if n > FLOOR_ROWS => format!("; and {} more", n - FLOOR_ROWS),
            _ => String::new(),
        };
        let shown: Vec<&str> = set.iter().take(FLOOR_ROWS).map(String::as_str).collect();
        out.push_str(&format!(
            ". That spread, not the two runs, set what these rows could see; their earlier \
             runs, fastest to slowest: {}{more}",
            shown.join("; ")
        ));
    }
    out.push_str(".\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::analysis::compare::tests::stat_run;

    #[test]
    fn the_rows_whose_width_the_earlier_runs_set_are_named_with_them() {
        let compare = |a: &crate::model::Run, b: &crate::model::Run| {
            let declared = crate::experiment::DECLARED;
            crate::analysis::compare::compare_runs(a, b, &Metric::Time, 0.02, declared)
        };
        // Too few earlier runs: nothing said of them.
        let few = [990.0, 1000.0];
        assert_eq!(
            floor_note(&compare(&stat_run(1000.0, &few), &stat_run(1000.0, &few))),
            ""
        );
        // B's runs spread 12%, A's 1%: B's slowest run is what made the CI wide.
        let (ea, eb) = (
            [995.0, 1000.0, 1005.0, 998.0],
            [950.0, 960.0, 955.0, 1064.0],
        );
        let cmp = compare(&stat_run(1000.0, &ea), &stat_run(1010.0, &eb));
        let note = floor_note(&cmp);
        assert!(
            note.starts_with("A time's CI is also at least as wide"),
            "{note}"
        );
        assert!(
            note.contains(
                "could see; their earlier runs, fastest to slowest: syscall.stat, \
                 A's 4 at 995.0 – 1005.0 ns (+1.01%) and B's 4 at 950.0 – 1064.0 ns (+12.0%)."
            ),
            "{note}"
        );
        // A change past that spread is called: its row is not named.
        let cmp = compare(&stat_run(1000.0, &ea), &stat_run(2000.0, &eb));
        assert!(!floor_note(&cmp).contains("syscall.stat"));
    }
}

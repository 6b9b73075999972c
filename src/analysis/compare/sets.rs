//! `compare` over several runs a side: each run's figure of a configuration is one
//! observation. Where the spread between runs (the host's phases, a layout a run keeps) is
//! the widest level of a figure's uncertainty, no number of processes in one run narrows it;
//! more runs do (Kalibera and Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013).
//! Two runs compared alone borrow that spread from each side's earlier runs, as a floor
//! (`analysis::processes::ratio_between_runs`); runs compared as sets measure it themselves.

use super::{
    Comparison, Declared, Key, Metric, RunComparison, Side, compare_runs, counted, from_interval,
    group, partial, processes, side,
};
use crate::analysis::host::{PhaseBound, leave_out};
use crate::analysis::processes::{kept_groups, log_interval, welch_half_width};
use crate::analysis::stats::median;
use crate::model::{ExperimentResult, Run};

/// One configuration's time per operation in one run, from its results there, as a comparison
/// of two runs takes each side's: the median of the samples its figures count (slow kernel
/// phases left out where they came in phases, a cold first process dropped). `None` where
/// they hold no such samples.
fn run_figure(results: &[&ExperimentResult], phase_bound: PhaseBound) -> Option<f64> {
    let steady = leave_out(results, phase_bound);
    let Side::Samples(samples) = side(&Metric::Time, &counted(&steady, results))? else {
        return None;
    };
    let samples: Vec<&[f64]> = samples.iter().map(Vec::as_slice).collect();
    let pooled: Vec<f64> = kept_groups(&samples).concat();
    median(&pooled).filter(|m| *m > 0.0 && m.is_finite())
}

/// One side of a configuration over a set's runs, each run's results grouped once
/// ([`group`]): the figure of every run that measured it, their worker processes (those with
/// samples) and whether any run's figure is partial (a process that failed with samples kept).
struct SetSide {
    figures: Vec<f64>,
    processes: usize,
    partial: bool,
}

impl SetSide {
    fn of(runs: &[Vec<(Key, Vec<&ExperimentResult>)>], key: &Key, phase_bound: PhaseBound) -> Self {
        let mut side = SetSide {
            figures: Vec::new(),
            processes: 0,
            partial: false,
        };
        let found = runs
            .iter()
            .filter_map(|groups| groups.iter().find(|(k, _)| k == key));
        for (_, results) in found {
            side.figures.extend(run_figure(results, phase_bound));
            side.processes += processes(results);
            side.partial |= partial(results);
        }
        side
    }
}

/// Two sets of one configuration's per-run figures compared: the ratio of their geometric
/// means, its 95% interval from Welch's t on the logarithms (each side's runs' spread, with
/// the Welch–Satterthwaite degrees of freedom), the p-value of that interval (one unit of
/// replication, the run, for both), the verdict and the smallest change it could call.
/// `None` unless each side has two or more positive, finite figures.
pub fn compare_figure_sets(a: &[f64], b: &[f64], noise: f64) -> Option<Comparison> {
    let logs = |xs: &[f64]| -> Option<Vec<f64>> {
        xs.iter()
            .map(|&x| (x > 0.0 && x.is_finite()).then(|| x.ln()))
            .collect()
    };
    let (la, lb) = (logs(a)?, logs(b)?);
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let half = welch_half_width(&la, &lb)?;
    let (ga, gb) = (mean(&la).exp(), mean(&lb).exp());
    Some(from_interval(
        ga,
        gb,
        gb / ga,
        log_interval(gb / ga, half),
        noise,
    ))
}

/// Compare the runs `b` against the runs `a` (two or more a side, each side's first one
/// standing for it in the environment and settings diffs and for which configurations are
/// compared): every configuration both first runs measured, by the times of every run of
/// each side that measured it ([`compare_figure_sets`]). The floor from earlier runs, the
/// processes apart and the kernel canaries of a comparison of two runs are not used: the runs'
/// own spread is the interval. A pair's processes are those of every run of a side, and a
/// side is partial where any of its runs is.
pub fn compare_run_sets(a: &[Run], b: &[Run], noise: f64, declared: Declared) -> RunComparison {
    let mut cmp = compare_runs(&a[0], &b[0], &Metric::Time, noise, declared);
    let (grouped_a, grouped_b): (Vec<_>, Vec<_>) =
        (a.iter().map(group).collect(), b.iter().map(group).collect());
    for pair in &mut cmp.pairs {
        let key: Key = (
            pair.experiment.clone(),
            pair.params.clone(),
            pair.label.clone(),
        );
        let (sa, sb) = (
            SetSide::of(&grouped_a, &key, declared.phase_bound),
            SetSide::of(&grouped_b, &key, declared.phase_bound),
        );
        pair.runs = Some((sa.figures.len(), sb.figures.len()));
        pair.processes = (sa.processes, sb.processes);
        pair.partial = (sa.partial, sb.partial);
        pair.comparison = compare_figure_sets(&sa.figures, &sb.figures, noise);
        pair.kernel_canaries = None;
        pair.apart = (None, None);
        pair.slow_run = (None, None);
        pair.earlier_range = (None, None);
        pair.ci_from_earlier_runs = false;
    }
    cmp.kernel_canaries = None;
    let ids = |runs: &[Run]| runs.iter().map(|r| r.id).collect();
    cmp.run_sets = Some((ids(a), ids(b)));
    cmp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::tests::stat_run;
    use crate::analysis::compare::{Test, Verdict};

    #[test]
    fn sets_of_runs_give_welchs_interval_on_the_logarithms() {
        // Each side's runs spread ±1%; B 5% slower: called, with t over the runs.
        let a = [99.0, 100.0, 101.0, 100.0, 100.0];
        let b: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
        let c = compare_figure_sets(&a, &b, 0.02).unwrap();
        assert!((c.ratio - 1.05).abs() < 1e-12, "{c:?}");
        let (lo, hi) = c.ci.unwrap();
        // sd of the logs ≈ 0.00707 a side, se ≈ 0.00447, df 8: t = 2.306, half ≈ 0.0103.
        assert!(
            (hi / c.ratio).ln() > 0.0098 && (hi / c.ratio).ln() < 0.0108,
            "{c:?}"
        );
        assert!(((c.ratio / lo).ln() - (hi / c.ratio).ln()).abs() < 1e-12);
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.test, Some(Test::Interval));
        // The same runs on both sides: no change, and the p of that interval.
        let same = compare_figure_sets(&a, &a, 0.02).unwrap();
        assert_eq!(same.verdict, Verdict::NoChange);
        assert!(same.p.unwrap() > 0.99);
        // Runs that spread ±15%: a 5% change is not called.
        let wide = [85.0, 100.0, 115.0];
        let wider: Vec<f64> = wide.iter().map(|x| x * 1.05).collect();
        let c = compare_figure_sets(&wide, &wider, 0.02).unwrap();
        assert_eq!(c.verdict, Verdict::NoChange);
        assert!(c.detectable.unwrap() > 0.2, "{c:?}");
    }

    #[test]
    fn a_side_needs_two_runs_and_positive_figures() {
        assert_eq!(compare_figure_sets(&[100.0], &[100.0, 101.0], 0.02), None);
        assert_eq!(
            compare_figure_sets(&[100.0, 0.0], &[100.0, 101.0], 0.02),
            None
        );
        assert_eq!(compare_figure_sets(&[], &[], 0.02), None);
    }

    #[test]
    fn runs_compared_as_sets_take_each_runs_figure() {
        let declared = crate::experiment::DECLARED;
        let a = [
            stat_run(1000.0, &[]),
            stat_run(1010.0, &[]),
            stat_run(990.0, &[]),
        ];
        let b = [
            stat_run(1100.0, &[]),
            stat_run(1110.0, &[]),
            stat_run(1090.0, &[]),
        ];
        let cmp = compare_run_sets(&a, &b, 0.02, declared);
        let pair = &cmp.pairs[0];
        assert_eq!(pair.runs, Some((3, 3)));
        // Three processes a run, three runs a side.
        assert_eq!(pair.processes, (9, 9));
        assert_eq!(pair.partial, (false, false));
        let c = pair.comparison.as_ref().unwrap();
        assert!((c.ratio - 1.1).abs() < 0.002, "{c:?}");
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(cmp.run_sets.as_ref().map(|s| s.0.len()), Some(3));
        // A side is partial where any of its runs is: here B's last, not its first.
        let mut b = b;
        b[2].results[1].status = crate::model::Status::Failed;
        let cmp = compare_run_sets(&a, &b, 0.02, declared);
        assert_eq!(cmp.pairs[0].partial, (false, true));
    }
}

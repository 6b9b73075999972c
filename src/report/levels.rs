//! Where a configuration's interval gets its width: level by level — within one worker process
//! (how long it was measured), between the processes of the run (layout, CPU), between this
//! machine's runs (host phases) — each as the half-width that level alone gives the rerun
//! interval (`analysis::processes::rerun_interval`), so that the widest is the one to spend
//! time on (more samples, more processes, or a quieter machine).

use crate::analysis::adaptive::{self, Stop, Widths};
use crate::analysis::processes::{earlier_runs_half, t975, unstable};
use crate::model::RunSettings;
use crate::report::format::sig3;
use crate::report::pool::Pooled;

/// A level of replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The samples of one process: more of them narrow it.
    Within,
    /// The processes of one run: more processes narrow it (t over few is large).
    Processes,
    /// This machine's runs: only a quieter machine narrows it.
    Runs,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Within => "within a process",
            Level::Processes => "between processes",
            Level::Runs => "between runs",
        }
    }
}

/// Where the between-runs level comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsFrom {
    /// This configuration's own earlier runs on this machine, so many.
    Own(usize),
    /// The machine's rerun spread over so many of the run's configurations, each against its
    /// last earlier run (`analysis::reruns`): the configuration has too few runs of its own.
    Machine(usize),
}

impl RunsFrom {
    /// In a few words: "3 earlier", "the machine's, 11 configurations".
    pub fn describe(self) -> String {
        match self {
            RunsFrom::Own(k) => format!("{k} earlier"),
            RunsFrom::Machine(n) => format!("the machine's, {n} configurations"),
        }
    }
}

/// One configuration's uncertainty, level by level: each a relative half-width of the rerun
/// interval that the level alone would give.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Processes that measured, and those the pooled figures keep (a cold first one left out).
    pub processes: usize,
    pub kept: usize,
    /// √2 · the processes' median own 95% half-width / √kept.
    pub within: f64,
    /// √2 · t(0.975, n − 1) · the spread of the kept process medians but a process apart
    /// (`analysis::processes::apart`) / √n, n of them.
    pub between: f64,
    /// √2 · t(0.975, k) · the spread of this and the k earlier runs' medians, with k; or,
    /// with too few of those, the machine's rerun spread over the run's configurations; `None`
    /// with neither.
    pub runs: Option<(f64, RunsFrom)>,
    /// The process medians are more than 2× apart: no interval is shown.
    pub unstable: bool,
    /// The first process was cold by this much, relatively.
    pub cold_first: Option<f64>,
}

impl Levels {
    /// The levels of a configuration measured by two or more processes; `None` otherwise.
    pub fn of(p: &Pooled) -> Option<Levels> {
        let spread = p.spread.as_ref()?;
        let kept = spread.kept().len();
        if spread.medians.len() < 2 || kept < 2 {
            return None;
        }
        let root = |n: usize| std::f64::consts::SQRT_2 / (n as f64).sqrt();
        // The spread between processes is that of the kept ones but a process apart.
        let steady = spread.steady().len();
        Some(Levels {
            processes: spread.medians.len(),
            kept,
            within: spread.within * root(kept),
            between: t975(steady - 1) * spread.between * root(steady),
            runs: p
                .between_runs()
                .map(|(s, k)| (t975(k) * s * std::f64::consts::SQRT_2, RunsFrom::Own(k)))
                .or_else(|| {
                    p.machine
                        .map(|m| (m.half, RunsFrom::Machine(m.configurations)))
                }),
            unstable: unstable(spread.kept()),
            cold_first: spread.first_run,
        })
    }

    /// A level's half-width as the tables print it: `±4.3%`.
    pub fn percent(half: f64) -> String {
        format!("±{}%", sig3(half * 100.0))
    }

    /// The level that makes the interval widest.
    pub fn widest(&self) -> Level {
        let runs = self.runs.map_or(0.0, |(r, _)| r);
        if runs > self.between && runs > self.within {
            Level::Runs
        } else if self.between > self.within {
            Level::Processes
        } else {
            Level::Within
        }
    }
}

/// The widths the adaptive plan weighs (`analysis::adaptive`), from a configuration's pooled
/// processes; `None` with fewer than two measuring.
pub fn widths(p: &Pooled) -> Option<Widths> {
    let levels = Levels::of(p)?;
    // One call: each resamples the pooled processes for the interval. The plan weighs the
    // configuration's own levels: during the run it is pooled alone, without the machine's.
    let f = p.own_figures();
    let rerun = f
        .stats
        .zip(f.ci)
        .and_then(|(s, (lo, hi))| (s.median > 0.0).then(|| (hi - lo) / 2.0 / s.median));
    Some(Widths {
        processes: p.processes,
        rerun,
        within: levels.within,
        between: levels.between,
        // The earlier runs' spread without this run's median, which more processes would
        // move: three processes, two of them in a mode of their own at 160 ns against the
        // earlier runs' 200-219 ns, made the spread with it 13% and the plan stop at three
        // (docs/measurement.md §8).
        runs: earlier_runs_half(&p.result.earlier_medians),
        spent_s: p.spent_s,
        slow_run: crate::report::host::slow_against_earlier_of(p).is_some(),
    })
}

/// The most processes a run's configurations could have, when it added them as it went
/// (`run --max-processes`); `None` when each had the fixed number.
pub fn most_processes(settings: &RunSettings) -> Option<u32> {
    settings.max_processes.filter(|&m| m > settings.processes)
}

/// Why a configuration of a run that added processes as it went got no more: the plan's rule
/// applied to what it stored (the same rule, the same figures); `None` when the run's
/// processes were fixed. A configuration that wanted more but got none was cut short (Ctrl-C).
pub fn stopped(p: &Pooled, settings: &RunSettings) -> Option<Stop> {
    let most = most_processes(settings)?;
    let limits = adaptive::Limits {
        target: settings.precision,
        most: most as usize,
        budget_s: settings.budget_s,
    };
    adaptive::next(widths(p).as_ref(), limits)
}

/// The line under the run's heading that says how its rows pool processes; `None` when every
/// configuration had one.
pub fn processes_line(settings: &RunSettings, pooled: &[Pooled]) -> Option<String> {
    let most = pooled.iter().map(|p| p.processes).max().unwrap_or(1);
    let fewest = pooled.iter().map(|p| p.processes).min().unwrap_or(1);
    let common = "each with its own memory layout; its interval is where a rerun's median \
                  falls, 95%: it covers the spread between them, and between this machine's \
                  earlier runs";
    let count = if fewest == most {
        most.to_string()
    } else {
        format!("{fewest} to {most}")
    };
    match most_processes(settings) {
        Some(max) => Some(format!(
            "processes: each row pools the {count} worker processes that measured it, \
             {common}; each configuration started with {} and got more (to {max}, \
             --max-processes) while the spread between them made its interval widest and \
             wider than the precision target, and another fitted the time budget; the \
             per-process table says why each stopped\n",
            settings.processes
        )),
        None if most > 1 => Some(format!(
            "processes: each row pools the {most} worker processes that measured it, {common} \
             (--repeat)\n"
        )),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(within: f64, between: f64, runs: Option<f64>) -> Levels {
        Levels {
            processes: 3,
            kept: 3,
            within,
            between,
            runs: runs.map(|r| (r, RunsFrom::Own(4))),
            unstable: false,
            cold_first: None,
        }
    }

    #[test]
    fn the_plan_weighs_the_earlier_runs_spread_without_this_runs_median() {
        // Two of three processes in a mode of their own (160 ns against 200), after earlier
        // runs at 200-219 ns (verdicts window 17, 2026-12-07).
        let results: Vec<crate::model::ExperimentResult> = [160.0, 160.5, 199.6]
            .iter()
            .map(|&m| {
                let values: Vec<f64> = (0..20).map(|i| m + f64::from(i % 5) * 0.1).collect();
                let mut r =
                    crate::model::ExperimentResult::from_values("syscall.read", &[], &values, 1000);
                r.earlier_medians = vec![204.0, 219.0, 200.0];
                r
            })
            .collect();
        let pooled = &crate::report::pool::pool(&results)[0];
        let levels = Levels::of(pooled).unwrap();
        let w = widths(pooled).unwrap();
        // The interval's floor counts this run's median: it is its widest level.
        assert_eq!(levels.widest(), Level::Runs);
        // The plan's runs level is the earlier runs' alone: processes are what to add.
        assert!(w.runs.unwrap() < w.between, "{w:?}");
        let limits = adaptive::Limits {
            target: 0.02,
            most: 6,
            budget_s: 1e6,
        };
        assert_eq!(adaptive::next(Some(&w), limits), None);
    }

    #[test]
    fn the_widest_level_is_named() {
        assert_eq!(levels(0.01, 0.05, None).widest(), Level::Processes);
        assert_eq!(levels(0.05, 0.01, None).widest(), Level::Within);
        assert_eq!(levels(0.01, 0.05, Some(0.08)).widest(), Level::Runs);
        assert_eq!(levels(0.01, 0.05, Some(0.02)).widest(), Level::Processes);
    }
}

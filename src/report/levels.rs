//! Where a configuration's interval gets its width: level by level — within one worker process
//! (how long it was measured), between the processes of the run (layout, CPU), between this
//! machine's runs (host phases) — each as the half-width that level alone gives the rerun
//! interval (`analysis::processes::rerun_interval`), so that the widest is the one to spend
//! time on (more samples, more processes, or a quieter machine).

use crate::analysis::processes::{t975, unstable};
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

/// One configuration's uncertainty, level by level: each a relative half-width of the rerun
/// interval that the level alone would give.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Processes that measured, and those the pooled figures keep (a cold first one left out).
    pub processes: usize,
    pub kept: usize,
    /// √2 · the processes' median own 95% half-width / √kept.
    pub within: f64,
    /// √2 · t(0.975, kept − 1) · the spread of the kept process medians / √kept.
    pub between: f64,
    /// √2 · t(0.975, k) · the spread of this and the k earlier runs' medians, with k; `None`
    /// with too few earlier runs.
    pub runs: Option<(f64, usize)>,
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
        let root = std::f64::consts::SQRT_2 / (kept as f64).sqrt();
        Some(Levels {
            processes: spread.medians.len(),
            kept,
            within: spread.within * root,
            between: t975(kept - 1) * spread.between * root,
            runs: p
                .between_runs()
                .map(|(s, k)| (t975(k) * s * std::f64::consts::SQRT_2, k)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(within: f64, between: f64, runs: Option<f64>) -> Levels {
        Levels {
            processes: 3,
            kept: 3,
            within,
            between,
            runs: runs.map(|r| (r, 4)),
            unstable: false,
            cold_first: None,
        }
    }

    #[test]
    fn the_widest_level_is_named() {
        assert_eq!(levels(0.01, 0.05, None).widest(), Level::Processes);
        assert_eq!(levels(0.05, 0.01, None).widest(), Level::Within);
        assert_eq!(levels(0.01, 0.05, Some(0.08)).widest(), Level::Runs);
        assert_eq!(levels(0.01, 0.05, Some(0.02)).widest(), Level::Processes);
    }
}

//! How many worker processes a configuration gets: a run starts every configuration with a few
//! short processes and adds one at a time where the interval is wider than the precision
//! target and more processes are what would narrow it — where the spread between processes is
//! the widest level of its rerun interval. More samples in a process narrow only the within
//! level; more processes the between level (t over few processes is large: 4.30 with three,
//! 2.57 with six); the spread of this machine's earlier runs no number of processes narrows.
//! Spending the repetitions at the level whose variance dominates is Kalibera and Jones's rule
//! ("Rigorous Benchmarking in Reasonable Time", ISMM 2013); the most processes bounds its cost.
//!
//! The same rule decides during the run and explains the run when it is shown: the reasons are
//! recomputed from the stored processes, so they need no storage of their own.

/// The widths of one configuration's rerun interval, relative to its median, as its processes
/// so far give them (`report::levels` computes them from the pooled processes).
#[derive(Debug, Clone, PartialEq)]
pub struct Widths {
    /// Processes that measured.
    pub processes: usize,
    /// Half the width of the rerun interval over the median; `None` when no interval is given
    /// (processes more than 2× apart: unstable).
    pub rerun: Option<f64>,
    /// The half-width each level alone gives the interval: within a process, between the
    /// processes, between this machine's runs (`None`: too few earlier runs).
    pub within: f64,
    pub between: f64,
    pub runs: Option<f64>,
}

/// Why a configuration got no more processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Its rerun interval is within the precision target.
    Target,
    /// The spread of the earlier runs is the widest level: only a quieter machine narrows it.
    Runs,
    /// The within-process level is the widest: more samples would narrow it, not processes.
    Within,
    /// It reached the most processes the run allows (`--max-processes`).
    Most,
    /// Fewer than two of its processes measured: nothing to weigh.
    TooFew,
}

impl Stop {
    /// The word JSON and the tables use.
    pub fn code(self) -> &'static str {
        match self {
            Stop::Target => "target",
            Stop::Runs => "runs",
            Stop::Within => "within",
            Stop::Most => "most",
            Stop::TooFew => "too-few",
        }
    }

    /// Why, in a few words.
    pub fn explain(self) -> &'static str {
        match self {
            Stop::Target => "within the precision target",
            Stop::Runs => "earlier runs' spread widest: a quieter machine would narrow it",
            Stop::Within => "within-process level widest: more samples would narrow it",
            Stop::Most => "at the most processes",
            Stop::TooFew => "fewer than two processes measured",
        }
    }
}

/// Whether a configuration whose processes so far give `widths` (`None`: fewer than two
/// measured) gets another process: `None` if it does, else why not. `target` is the run's
/// precision (a fraction of the median), `most` the most processes it may have.
pub fn next(widths: Option<&Widths>, target: f64, most: usize) -> Option<Stop> {
    let Some(w) = widths else {
        return Some(Stop::TooFew);
    };
    if w.rerun.is_some_and(|half| half <= target) {
        return Some(Stop::Target);
    }
    let runs = w.runs.unwrap_or(0.0);
    if runs >= w.between && runs >= w.within {
        return Some(Stop::Runs);
    }
    if w.within >= w.between {
        return Some(Stop::Within);
    }
    if w.processes >= most {
        return Some(Stop::Most);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widths(rerun: Option<f64>, within: f64, between: f64, runs: Option<f64>) -> Widths {
        Widths {
            processes: 3,
            rerun,
            within,
            between,
            runs,
        }
    }

    #[test]
    fn a_process_is_added_while_the_spread_between_processes_is_widest() {
        assert_eq!(
            next(Some(&widths(Some(0.2), 0.01, 0.2, None)), 0.01, 6),
            None
        );
        // Unstable (no interval): processes are what could tell.
        assert_eq!(next(Some(&widths(None, 0.01, 0.9, None)), 0.01, 6), None);
        assert_eq!(
            next(Some(&widths(Some(0.2), 0.01, 0.2, Some(0.05))), 0.01, 6),
            None
        );
    }

    #[test]
    fn each_reason_to_stop_is_named() {
        let case = |w: Widths, most| next(Some(&w), 0.02, most);
        assert_eq!(
            case(widths(Some(0.015), 0.01, 0.3, None), 6),
            Some(Stop::Target)
        );
        assert_eq!(
            case(widths(Some(0.2), 0.01, 0.1, Some(0.2)), 6),
            Some(Stop::Runs)
        );
        assert_eq!(
            case(widths(Some(0.05), 0.05, 0.03, None), 6),
            Some(Stop::Within)
        );
        assert_eq!(
            case(widths(Some(0.2), 0.01, 0.2, None), 3),
            Some(Stop::Most)
        );
        assert_eq!(next(None, 0.02, 6), Some(Stop::TooFew));
    }

    #[test]
    fn the_target_wins_over_the_most_processes() {
        let mut w = widths(Some(0.01), 0.002, 0.01, None);
        w.processes = 6;
        assert_eq!(next(Some(&w), 0.02, 6), Some(Stop::Target));
    }
}

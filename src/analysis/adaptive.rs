//! How many worker processes a configuration gets: a run starts every configuration with a few
//! short processes and adds one at a time where the interval is wider than the precision
//! target and more processes are what would narrow it — where the spread between processes is
//! the widest level of its rerun interval. More samples in a process narrow only the within
//! level; more processes the between level (t over few processes is large: 4.30 with three,
//! 2.57 with six); the spread of this machine's earlier runs no number of processes narrows.
//! Spending the repetitions at the level whose variance dominates is Kalibera and Jones's rule
//! ("Rigorous Benchmarking in Reasonable Time", ISMM 2013); the most processes bounds its cost.
//! A configuration whose processes so far sat in a slow kernel phase of the host against this
//! machine's earlier runs gets more whatever its widths: no width shows that phase, and a
//! later process may miss it.
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
    /// The wall time its processes took so far, seconds, setup included (a duet's worker
    /// counts half for each of its two configurations).
    pub spent_s: f64,
    /// Its processes so far took it wholly in a slow kernel phase of the host against this
    /// machine's earlier runs (`analysis::host::SlowRun`): none of its widths shows that.
    pub slow_run: bool,
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
    /// Another process of the length of its others would take its processes past the
    /// configuration's time budget (`--budget`): a long setup (thousands of files made first)
    /// or long samples.
    Budget,
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
            Stop::Budget => "budget",
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
            Stop::Budget => "another process would overrun the time budget",
            Stop::TooFew => "fewer than two processes measured",
        }
    }
}

/// Whether a configuration whose processes so far give `widths` (`None`: fewer than two
/// measured) gets another process: `None` if it does, else why not. `limits` are the run's
/// precision target (a fraction of the median), the most processes a configuration may have
/// and its time budget in seconds.
pub fn next(widths: Option<&Widths>, limits: Limits) -> Option<Stop> {
    let Limits {
        target,
        most,
        budget_s,
    } = limits;
    let Some(w) = widths else {
        return Some(Stop::TooFew);
    };
    // A configuration taken wholly in a slow kernel phase gets another process whatever its
    // widths: a later one may find the host at its usual level, and the figures then leave the
    // slow processes out (`analysis::host::leave_out`).
    if !w.slow_run {
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
    }
    if w.processes >= most {
        return Some(Stop::Most);
    }
    let another = w.spent_s / w.processes.max(1) as f64;
    if w.spent_s + another > budget_s {
        return Some(Stop::Budget);
    }
    None
}

/// What bounds a configuration's processes (see [`next`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The precision target of the rerun interval, a fraction of the median.
    pub target: f64,
    /// The most processes a configuration may have.
    pub most: usize,
    /// The configuration's time budget, seconds (`--budget`).
    pub budget_s: f64,
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
            spent_s: 0.9,
            slow_run: false,
        }
    }

    fn limits(target: f64, most: usize) -> Limits {
        Limits {
            target,
            most,
            budget_s: 5.0,
        }
    }

    #[test]
    fn a_process_is_added_while_the_spread_between_processes_is_widest() {
        assert_eq!(
            next(Some(&widths(Some(0.2), 0.01, 0.2, None)), limits(0.01, 6)),
            None
        );
        // Unstable (no interval): processes are what could tell.
        assert_eq!(
            next(Some(&widths(None, 0.01, 0.9, None)), limits(0.01, 6)),
            None
        );
        assert_eq!(
            next(
                Some(&widths(Some(0.2), 0.01, 0.2, Some(0.05))),
                limits(0.01, 6)
            ),
            None
        );
    }

    #[test]
    fn each_reason_to_stop_is_named() {
        let case = |w: Widths, most| next(Some(&w), limits(0.02, most));
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
        let long = Widths {
            spent_s: 4.0,
            ..widths(Some(0.2), 0.01, 0.2, None)
        };
        assert_eq!(case(long, 6), Some(Stop::Budget));
        assert_eq!(next(None, limits(0.02, 6)), Some(Stop::TooFew));
    }

    #[test]
    fn a_process_is_added_while_one_more_fits_the_budget() {
        // Three processes of 1.25 s: a fourth ends at 5 s, within the budget; of 1.3 s, past it.
        let took = |spent_s| Widths {
            spent_s,
            ..widths(Some(0.2), 0.01, 0.2, None)
        };
        assert_eq!(next(Some(&took(3.75)), limits(0.01, 6)), None);
        assert_eq!(next(Some(&took(3.9)), limits(0.01, 6)), Some(Stop::Budget));
    }

    #[test]
    fn a_configuration_taken_wholly_in_a_slow_kernel_phase_gets_another_process() {
        // Within the target, the earlier runs' spread widest: no more, unless the processes so
        // far sat in a slow phase of the host as long as they ran; then up to the most and the
        // budget.
        let slow = |w: Widths| Widths {
            slow_run: true,
            ..w
        };
        let on_target = widths(Some(0.005), 0.002, 0.003, Some(0.04));
        assert_eq!(next(Some(&on_target), limits(0.01, 6)), Some(Stop::Target));
        assert_eq!(next(Some(&slow(on_target.clone())), limits(0.01, 6)), None);
        assert_eq!(
            next(Some(&slow(on_target.clone())), limits(0.01, 3)),
            Some(Stop::Most)
        );
        let long = Widths {
            spent_s: 4.0,
            ..slow(on_target)
        };
        assert_eq!(next(Some(&long), limits(0.01, 6)), Some(Stop::Budget));
    }

    #[test]
    fn the_target_wins_over_the_most_processes() {
        let mut w = widths(Some(0.01), 0.002, 0.01, None);
        w.processes = 6;
        assert_eq!(next(Some(&w), limits(0.02, 6)), Some(Stop::Target));
    }
}

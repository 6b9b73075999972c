//! [`ExperimentInfo::new`] and the calls that set its other fields, one each: an experiment
//! is written as its required fields and what differs from the defaults, in one `const`
//! expression.

use super::{Batch, Claim, ExperimentInfo, ParamSpec, Params, Preflight, Setup};
use crate::analysis::validate::Expectation;

impl ExperimentInfo {
    /// An experiment from its required fields. Every other field takes its default, the most
    /// common value among the experiments: no `params`; `syscalls` claims none
    /// ([`no_claims`](super::no_claims)); `subtract_loop_overhead` false; `default_suite`
    /// true; `ladder` false; `counters_in_samples` true; `work_dir` false; `enters_kernel`
    /// true; `expectations`
    /// none ([`no_expectations`](super::no_expectations)); `preflight` `None`; `batch`
    /// [`Batch::Sized`]; no `sweep`; no `quick_params`; `cells` [`Cells::NOWHERE`](crate::model::equivalence::Cells::NOWHERE)
    /// (so each declaration says where it runs).
    pub const fn new(
        name: &'static str,
        summary: &'static str,
        op: &'static str,
        path: &'static str,
        setup: Setup,
    ) -> ExperimentInfo {
        ExperimentInfo {
            name,
            summary,
            op,
            path,
            params: &[],
            syscalls: super::no_claims,
            subtract_loop_overhead: false,
            default_suite: true,
            ladder: false,
            counters_in_samples: true,
            work_dir: false,
            enters_kernel: true,
            expectations: super::no_expectations,
            setup,
            preflight: None,
            batch: Batch::Sized,
            sweep: &[],
            quick_params: &[],
            cells: crate::model::equivalence::Cells::NOWHERE,
        }
    }

    /// Sets `cells`: how each system performs it, or why it does not run there.
    pub const fn cells(self, cells: crate::model::equivalence::Cells) -> ExperimentInfo {
        ExperimentInfo { cells, ..self }
    }

    /// Sets `params`.
    pub const fn params(self, params: &'static [ParamSpec]) -> ExperimentInfo {
        ExperimentInfo { params, ..self }
    }

    /// Sets `syscalls`.
    pub const fn syscalls(self, syscalls: fn(&Params) -> Vec<Claim>) -> ExperimentInfo {
        ExperimentInfo { syscalls, ..self }
    }

    /// Sets `subtract_loop_overhead` (the empty loop's cost is subtracted).
    pub const fn subtract_loop_overhead(self) -> ExperimentInfo {
        ExperimentInfo {
            subtract_loop_overhead: true,
            ..self
        }
    }

    /// Clears `default_suite`: `oslab run` with no argument leaves the experiment out.
    pub const fn outside_default_suite(self) -> ExperimentInfo {
        ExperimentInfo {
            default_suite: false,
            ..self
        }
    }

    /// Sets `ladder`: the result joins the cost ladder.
    pub const fn ladder(self) -> ExperimentInfo {
        ExperimentInfo {
            ladder: true,
            ..self
        }
    }

    /// Clears `counters_in_samples`: the perf groups are counted over the untimed batches
    /// after sampling, not around every timed sample.
    pub const fn counters_between_samples(self) -> ExperimentInfo {
        ExperimentInfo {
            counters_in_samples: false,
            ..self
        }
    }

    /// Sets `work_dir`: the experiment works on files in a private directory under `--dir`.
    pub const fn work_dir(self) -> ExperimentInfo {
        ExperimentInfo {
            work_dir: true,
            ..self
        }
    }

    /// Clears `enters_kernel`: the timed operation stays in user space.
    pub const fn user_space(self) -> ExperimentInfo {
        ExperimentInfo {
            enters_kernel: false,
            ..self
        }
    }

    /// Sets `expectations`.
    pub const fn expectations(
        self,
        expectations: fn(&Params) -> Vec<Expectation>,
    ) -> ExperimentInfo {
        ExperimentInfo {
            expectations,
            ..self
        }
    }

    /// Sets `preflight`.
    pub const fn preflight(self, preflight: Preflight) -> ExperimentInfo {
        ExperimentInfo {
            preflight: Some(preflight),
            ..self
        }
    }

    /// Sets `batch`.
    pub const fn batch(self, batch: Batch) -> ExperimentInfo {
        ExperimentInfo { batch, ..self }
    }

    /// Sets `sweep`.
    pub const fn sweep(
        self,
        sweep: &'static [(&'static str, &'static [&'static str])],
    ) -> ExperimentInfo {
        ExperimentInfo { sweep, ..self }
    }

    /// Sets `quick_params`.
    pub const fn quick_params(
        self,
        quick_params: &'static [(&'static str, &'static str)],
    ) -> ExperimentInfo {
        ExperimentInfo {
            quick_params,
            ..self
        }
    }
}

//! The host's kernel phases: samples taken while the host made entering the kernel dearer.
//!
//! On a VM the cost of entering the kernel can switch between levels for seconds at a time,
//! with the CPU's own speed unchanged (docs/measurement.md §5: on the AMD EPYC VM a null call
//! took about 170 ns or about 250 ns, and every kernel-bound figure moved with it). The kernel
//! canary timed after every sample tells the two apart: its fast level in a configuration is
//! the low decile of its readings over all the configuration's processes, and a sample whose
//! canary took [`KERNEL_SLOW`] times that or longer was taken in a slow phase. Such samples
//! are flagged, never dropped: [`KernelPhase::median_shift`] says how far the figure would
//! move without them. A run slow from its first sample to its last has no fast level to be
//! told from; the run's kernel canary against another run's says that (`KernelCanaries`).

use serde::Serialize;

use super::kernel_call;
use crate::analysis::processes::unstable;
use crate::analysis::stats::{median, percentile};
use crate::model::Sample;

/// A kernel canary this many times its configuration's fast level or slower was read in a
/// slow phase. On the AMD EPYC VM a steady process's null calls took 170–195 ns with a tail
/// to about 230, a slow phase's 215–290 ns, over a fast level of about 170: the bound parts
/// most of them, and the steady tail above it moves no median (docs/measurement.md §5).
pub const KERNEL_SLOW: f64 = 1.2;

/// The percentile of a configuration's kernel canaries that stands for its fast level.
const FAST_LEVEL: f64 = 10.0;

/// A median that moves this much or more without the slow phase's samples is worth a note.
pub const NOTABLE_SHIFT: f64 = 0.02;

/// The fewest samples left a median over the steady ones needs.
const FEWEST_STEADY: usize = 5;

/// One configuration's kernel phases over its processes' samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelPhase {
    /// The fast level: the low decile of the kernel canaries, ns per call.
    pub fast_ns: f64,
    /// Samples that read a kernel canary.
    pub samples: usize,
    /// Of them, those whose canary took [`KERNEL_SLOW`] times the fast level or longer.
    pub slow_samples: usize,
    /// How far the median over the samples moves without the slow ones, relative (`None`
    /// when none is slow, fewer than five would remain, or the processes' medians differ 2×).
    pub median_shift: Option<f64>,
}

impl KernelPhase {
    /// Whether the median moves [`NOTABLE_SHIFT`] or more without the slow phase's samples. A
    /// steady host's own tail lies above the bound too (a tenth of the samples or so on the
    /// AMD EPYC VM) but moves no median.
    pub fn moves_figure(&self) -> bool {
        self.median_shift.is_some_and(|s| s.abs() >= NOTABLE_SHIFT)
    }
}

/// Whether the processes' own medians differ by more than the unstable bound
/// (`processes::UNSTABLE_FACTOR`, 2×): more than a kernel phase moves a figure (1.2–1.5× here),
/// so they differ for reasons of their own (fs.create's directory grows from one process to
/// the next), and a median without the slow phase's samples would credit the host with those.
fn processes_unstable(processes: &[&[Sample]]) -> bool {
    let medians: Vec<f64> = processes
        .iter()
        .filter_map(|p| median(&p.iter().map(|s| s.ns_per_op).collect::<Vec<_>>()))
        .collect();
    unstable(&medians)
}

/// The kernel phases of `processes` (each the samples of one of a configuration's
/// processes); `None` when no sample read a kernel canary.
pub fn of(processes: &[&[Sample]]) -> Option<KernelPhase> {
    let read: Vec<(f64, f64)> = processes
        .iter()
        .flat_map(|p| p.iter())
        .filter_map(|s| Some((s.ns_per_op, kernel_call(s)?)))
        .collect();
    let mut calls: Vec<f64> = read.iter().map(|&(_, k)| k).collect();
    if calls.is_empty() {
        return None;
    }
    calls.sort_by(f64::total_cmp);
    let fast_ns = percentile(&calls, FAST_LEVEL);
    let bound = KERNEL_SLOW * fast_ns;
    let all: Vec<f64> = read.iter().map(|&(v, _)| v).collect();
    let steady: Vec<f64> = read
        .iter()
        .filter(|&&(_, k)| k < bound)
        .map(|&(v, _)| v)
        .collect();
    let slow_samples = all.len() - steady.len();
    let median_shift = match (median(&all), median(&steady)) {
        (Some(a), Some(s))
            if slow_samples > 0
                && steady.len() >= FEWEST_STEADY
                && a > 0.0
                && !processes_unstable(processes) =>
        {
            Some(s / a - 1.0)
        }
        _ => None,
    };
    Some(KernelPhase {
        fast_ns,
        samples: all.len(),
        slow_samples,
        median_shift,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::host::KERNEL_CANARY;
    use crate::model::{CounterValue, ExperimentResult};

    /// A process of samples (figure, kernel canary).
    fn process(samples: &[(f64, f64)]) -> Vec<Sample> {
        let values: Vec<f64> = samples.iter().map(|s| s.0).collect();
        let mut r = ExperimentResult::from_values("x.y", &[], &values, 10);
        for (s, &(_, call)) in r.samples.iter_mut().zip(samples) {
            let value = CounterValue {
                value: Some(call),
                raw: call as u64,
                enabled_ns: 0,
                running_ns: 0,
            };
            s.counters.insert(KERNEL_CANARY.into(), value);
        }
        r.samples
    }

    #[test]
    fn a_process_in_the_slow_phase_is_flagged_and_its_shift_measured() {
        // Two fast processes (null call 170 ns, figure 165) and one slow (260 ns, 210).
        let fast = process(&[(165.0, 170.0); 10]);
        let slow = process(&[(210.0, 260.0); 10]);
        let phase = of(&[&fast, &fast, &slow]).unwrap();
        assert_eq!(phase.fast_ns, 170.0);
        assert_eq!((phase.samples, phase.slow_samples), (30, 10));
        // All 30 samples' median is 165 (20 of 30 at 165), and so is the steady one's: the
        // figure does not move. With two slow processes of three it does.
        assert_eq!(phase.median_shift, Some(0.0));
        assert!(!phase.moves_figure());
        let phase = of(&[&fast, &slow, &slow]).unwrap();
        assert_eq!(phase.slow_samples, 20);
        let shift = phase.median_shift.unwrap();
        assert!((shift - (165.0 / 210.0 - 1.0)).abs() < 1e-12, "{shift}");
        assert!(phase.moves_figure());
    }

    #[test]
    fn a_steady_host_flags_nothing() {
        let a = process(&[
            (100.0, 170.0),
            (101.0, 175.0),
            (99.0, 190.0),
            (100.0, 180.0),
        ]);
        let phase = of(&[&a, &a]).unwrap();
        assert_eq!(phase.slow_samples, 0);
        assert_eq!(phase.median_shift, None);
        assert!(!phase.moves_figure());
    }

    #[test]
    fn too_few_steady_samples_give_no_shift_and_no_canary_gives_none() {
        let fast = process(&[(165.0, 170.0); 3]);
        let slow = process(&[(210.0, 260.0); 30]);
        let phase = of(&[&fast, &slow]).unwrap();
        // The low decile of 33 readings is a slow one: nothing is told apart.
        assert_eq!(phase.slow_samples, 0);
        // Four steady samples of twenty are told apart, but too few for a median.
        let few = process(&[(165.0, 170.0); 4]);
        let phase = of(&[&few, &process(&[(210.0, 260.0); 16])]).unwrap();
        assert_eq!((phase.slow_samples, phase.median_shift), (16, None));
        let none = ExperimentResult::from_values("x.y", &[], &[1.0, 2.0], 10).samples;
        assert_eq!(of(&[&none]), None);
    }

    #[test]
    fn processes_2x_apart_for_their_own_reasons_get_no_shift() {
        // A process 3x slower than the others, its null calls in the slow phase too: the
        // slow phase is told, but the median's move is not the host's to claim.
        let fast = process(&[(100.0, 170.0); 10]);
        let grown = process(&[(300.0, 260.0); 10]);
        let phase = of(&[&fast, &grown, &grown]).unwrap();
        assert_eq!((phase.slow_samples, phase.median_shift), (20, None));
    }
}

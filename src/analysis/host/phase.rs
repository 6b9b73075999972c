//! The host's kernel phases: samples taken while the host made entering the kernel dearer.
//!
//! On a VM the cost of entering the kernel can switch between levels for seconds at a time,
//! with the CPU's own speed unchanged (docs/measurement.md §5: on the AMD EPYC VM a null call
//! took about 170 ns or about 250 ns, and every kernel-bound figure moved with it). The kernel
//! canary timed after every sample tells the two apart: its fast level in a configuration is
//! the low decile of its readings over all the configuration's processes, and a sample whose
//! canary took [`KERNEL_SLOW`] times that or longer was taken in a slow phase.
//!
//! Where those samples come in phases of the host — a slow one followed by slow ones, a
//! quarter of the samples or more steady — the figures leave them out
//! ([`leave_out`]): every figure of the configuration (its median, its interval, the medians
//! later runs are floored by, `compare`) is made of the steady samples, and
//! [`KernelPhase::median_shift`] says how far the median moved. Slow canaries scattered among
//! steady ones are the experiment's own doing (an fsync's wake) or noise: they stay in,
//! flagged, and the shift says what leaving them out would change. A run slow from its first
//! sample to its last has no fast level to be told from; the run's kernel canary against
//! another run's says that (`KernelCanaries`, `slow_against_earlier`), and later runs leave it
//! out of the spread that floors their intervals (`slow_runs`).

use serde::Serialize;

use super::kernel_call;
use crate::analysis::processes::unstable;
use crate::analysis::stats::{median, percentile};
use crate::model::{ExperimentResult, Sample};

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
    /// Whether the slow samples came in phases of the host: a slow one followed by slow ones
    /// ([`PHASE_PERSISTENCE`]), with at least [`STEADY_SHARE`] of the samples steady. A slow canary the experiment's own work causes after
    /// every sample comes scattered instead.
    pub in_phases: bool,
    /// How many of them the figures leave out: all but those of processes with too few
    /// steady samples to stand on (0 where they are not left out; `analysis::pool` counts).
    pub left_out_samples: usize,
    /// Of the processes, those left out whole: taken (almost) wholly in a slow phase, with
    /// enough others standing without them (`kept`; `analysis::pool` counts).
    pub left_out_processes: usize,
    /// Whether the configuration's figures leave them out: in phases, and of an experiment whose
    /// figures move with them alone (`PhaseBound`; `analysis::pool` decides; `false` from
    /// [`of`]).
    pub left_out: bool,
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

/// A sample after a slow one must be this much likelier to be slow than one after a steady
/// one (lag one, within a process) for the slow samples to count as phases of the host. A host
/// phase lasts seconds, tens of samples in a row (0.9 and more in the windows of
/// docs/measurement.md §5); a slow canary the experiment's own work causes (an fsync's wake)
/// falls after one sample as after another (near 0).
const PHASE_PERSISTENCE: f64 = 0.5;

/// The least share of a configuration's samples that must be steady for its slow phases to be
/// left out: a fast level held for less is a dip, no level to measure at. In a window of
/// 2026-12-06 (docs/measurement.md §5) two runs spent 55–80% of their samples in a slow phase,
/// their steady samples at the other runs' level; a half would have kept those phases in.
pub(super) const STEADY_SHARE: f64 = 0.25;

/// The fewest slow samples that follow another sample of their process needed to tell phases
/// from scattered slow canaries.
const FEWEST_TO_TELL: usize = 3;

/// Each sample of each process: `None` when it read no kernel canary, else whether it was taken
/// in a slow phase (its canary at `bound` or slower).
fn flags(processes: &[&[Sample]], bound: f64) -> Vec<Vec<Option<bool>>> {
    processes
        .iter()
        .map(|p| {
            p.iter()
                .map(|s| kernel_call(s).map(|k| k >= bound))
                .collect()
        })
        .collect()
}

/// Whether the slow samples come in phases: after a slow sample of a process its next is
/// [`PHASE_PERSISTENCE`] likelier to be slow than after a steady one.
fn persistent(flags: &[Vec<Option<bool>>]) -> bool {
    let (mut after_slow, mut slow_after_slow, mut after_steady, mut slow_after_steady) =
        (0usize, 0usize, 0usize, 0usize);
    for process in flags {
        for pair in process.windows(2) {
            let (Some(before), Some(now)) = (pair[0], pair[1]) else {
                continue;
            };
            if before {
                after_slow += 1;
                slow_after_slow += usize::from(now);
            } else {
                after_steady += 1;
                slow_after_steady += usize::from(now);
            }
        }
    }
    let share = |k: usize, n: usize| if n == 0 { 0.0 } else { k as f64 / n as f64 };
    after_slow >= FEWEST_TO_TELL
        && share(slow_after_slow, after_slow) - share(slow_after_steady, after_steady)
            >= PHASE_PERSISTENCE
}

/// The fewest processes that must stand on steady samples of their own for a process taken
/// (almost) wholly in a slow phase to be left out whole: with one, nothing says whether the
/// steady level is the configuration's or the one process's. Two give an interval, wide (t
/// with one degree of freedom), and the adaptive plan adds processes to narrow it. Three
/// would leave in the slow processes of a run that began in a phase (2026-12-07,
/// docs/measurement.md §5: `syscall.stat entry=call`'s run 1, four of six processes at 1.30–
/// 1.35 µs with null calls of 284–331 ns, two at 1.07 µs with 201–213 ns, as in the other runs).
const FEWEST_STANDING: usize = 2;

/// Which samples of each process the figures count when the slow phases are left out: the
/// steady ones (and those that read no canary), in every process that has
/// [`FEWEST_STEADY`] steady samples or more. A process with fewer, taken mostly in a slow
/// phase (more slow samples than steady), is left out whole where [`FEWEST_STANDING`] others
/// stand without it: on a VM a phase can last as long as a process does, and a process wholly
/// in it is a slow phase, not a process of its own (2026-12-07, docs/measurement.md §5: half
/// of ctxswitch.pipe's and open_close's processes 20–35% slower, each with its null call as
/// much slower). Otherwise it keeps all of its samples, so that every process that measured
/// stays one of the configuration's, its median beside the others'.
fn kept(flags: &[Vec<Option<bool>>]) -> Vec<Vec<bool>> {
    let count =
        |process: &[Option<bool>], slow: bool| process.iter().filter(|f| **f == Some(slow)).count();
    let wholly_slow = |process: &[Option<bool>]| {
        let steady = count(process, false);
        steady < FEWEST_STEADY && count(process, true) > steady
    };
    // A process that measured nothing, or read no canary, stands for nothing.
    let standing = flags
        .iter()
        .filter(|p| count(p, false) > 0 && !wholly_slow(p))
        .count();
    flags
        .iter()
        .map(|process| {
            if count(process, false) >= FEWEST_STEADY {
                process.iter().map(|f| *f != Some(true)).collect()
            } else if wholly_slow(process) && standing >= FEWEST_STANDING {
                vec![false; process.len()]
            } else {
                vec![true; process.len()]
            }
        })
        .collect()
}

/// The kernel phases of `processes`, and which samples the figures count where the slow phases
/// are left out (`None` where they are not).
fn assess(processes: &[&[Sample]]) -> Option<(KernelPhase, Option<Vec<Vec<bool>>>)> {
    let mut calls: Vec<f64> = processes
        .iter()
        .flat_map(|p| p.iter())
        .filter_map(kernel_call)
        .collect();
    if calls.is_empty() {
        return None;
    }
    calls.sort_by(f64::total_cmp);
    let fast_ns = percentile(&calls, FAST_LEVEL);
    let flags = flags(processes, KERNEL_SLOW * fast_ns);
    let read: Vec<(f64, bool)> = processes
        .iter()
        .zip(&flags)
        .flat_map(|(p, f)| p.iter().zip(f))
        .filter_map(|(s, f)| Some((s.ns_per_op, (*f)?)))
        .collect();
    let all: Vec<f64> = read.iter().map(|&(v, _)| v).collect();
    let steady: Vec<f64> = read.iter().filter(|r| !r.1).map(|&(v, _)| v).collect();
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
    let held = steady.len() as f64 >= STEADY_SHARE * all.len() as f64;
    let masks = (median_shift.is_some() && held && persistent(&flags)).then(|| kept(&flags));
    let phase = KernelPhase {
        fast_ns,
        samples: all.len(),
        slow_samples,
        median_shift,
        in_phases: masks.is_some(),
        left_out_samples: 0,
        left_out_processes: 0,
        left_out: false,
    };
    Some((phase, masks))
}

/// The kernel phases of `processes` (each the samples of one of a configuration's
/// processes); `None` when no sample read a kernel canary.
pub fn of(processes: &[&[Sample]]) -> Option<KernelPhase> {
    assess(processes).map(|(phase, _)| phase)
}

/// Whether an experiment's figures move with the host's kernel phases and with nothing of its
/// own there: its timed operation enters the kernel (a system call, a page fault, a switch)
/// and leaves no work in it behind (the writeback and journal of files it wrote, which can
/// slow its kernel canaries in phases of their own). Only such an experiment's slow phases
/// are left out: one that stays in user space is not moved by them, and leaving its
/// processes out would lose data for nothing. The experiment layer knows; `analysis` is told.
pub type PhaseBound = fn(&str) -> bool;

/// The results of one configuration's processes as its figures count them: where the slow
/// kernel phases came in phases ([`KernelPhase::in_phases`]) and the experiment's figures move
/// with them alone (`phase_bound`), copies without the samples taken in them (a process
/// with too few steady samples keeps all: `kept`); `None` where every sample counts, and
/// under a user-mode emulator (qemu-user), whose canary times the emulator.
pub fn leave_out(
    group: &[&ExperimentResult],
    phase_bound: PhaseBound,
) -> Option<Vec<ExperimentResult>> {
    // Under a user-mode emulator the canary times the emulator's own work, not the host's
    // kernel entry: nothing is told from it.
    let emulated = group.iter().any(|r| r.emulation.is_some());
    if emulated || !group.first().is_some_and(|r| phase_bound(&r.experiment)) {
        return None;
    }
    let processes: Vec<&[Sample]> = group.iter().map(|r| r.samples.as_slice()).collect();
    let (_, masks) = assess(&processes)?;
    let masks = masks?;
    let steady = group.iter().zip(masks).map(|(r, mask)| {
        let mut r = (*r).clone();
        let mut keep = mask.into_iter();
        r.samples.retain(|_| keep.next().unwrap_or(true));
        r
    });
    Some(steady.collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::host::{CANARY, KERNEL_CANARY};
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
            // The CPU canary, steady (5 µs) throughout.
            let cpu = CounterValue {
                value: Some(5000.0),
                raw: 5000,
                ..value
            };
            s.counters.insert(CANARY.into(), cpu);
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

    /// A process of `n` samples at 165 ns with a null call of 170 ns, those at the `slow`
    /// indices at 210 ns with a null call of 260 ns (a slow kernel phase).
    pub(crate) fn with_slow(n: usize, slow: &[usize]) -> Vec<Sample> {
        let samples: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                if slow.contains(&i) {
                    (210.0, 260.0)
                } else {
                    (165.0, 170.0)
                }
            })
            .collect();
        process(&samples)
    }

    /// Every experiment's figures move with the kernel phases alone (`PhaseBound`).
    fn phase_bound(_: &str) -> bool {
        true
    }

    fn results(processes: &[Vec<Sample>]) -> Vec<ExperimentResult> {
        processes
            .iter()
            .map(|samples| {
                let mut r = ExperimentResult::from_values("x.y", &[], &[1.0], 10);
                r.samples.clone_from(samples);
                r
            })
            .collect()
    }

    #[test]
    fn a_phase_of_the_host_is_left_out_of_the_counted_samples() {
        // The second process's samples 5..25 in a slow phase, one run of them.
        let phased: Vec<usize> = (5..25).collect();
        let processes = [
            with_slow(40, &[]),
            with_slow(40, &phased),
            with_slow(40, &[]),
        ];
        let refs: Vec<&[Sample]> = processes.iter().map(Vec::as_slice).collect();
        let phase = of(&refs).unwrap();
        assert_eq!(phase.slow_samples, 20);
        assert!(phase.in_phases);
        let all = results(&processes);
        let group: Vec<&ExperimentResult> = all.iter().collect();
        // An experiment that leaves work in the kernel (files written back) keeps them, and
        // so does a run under a user-mode emulator.
        assert!(leave_out(&group, |_| false).is_none());
        let mut emulated = all.clone();
        emulated[0].emulation = Some("qemu-aarch64".into());
        assert!(leave_out(&emulated.iter().collect::<Vec<_>>(), phase_bound).is_none());
        let steady = leave_out(&group, phase_bound).unwrap();
        let counts: Vec<usize> = steady.iter().map(|r| r.samples.len()).collect();
        assert_eq!(counts, [40, 20, 40]);
        assert!(
            steady
                .iter()
                .flat_map(|r| &r.samples)
                .all(|s| s.ns_per_op == 165.0)
        );
    }

    #[test]
    fn scattered_slow_canaries_stay_in() {
        // Every fourth sample slow, in every process: the experiment's own wake, not a phase.
        let every_fourth: Vec<usize> = (0..40).step_by(4).collect();
        let processes = [with_slow(40, &every_fourth), with_slow(40, &every_fourth)];
        let refs: Vec<&[Sample]> = processes.iter().map(Vec::as_slice).collect();
        let phase = of(&refs).unwrap();
        assert_eq!(phase.slow_samples, 20);
        assert!(!phase.in_phases);
        let all = results(&processes);
        assert!(leave_out(&all.iter().collect::<Vec<_>>(), phase_bound).is_none());
    }

    #[test]
    fn a_process_all_in_a_phase_stays_whole_and_a_fleeting_fast_level_is_no_level() {
        let whole: Vec<usize> = (0..30).collect();
        let one = [
            with_slow(30, &[]),
            with_slow(30, &whole),
            with_slow(30, &whole),
        ];
        let all = results(&one);
        let steady = leave_out(&all.iter().collect::<Vec<_>>(), phase_bound).unwrap();
        let counts: Vec<usize> = steady.iter().map(|r| r.samples.len()).collect();
        // Two processes have no steady sample to stand on, and one is too few to stand for
        // the configuration without them: they keep all of their own.
        assert_eq!(counts, [30, 30, 30]);
        // A process that measured nothing stands for nothing.
        let empty = [with_slow(30, &[]), with_slow(30, &whole), with_slow(0, &[])];
        let all = results(&empty);
        let steady = leave_out(&all.iter().collect::<Vec<_>>(), phase_bound).unwrap();
        let counts: Vec<usize> = steady.iter().map(|r| r.samples.len()).collect();
        assert_eq!(counts, [30, 30, 0]);
        // With two standing without it, one is left out whole: a slow phase as long as a
        // process. One slow for most of its samples but with five steady keeps those five.
        let mostly: Vec<usize> = (0..25).collect();
        let four = [
            with_slow(30, &[]),
            with_slow(30, &whole),
            with_slow(30, &mostly),
            with_slow(30, &[]),
        ];
        let all = results(&four);
        let steady = leave_out(&all.iter().collect::<Vec<_>>(), phase_bound).unwrap();
        let counts: Vec<usize> = steady.iter().map(|r| r.samples.len()).collect();
        assert_eq!(counts, [30, 0, 5, 30]);
        // Two processes of three slow for 24 of their 30 samples: more than half the samples
        // slow, but the steady ones (42 of 90) are a level held, and the slow ones are left
        // out.
        let most: Vec<usize> = (0..24).collect();
        let two = [
            with_slow(30, &[]),
            with_slow(30, &most),
            with_slow(30, &most),
        ];
        let refs: Vec<&[Sample]> = two.iter().map(Vec::as_slice).collect();
        let phase = of(&refs).unwrap();
        assert_eq!(phase.slow_samples, 48);
        assert!(phase.in_phases);
        // Four of five: a fifth steady is a dip, not a level; flagged, kept.
        let four = [
            with_slow(30, &[]),
            with_slow(30, &whole),
            with_slow(30, &whole),
            with_slow(30, &whole),
            with_slow(30, &whole),
        ];
        let refs: Vec<&[Sample]> = four.iter().map(Vec::as_slice).collect();
        let phase = of(&refs).unwrap();
        assert_eq!(phase.slow_samples, 120);
        assert!(!phase.in_phases);
        // Short processes (six samples, as pagefault.anon's): one in a phase for half its
        // samples has too few steady ones to stand on and keeps all; those all steady too.
        let short = [
            with_slow(6, &[]),
            with_slow(6, &[1, 2, 3]),
            with_slow(6, &[]),
            with_slow(6, &[]),
        ];
        let all = results(&short);
        let steady = leave_out(&all.iter().collect::<Vec<_>>(), phase_bound).unwrap();
        let counts: Vec<usize> = steady.iter().map(|r| r.samples.len()).collect();
        assert_eq!(counts, [6, 6, 6, 6]);
        // One process alone, slow for its last ten samples: its thirty steady ones count.
        let tail: Vec<usize> = (30..40).collect();
        let alone = results(&[with_slow(40, &tail)]);
        let steady = leave_out(&alone.iter().collect::<Vec<_>>(), phase_bound).unwrap();
        assert_eq!(steady[0].samples.len(), 30);
    }
}

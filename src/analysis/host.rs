//! What the host did during a configuration's timed samples, from the readings every sample
//! carries (`model::host`): how much time the hypervisor stole and during how many samples,
//! the canary's typical time and how often it ran slow, the kernel canary's typical time (a
//! call into the kernel that does no work), how far it moved between the processes and which
//! samples it says were taken in a slow kernel phase (`phase`), and how far the figure's
//! median moves without the samples so flagged. Samples are flagged, never dropped: the shift
//! says what dropping them would change. Pure: computed from stored samples.

use serde::Serialize;

mod phase;

#[cfg(test)]
pub(crate) use phase::tests::with_slow as phased_samples;
pub use phase::{KERNEL_SLOW, KernelPhase, NOTABLE_SHIFT, PhaseBound, leave_out, of as phases};

use super::stats::{median, spread_ratio};
use crate::model::host::{CANARY, KERNEL_CANARY, STEAL};
use crate::model::{ExperimentResult, Run, Sample};

/// A canary this many times its result's median or slower ran on a slow host.
pub const SLOW_CANARY: f64 = 1.25;

/// Processes whose kernel canaries lie this far apart (max/min − 1) or more ran while the host
/// changed the cost of entering the kernel: on a quiet host they agree within a few percent.
pub const KERNEL_SPREAD: f64 = 0.10;

/// The host's figures over one configuration's samples (one result or several processes').
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFigures {
    /// Samples that carry a canary.
    pub samples: usize,
    /// The canary's median time over those samples, in ns.
    pub canary_median_ns: f64,
    /// Samples whose canary took [`SLOW_CANARY`] times its process's median or longer.
    pub slow_canaries: usize,
    /// Samples during which the hypervisor stole time (`None`: the system does not say).
    pub stolen_samples: Option<usize>,
    /// The stolen time in all, in ns.
    pub steal_ns: Option<f64>,
    /// How far each process's median moves without its flagged samples (stolen, or with a
    /// slow canary), relative, averaged over the processes; `None` when none is flagged or
    /// too few would remain.
    pub median_shift: Option<f64>,
    /// The kernel canary's median time per call over the samples, in ns (`None`: not read,
    /// as on Windows and in runs stored before oslab read it).
    pub kernel_canary_median_ns: Option<f64>,
    /// How far the processes' own kernel canary medians lie apart, max/min − 1 (`None` with
    /// fewer than two processes that read it): a host that made entering the kernel dearer
    /// for some processes than for others.
    pub kernel_canary_spread: Option<f64>,
    /// The samples taken while the host made entering the kernel dearer (`phase`), and how far
    /// the median moves without them (`None`: no sample read a kernel canary).
    pub kernel_phase: Option<KernelPhase>,
}

impl HostFigures {
    /// Samples flagged for a slow canary or stolen time (a sample can be both: counted once
    /// in each).
    pub fn flagged(&self) -> usize {
        self.slow_canaries + self.stolen_samples.unwrap_or(0)
    }

    /// Whether the host did anything worth a note: time stolen, slow canaries in more than
    /// 2% of the samples, or a median that moves 2% or more without the samples taken in a
    /// slow kernel phase ([`KernelPhase::moves_figure`]). Processes whose kernel canaries lie
    /// [`KERNEL_SPREAD`] apart are not enough: a steady host's did in runs whose figures
    /// agreed within 1%.
    pub fn notable(&self) -> bool {
        self.steal_ns.is_some_and(|s| s > 0.0)
            || self.slow_canaries * 50 > self.samples
            || self.kernel_phase.is_some_and(|k| k.moves_figure())
    }
}

/// One sample's host readings: (canary ns, stolen ns if read).
fn readings(s: &Sample) -> Option<(f64, Option<f64>)> {
    let canary = s.counters.get(CANARY)?.value?;
    let steal = s.counters.get(STEAL).and_then(|v| v.value);
    Some((canary, steal))
}

/// The figures over `processes` (each the samples of one of a configuration's processes);
/// `None` when no sample carries a canary (a run stored before oslab read the host).
pub fn figures(processes: &[&[Sample]]) -> Option<HostFigures> {
    let mut canaries = Vec::new();
    let (mut slow, mut stolen, mut steal_ns, mut steal_read) = (0, 0, 0.0, false);
    let mut shifts = Vec::new();
    for samples in processes {
        let read: Vec<(&Sample, (f64, Option<f64>))> = samples
            .iter()
            .filter_map(|s| readings(s).map(|h| (s, h)))
            .collect();
        let own: Vec<f64> = read.iter().map(|(_, (c, _))| *c).collect();
        let Some(own_median) = median(&own) else {
            continue;
        };
        canaries.extend_from_slice(&own);
        let mut kept = Vec::new();
        for (s, (canary, steal)) in &read {
            let is_slow = *canary >= SLOW_CANARY * own_median;
            let is_stolen = steal.is_some_and(|v| v > 0.0);
            slow += usize::from(is_slow);
            stolen += usize::from(is_stolen);
            if let Some(v) = steal {
                steal_read = true;
                steal_ns += v;
            }
            if !is_slow && !is_stolen {
                kept.push(s.ns_per_op);
            }
        }
        let all: Vec<f64> = read.iter().map(|(s, _)| s.ns_per_op).collect();
        if kept.len() < all.len()
            && kept.len() >= 3
            && let (Some(a), Some(k)) = (median(&all), median(&kept))
            && a > 0.0
        {
            shifts.push(k / a - 1.0);
        }
    }
    let canary_median_ns = median(&canaries)?;
    let (kernel_canary_median_ns, kernel_canary_spread) = kernel_figures(processes);
    Some(HostFigures {
        samples: canaries.len(),
        canary_median_ns,
        slow_canaries: slow,
        stolen_samples: steal_read.then_some(stolen),
        steal_ns: steal_read.then_some(steal_ns),
        median_shift: (!shifts.is_empty())
            .then(|| shifts.iter().sum::<f64>() / shifts.len() as f64),
        kernel_canary_median_ns,
        kernel_canary_spread,
        kernel_phase: phase::of(processes),
    })
}

/// The kernel canary's median over every sample of `processes`, and the spread of the
/// processes' own medians.
fn kernel_figures(processes: &[&[Sample]]) -> (Option<f64>, Option<f64>) {
    let mut all = Vec::new();
    let mut own_medians = Vec::new();
    for samples in processes {
        let own: Vec<f64> = samples.iter().filter_map(kernel_call).collect();
        if let Some(m) = median(&own) {
            own_medians.push(m);
        }
        all.extend(own);
    }
    (median(&all), spread_ratio(&own_medians))
}

/// One sample's kernel canary, ns per call, if it read one.
fn kernel_call(s: &Sample) -> Option<f64> {
    s.counters.get(KERNEL_CANARY)?.value
}

/// The figures of one result.
pub fn of_result(result: &ExperimentResult) -> Option<HostFigures> {
    figures(&[&result.samples])
}

/// The kernel canary of `results`: the median over every sample of theirs that read it, in
/// ns per call (`None`: none did).
pub fn kernel_canary_of<'a>(
    results: impl IntoIterator<Item = &'a ExperimentResult>,
) -> Option<f64> {
    let calls: Vec<f64> = results
        .into_iter()
        .flat_map(|r| &r.samples)
        .filter_map(kernel_call)
        .collect();
    median(&calls)
}

/// Two runs' kernel canaries, A's and B's, when both read one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelCanaries {
    pub a_ns: f64,
    pub b_ns: f64,
    /// Over one configuration's results: how far each side's median moves without its
    /// samples taken in a slow kernel phase ([`KernelPhase::median_shift`]); `None` over whole
    /// runs, and for a side with none such or too few others.
    pub a_steady_shift: Option<f64>,
    pub b_steady_shift: Option<f64>,
}

/// How far the median of `results` (one configuration's processes) would move without the
/// samples taken in a slow kernel phase, where its figures keep them (`None` where they leave
/// them out already: `KernelPhase::left_out`).
fn steady_shift(results: &[&ExperimentResult], left_out: bool) -> Option<f64> {
    let processes: Vec<&[Sample]> = results.iter().map(|r| r.samples.as_slice()).collect();
    phase::of(&processes)?.median_shift.filter(|_| !left_out)
}

impl KernelCanaries {
    /// Over two whole runs.
    pub fn of(a: &Run, b: &Run) -> Option<KernelCanaries> {
        Some(KernelCanaries {
            a_ns: kernel_canary_of(&a.results)?,
            b_ns: kernel_canary_of(&b.results)?,
            a_steady_shift: None,
            b_steady_shift: None,
        })
    }

    /// Over one configuration's results in each run; `left_out`: whether each side's figures
    /// leave out the samples of its slow kernel phases already (`leave_out`).
    pub fn of_results(
        a: &[&ExperimentResult],
        b: &[&ExperimentResult],
        left_out: (bool, bool),
    ) -> Option<KernelCanaries> {
        Some(KernelCanaries {
            a_ns: kernel_canary_of(a.iter().copied())?,
            b_ns: kernel_canary_of(b.iter().copied())?,
            a_steady_shift: steady_shift(a, left_out.0),
            b_steady_shift: steady_shift(b, left_out.1),
        })
    }

    /// B/A of a figure measured at `ratio`, each side's median moved by its steady shift: what
    /// the ratio would be without the samples either side took in a slow kernel phase (`None`
    /// when neither side has a shift).
    pub fn steady_ratio(&self, ratio: f64) -> Option<f64> {
        if self.a_steady_shift.is_none() && self.b_steady_shift.is_none() {
            return None;
        }
        let moved = |shift: Option<f64>| 1.0 + shift.unwrap_or(0.0);
        Some(ratio * moved(self.b_steady_shift) / moved(self.a_steady_shift))
    }

    /// Whether they lie [`KERNEL_SPREAD`] apart or more in the direction of `ratio` (B/A of a
    /// figure): the figure moved the way the cost of entering the kernel did.
    pub fn moved_with(&self, ratio: f64) -> bool {
        self.differ() && (ratio > 1.0) == (self.ratio() > 1.0)
    }

    /// B's against A's.
    pub fn ratio(&self) -> f64 {
        self.b_ns / self.a_ns
    }

    /// Whether they lie [`KERNEL_SPREAD`] apart or more.
    pub fn differ(&self) -> bool {
        spread_ratio(&[self.a_ns, self.b_ns]).is_some_and(|s| s >= KERNEL_SPREAD)
    }
}

/// How many times this machine's earlier runs' kernel canary a configuration's was in this
/// run, where that is [`KERNEL_SLOW`] or more: the run took the configuration in a slow kernel
/// phase of the host as long as its processes, which nothing inside the run can tell (its fast
/// level is its own slow one). `now`: the configuration's kernel canary in this run (the median
/// over its samples); `earlier`: each earlier run's. `None` without earlier runs, or when not
/// that much slower.
pub fn slow_against_earlier(now: f64, earlier: &[f64]) -> Option<f64> {
    let typical = median(earlier)?;
    let ratio = now / typical;
    (typical > 0.0 && ratio.is_finite() && ratio >= KERNEL_SLOW).then_some(ratio)
}

/// A configuration measured in a slow kernel phase of its host as long as its processes: its
/// kernel canary in the run and the median of this machine's earlier runs' of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlowRun {
    pub now_ns: f64,
    pub earlier_ns: f64,
}

impl SlowRun {
    /// Of `result` (a configuration's first process, which carries its
    /// `earlier_kernel_canaries`), whose figures' samples read `now_ns` as their kernel canary:
    /// [`slow_against_earlier`], for an experiment whose figures move with the kernel's phases
    /// alone (`phase_bound`) and not under an emulator; `None` otherwise.
    pub fn of(result: &ExperimentResult, now_ns: f64, phase_bound: PhaseBound) -> Option<SlowRun> {
        if !phase_bound(&result.experiment) || result.emulation.is_some() {
            return None;
        }
        let ratio = slow_against_earlier(now_ns, &result.earlier_kernel_canaries)?;
        Some(SlowRun {
            now_ns,
            earlier_ns: now_ns / ratio,
        })
    }

    /// How many times the earlier runs' canary this run's was.
    pub fn ratio(&self) -> f64 {
        self.now_ns / self.earlier_ns
    }
}

/// Which of a configuration's earlier runs sat in a slow kernel phase of the host from their
/// first sample to their last, beside `canaries`, each run's kernel canary (the median over the
/// samples its figures count; `None`: it read none): [`KERNEL_SLOW`] times the fastest earlier
/// run's or slower. Such a run's median is the host's slow level, which `run` tells when it
/// measures one (`slow_against_earlier`), not how far a rerun at the host's usual level moves:
/// the intervals later runs are floored by leave it out, as a run's figures leave out its
/// processes taken wholly in a slow phase (`leave_out`). None is when fewer than a quarter of
/// the runs that read a canary are steady: then no level is the usual one
/// (`phase::STEADY_SHARE`, as inside a run). A run that read none is never one.
pub fn slow_runs(canaries: &[Option<f64>]) -> Vec<bool> {
    let read = |c: &Option<f64>| c.filter(|c| *c > 0.0 && c.is_finite());
    let readings: Vec<f64> = canaries.iter().filter_map(read).collect();
    let none = vec![false; canaries.len()];
    let Some(fastest) = readings.iter().copied().reduce(f64::min) else {
        return none;
    };
    let slow = |c: f64| c >= KERNEL_SLOW * fastest;
    let steady = readings.iter().filter(|&&c| !slow(c)).count();
    if (steady as f64) < phase::STEADY_SHARE * readings.len() as f64 {
        return none;
    }
    canaries.iter().map(|c| read(c).is_some_and(slow)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_runs_wholly_in_a_slow_phase_are_told_from_the_usual_level() {
        // Verdicts window 15 (2026-12-07): the first run of size=4096 read its null call at
        // 283 ns, the four after it at 187-194 ns.
        let canaries = [Some(283.0), Some(194.0), Some(187.0), None, Some(190.0)];
        assert_eq!(slow_runs(&canaries), [true, false, false, false, false]);
        // One steady run of two is the usual level; none of five is no level at all, and
        // one of five (under a quarter) is a dip.
        assert_eq!(slow_runs(&[Some(283.0), Some(190.0)]), [true, false]);
        assert_eq!(slow_runs(&[Some(283.0); 5]), [false; 5]);
        let dip = [
            Some(170.0),
            Some(283.0),
            Some(280.0),
            Some(290.0),
            Some(285.0),
        ];
        assert_eq!(slow_runs(&dip), [false; 5]);
        // Within 1.2 times the fastest is steady; no canary read, nothing told.
        assert_eq!(slow_runs(&[Some(190.0), Some(227.0)]), [false, false]);
        assert_eq!(slow_runs(&[None, None]), [false, false]);
        assert_eq!(slow_runs(&[]), Vec::<bool>::new());
    }

    #[test]
    fn a_kernel_entry_slower_than_the_earlier_runs_is_told() {
        // The earlier runs' null calls 170-180 ns: 235 is 1.34 times their median (175).
        let ratio = slow_against_earlier(235.0, &[170.0, 175.0, 180.0]).unwrap();
        assert!((ratio - 235.0 / 175.0).abs() < 1e-12, "{ratio}");
        assert_eq!(slow_against_earlier(200.0, &[170.0, 175.0, 180.0]), None);
        assert_eq!(slow_against_earlier(235.0, &[]), None);
        assert_eq!(slow_against_earlier(235.0, &[0.0]), None);
    }

    #[test]
    fn a_slow_run_is_told_of_phase_bound_experiments_run_natively() {
        let mut r = ExperimentResult::from_values("syscall.x", &[], &[10.0], 10);
        r.earlier_kernel_canaries = vec![170.0, 175.0, 180.0];
        let bound: PhaseBound = |_| true;
        let slow = SlowRun::of(&r, 235.0, bound).unwrap();
        assert_eq!(slow.earlier_ns, 175.0);
        assert!((slow.ratio() - 235.0 / 175.0).abs() < 1e-12, "{slow:?}");
        assert_eq!(SlowRun::of(&r, 200.0, bound), None);
        assert_eq!(SlowRun::of(&r, 235.0, |_| false), None);
        r.emulation = Some("qemu-user".into());
        assert_eq!(SlowRun::of(&r, 235.0, bound), None);
    }
    use crate::model::CounterValue;

    fn value(v: f64) -> CounterValue {
        CounterValue {
            value: Some(v),
            raw: v as u64,
            enabled_ns: 0,
            running_ns: 0,
        }
    }

    fn result(samples: &[(f64, f64, Option<f64>)]) -> ExperimentResult {
        let values: Vec<f64> = samples.iter().map(|s| s.0).collect();
        let mut r = ExperimentResult::from_values("x.y", &[], &values, 10);
        for (s, &(_, canary, steal)) in r.samples.iter_mut().zip(samples) {
            s.counters.insert(CANARY.into(), value(canary));
            if let Some(steal) = steal {
                s.counters.insert(STEAL.into(), value(steal));
            }
        }
        r
    }

    #[test]
    fn flags_stolen_samples_and_slow_canaries_and_says_what_dropping_them_moves() {
        let r = result(&[
            (10.0, 5000.0, Some(0.0)),
            (10.0, 5100.0, Some(0.0)),
            (11.0, 4900.0, Some(0.0)),
            (30.0, 5000.0, Some(10e6)),
            (31.0, 9000.0, Some(0.0)),
            (10.5, 5050.0, Some(0.0)),
        ]);
        let f = of_result(&r).unwrap();
        assert_eq!(f.samples, 6);
        assert_eq!(f.canary_median_ns, 5025.0);
        assert_eq!(f.slow_canaries, 1);
        assert_eq!(f.stolen_samples, Some(1));
        assert_eq!(f.steal_ns, Some(10e6));
        assert_eq!(f.flagged(), 2);
        assert!(f.notable());
        // All: median of 10, 10, 10.5, 11, 30, 31 = 10.75; kept: 10, 10, 10.5, 11 = 10.25.
        let shift = f.median_shift.unwrap();
        assert!((shift - (10.25 / 10.75 - 1.0)).abs() < 1e-12, "{shift}");
    }

    #[test]
    fn a_quiet_host_is_not_notable_and_old_runs_have_no_figures() {
        let quiet = result(&[(10.0, 5000.0, Some(0.0)); 5]);
        let f = of_result(&quiet).unwrap();
        assert!(!f.notable());
        assert_eq!(f.median_shift, None);
        let unread = result(&[(10.0, 5000.0, None); 5]);
        assert_eq!(of_result(&unread).unwrap().stolen_samples, None);
        let old = ExperimentResult::from_values("x.y", &[], &[10.0, 11.0], 10);
        assert_eq!(of_result(&old), None);
        assert_eq!(of_result(&quiet).unwrap().kernel_canary_median_ns, None);
    }

    /// A process's samples, each figure 10 with its kernel canary (ns per call), or `figure`.
    fn with_kernel(calls: &[f64], figure: f64) -> ExperimentResult {
        let mut r = result(&vec![(figure, 5000.0, Some(0.0)); calls.len()]);
        for (s, &call) in r.samples.iter_mut().zip(calls) {
            s.counters.insert(KERNEL_CANARY.into(), value(call));
        }
        r
    }

    #[test]
    fn a_median_moved_by_a_slow_kernel_phase_is_notable() {
        let fast = with_kernel(&[164.0, 165.0, 163.0], 10.0);
        let slow = with_kernel(&[218.0, 220.0, 216.0], 10.0);
        let also_fast = with_kernel(&[166.0, 164.0, 165.0], 10.0);
        let f = figures(&[&fast.samples, &slow.samples, &also_fast.samples]).unwrap();
        assert_eq!(f.kernel_canary_median_ns, Some(165.0));
        let spread = f.kernel_canary_spread.unwrap();
        assert!((spread - (218.0 / 164.0 - 1.0)).abs() < 1e-12, "{spread}");
        // Apart, and three samples in a slow phase, but the figure did not move.
        assert_eq!(f.kernel_phase.unwrap().slow_samples, 3);
        assert!(!f.notable());
        let slower = with_kernel(&[218.0, 220.0, 216.0], 13.0);
        let s = &slower.samples;
        let moved = figures(&[&fast.samples, &also_fast.samples, s, s, s]).unwrap();
        assert!(moved.notable());
        let agreeing = figures(&[&fast.samples, &also_fast.samples]).unwrap();
        assert!(agreeing.kernel_canary_spread.unwrap() < KERNEL_SPREAD);
        assert!(!agreeing.notable());
        assert_eq!(of_result(&fast).unwrap().kernel_canary_spread, None);
    }

    #[test]
    fn a_ratio_without_the_slow_phase_moves_each_side_by_its_own_shift() {
        let fast = with_kernel(&[164.0, 165.0, 163.0], 10.0);
        let slow = with_kernel(&[218.0, 220.0, 216.0], 13.0);
        let a = [&fast, &fast, &fast];
        let b = [&fast, &fast, &slow, &slow, &slow];
        let k = KernelCanaries::of_results(&a, &b, (false, false)).unwrap();
        // A was steady throughout; B's median (13) is 10 without its slow-phase samples.
        assert_eq!(k.a_steady_shift, None);
        let shift = k.b_steady_shift.unwrap();
        assert!((shift - (10.0 / 13.0 - 1.0)).abs() < 1e-12, "{shift}");
        let steady = k.steady_ratio(1.3).unwrap();
        assert!((steady - 1.0).abs() < 1e-12, "{steady}");
        let steady_both = KernelCanaries::of_results(&a, &a, (false, false)).unwrap();
        assert_eq!(steady_both.steady_ratio(1.0), None);
    }
}

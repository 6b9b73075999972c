//! The sampling loop that runs inside a worker: size the batch, measure the empty loop, warm
//! up, then take samples until the median is known precisely enough or the budget is spent.
//!
//! - Batch sizing: the batch doubles (up to ×10 a step) until one sample lasts at least
//!   `1000 ×` the clock's resolution and the configured floor, so the timer's granularity and
//!   its read cost are a negligible part of every sample (divan and lmbench do the same).
//! - Loop overhead: the per-iteration cost of an empty loop of the same length is measured and
//!   subtracted for experiments that ask for it (lmbench's `l_overhead`).
//! - Adaptive stopping: once a minimum sampling time has passed, sampling stops when the 95%
//!   bootstrap confidence interval of the median has a half-width under `precision × median`
//!   (checked at growing intervals), or when the time budget is spent.

use serde::{Deserialize, Serialize};

use super::clock::Clock;
use super::counting::Counting;
use crate::analysis;
use crate::model::passes::Passes;
use crate::model::routine::{Partner, Routine, RoutineError};
use crate::model::{Calibration, ProbeCount, Rusage, Sample, StopReason};
use crate::platform::counters::CounterSet;
use crate::platform::rusage;

mod calibrate;
mod duet;
mod passes;
#[cfg(test)]
use calibrate::size_batch;
use calibrate::{calibrate, target_ns};
pub use duet::{Side, sample_duet};
use passes::{pass_baseline, pass_batch, settle_before_pass, take_pass};

/// How long and how precisely to sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerConfig {
    /// Target half-width of the 95% CI of the median, as a fraction of the median.
    pub precision: f64,
    /// Time allowed for sampling, seconds (batch sizing and warm-up come on top).
    pub budget_s: f64,
    /// Sampling lasts at least this long, seconds, even when the CI is already narrow: samples
    /// taken within a few milliseconds share one state of the machine (and of the host, in a
    /// VM), so their spread understates the noise a later run would see.
    #[serde(default)]
    pub min_time_s: f64,
    pub min_samples: usize,
    pub max_samples: usize,
    /// The shortest sample, nanoseconds, whatever the clock's resolution.
    pub min_sample_ns: f64,
    /// How long to warm up before the first sample, nanoseconds.
    pub warmup_ns: f64,
    /// Seed of the bootstrap used for the stopping rule.
    pub seed: u64,
    /// Take each sample's rusage from the sampling thread alone (RUSAGE_THREAD), not the
    /// process: the worker runs other copies of the routine on threads beside it
    /// (`--copy-mode threads`), whose faults and switches are theirs.
    #[serde(default)]
    pub own_thread: bool,
    /// Sample as timed passes instead (`model::passes`): each sample one pass that runs
    /// batches until its seconds have passed; no stopping rule.
    #[serde(default)]
    pub passes: Option<Passes>,
}

impl SamplerConfig {
    /// The defaults of `oslab run`: 1% precision within 5 s per experiment.
    pub fn standard() -> SamplerConfig {
        SamplerConfig {
            precision: 0.01,
            budget_s: 5.0,
            min_time_s: 0.6,
            min_samples: 20,
            max_samples: 5000,
            min_sample_ns: 2e6,
            warmup_ns: 50e6,
            seed: 0x05_1ab,
            own_thread: false,
            passes: None,
        }
    }

    /// What each of `processes` worker processes gets when they share one configuration's
    /// measurement: a share of the time budget and of the minimum time, and a looser
    /// precision, since the pooled median's within-process error shrinks with the square root
    /// of the number of processes. The warm-up stays: every process starts cold.
    pub fn per_process(&self, processes: u32) -> SamplerConfig {
        let n = f64::from(processes.max(1));
        SamplerConfig {
            precision: self.precision * n.sqrt(),
            budget_s: self.budget_s / n,
            min_time_s: self.min_time_s / n,
            min_samples: (self.min_samples as f64 / n).ceil().max(5.0) as usize,
            max_samples: (self.max_samples as f64 / n).ceil().max(5.0) as usize,
            ..self.clone()
        }
    }

    /// `--quick`: 5% precision within 0.7 s, so the default suite takes well under a minute.
    pub fn quick() -> SamplerConfig {
        SamplerConfig {
            precision: 0.05,
            budget_s: 0.7,
            min_time_s: 0.2,
            min_samples: 10,
            max_samples: 1000,
            min_sample_ns: 1e6,
            warmup_ns: 20e6,
            ..SamplerConfig::standard()
        }
    }
}

/// What the sampler reports as it goes.
pub enum Progress<'a> {
    Calibrated(&'a Calibration),
    Sample(&'a Sample),
}

/// Why sampling ended early: the routine failed, or what reports the samples could not pass
/// one on. The caller decides what the configuration's failure says.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error(transparent)]
    Routine(#[from] RoutineError),
    #[error("cannot pass a sample on: {0}")]
    Report(#[source] std::io::Error),
}

/// How sampling ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampled {
    pub stop_reason: StopReason,
    /// The batch size every sample used.
    pub ops_per_sample: u64,
}

/// Take samples of `routine` until the stopping rule says enough. `subtract_loop_overhead`:
/// the experiment asks for the empty loop's cost to be taken off each operation. `fixed_ops`:
/// the batch an experiment with `Batch::Fixed` asks for, instead of sizing one.
#[allow(clippy::too_many_arguments)]
pub fn sample(
    subtract_loop_overhead: bool,
    routine: &mut dyn Routine,
    fixed_ops: Option<u64>,
    clock: Clock,
    counters: &mut Counting,
    cpus: &[usize],
    cfg: &SamplerConfig,
    report: &mut dyn FnMut(Progress) -> std::io::Result<()>,
) -> Result<Sampled, SampleError> {
    let target_ns = target_ns(clock, cfg);
    let calibrated = calibrate(subtract_loop_overhead, routine, fixed_ops, clock, cpus, cfg)?;
    report(Progress::Calibrated(&calibrated.calibration)).map_err(SampleError::Report)?;
    let Calibration {
        ops_per_sample: ops,
        timer_overhead_ns,
        loop_overhead_ns,
        baseline_ns,
        ..
    } = calibrated.calibration;
    let subtract_ns = calibrated.subtract_ns;
    if let Some(passes) = cfg.passes {
        let batch = pass_batch(ops, target_ns, passes.seconds, routine.max_batch());
        let baseline_ns = pass_baseline(baseline_ns, routine.baseline_per_batch(), ops, batch);
        let subtract_ns = loop_overhead_ns.unwrap_or(0.0) + baseline_ns.unwrap_or(0.0);
        for _ in 0..passes.count {
            settle_before_pass(passes.seconds);
            routine.before_pass(passes.seconds)?;
            // Read after `before_pass`, which may start the pass's own partner.
            let partner = routine.partner();
            let sample = take_pass(
                routine,
                clock,
                counters,
                (batch, passes.seconds),
                (timer_overhead_ns, subtract_ns),
                (partner, own_usage(cfg)),
            )?;
            report(Progress::Sample(&sample)).map_err(SampleError::Report)?;
        }
        return Ok(Sampled {
            stop_reason: StopReason::Passes,
            ops_per_sample: ops,
        });
    }
    let partner = routine.partner();
    let sampling_start = clock.start();
    let mut values: Vec<f64> = Vec::new();
    let mut stopping = Stopping::new(cfg);
    loop {
        let sample = take_sample(
            routine,
            clock,
            counters,
            ops,
            (timer_overhead_ns, subtract_ns),
            (partner, own_usage(cfg)),
        )?;
        report(Progress::Sample(&sample)).map_err(SampleError::Report)?;
        values.push(sample.ns_per_op);
        let spent = clock.ns(sampling_start, clock.stop());
        if let Some(stop_reason) = stopping.check(&[&values], spent, cfg) {
            return Ok(Sampled {
                stop_reason,
                ops_per_sample: ops,
            });
        }
    }
}

/// The stopping rule, over the samples of one routine or of a duet's two (each side has the
/// whole configuration's budget, so a duet's time is theirs together).
struct Stopping {
    /// The sample count at which the precision is checked next (at growing intervals).
    next_check: usize,
}

impl Stopping {
    fn new(cfg: &SamplerConfig) -> Stopping {
        Stopping {
            next_check: cfg.min_samples.max(2),
        }
    }

    /// Why to stop after `spent_ns` of sampling that gave `sides`' values, if it is time.
    fn check(
        &mut self,
        sides: &[&[f64]],
        spent_ns: f64,
        cfg: &SamplerConfig,
    ) -> Option<StopReason> {
        let n = sides.iter().map(|v| v.len()).min().unwrap_or(0);
        if n >= cfg.max_samples {
            return Some(StopReason::MaxSamples);
        }
        let share = sides.len().max(1) as f64 * 1e9;
        if n >= self.next_check && spent_ns >= cfg.min_time_s * share {
            self.next_check = n + (n / 10).max(5);
            if sides.iter().all(|v| precise_enough(v, cfg)) {
                return Some(StopReason::Precision);
            }
        }
        (spent_ns >= cfg.budget_s * share && n >= cfg.min_samples.min(3))
            .then_some(StopReason::Budget)
    }
}

/// Where a sample's own rusage comes from: the process, or the sampling thread alone
/// (`SamplerConfig::own_thread`; the process where the system keeps no thread's usage, which
/// the planner refuses threads mode for).
fn own_usage(cfg: &SamplerConfig) -> fn() -> Rusage {
    if cfg.own_thread {
        || rusage::this_thread().unwrap_or_else(rusage::this_process)
    } else {
        rusage::this_process
    }
}

/// One timed batch of `ops` with the rusage of this process (or thread), its reaped children and the
/// partner, and the counters around it. Taken off its time: `timer_overhead_ns` once (the
/// timing's own cost), `subtract_ns` per operation (the empty loop, the baseline).
fn take_sample(
    routine: &mut dyn Routine,
    clock: Clock,
    counters: &mut Counting,
    ops: u64,
    overheads: (f64, f64),
    usage: (Option<Partner>, fn() -> Rusage),
) -> Result<Sample, RoutineError> {
    routine.prepare(ops)?;
    measured(counters, overheads, usage, || {
        let t0 = clock.start();
        routine.run(ops)?;
        let t1 = clock.stop();
        Ok((ops, clock.ns(t0, t1), 1))
    })
}

/// A sample of what `timed` does: it returns the operations it ran, their time and how many
/// timings that was (each timer read's overhead is taken off); the rusage (own, reaped
/// children's, the partner's) and counters are read around it.
fn measured(
    counters: &mut Counting,
    (timer_overhead_ns, subtract_ns): (f64, f64),
    (partner, own): (Option<Partner>, fn() -> Rusage),
    timed: impl FnOnce() -> Result<(u64, f64, u32), RoutineError>,
) -> Result<Sample, RoutineError> {
    let partner_rusage = || partner.and_then(|p| rusage::of_task(p.pid, p.tid));
    // The partner's usage is read from /proc, which allocates: outside this process's own
    // window, whose faults would otherwise be charged to the operation (one every two or
    // three samples: 0.012-0.08 faults a round trip across CPUs, where a batch holds 1-60).
    let partner0 = partner_rusage();
    let ru0 = own();
    let children0 = rusage::reaped_children();
    let c0 = counters.before();
    let (ops, elapsed_ns, timings) = timed()?;
    let mut c1 = counters.after();
    let children1 = rusage::reaped_children();
    let ru1 = own();
    let partner1 = partner_rusage();
    counters.read_host(&mut c1);

    let timed_ns = elapsed_ns - timer_overhead_ns * f64::from(timings);
    let ns_per_op = timed_ns / ops as f64 - subtract_ns;
    Ok(Sample {
        ops,
        elapsed_ns,
        ns_per_op,
        rusage: Rusage::delta(&ru0, &ru1),
        partner: partner0.zip(partner1).map(|(a, b)| Rusage::delta(&a, &b)),
        children: Some(Rusage::delta(&children0, &children1)).filter(|d| !d.is_idle()),
        counters: counters.delta(&c0, &c1),
    })
}

/// Batches run with the probe counters after sampling: three sized batches, or one whole pass
/// of an experiment with a fixed batch (a pass of the mmap lab takes seconds).
const PROBE_BATCHES: u64 = 3;

/// The most batches the probe counters run to reach a whole number of periods: a sample lasts
/// 1–2 ms or more, so at most a second or two of untimed work. A longer period (a 4 GiB file
/// read one page a time) keeps three batches, which seldom hold its call.
const MAX_PROBE_BATCHES: u64 = 1024;

/// The batches the probe counters count: one whole pass of a fixed batch; else three of the
/// samples' size, and more of it (the last one shorter) to a whole number of the routine's
/// `period`, so a call made once per period counts its exact share.
fn probe_batches(ops_per_sample: u64, fixed_batch: bool, period: Option<u64>) -> Vec<u64> {
    let ops = ops_per_sample.max(1);
    if fixed_batch {
        return vec![ops];
    }
    let mut total = PROBE_BATCHES * ops;
    if let Some(period) = period.filter(|&p| p > 1) {
        let whole = total.div_ceil(period).saturating_mul(period);
        if whole.div_ceil(ops) <= MAX_PROBE_BATCHES {
            total = whole;
        }
    }
    let mut out = vec![ops; (total / ops) as usize];
    if !total.is_multiple_of(ops) {
        out.push(total % ops);
    }
    out
}

/// Count the probe events (see `counters::PROBE_GROUPS`) over a few untimed batches of the
/// same size as the samples. Returns one count per event, summed over the batches; `value` has
/// what the counter reads count by themselves subtracted (`raw` is as read).
pub fn count_probes(
    routine: &mut dyn Routine,
    probes: &mut CounterSet,
    ops_per_sample: u64,
    fixed_batch: bool,
) -> Result<Vec<ProbeCount>, RoutineError> {
    // What the reads themselves count (the syscall probe sees its own read(2)s), over an
    // empty window: subtracted from every batch, so the figure is the routine's alone.
    let before = probes.read_before();
    let after = probes.read_after();
    let own_reads = probes.delta(&before, &after);

    let mut totals: Vec<ProbeCount> = Vec::new();
    for ops in probe_batches(ops_per_sample, fixed_batch, routine.period()) {
        routine.prepare(ops)?;
        let before = probes.read_before();
        routine.run(ops)?;
        let after = probes.read_after();
        for (name, mut c) in probes.delta(&before, &after) {
            if let Some(own) = own_reads.get(&name).and_then(|o| o.value) {
                c.value = c.value.map(|v| (v - own).max(0.0));
            }
            match totals.iter_mut().find(|p| p.name == name) {
                Some(total) => {
                    total.ops += ops;
                    total.count.value = total.count.value.zip(c.value).map(|(a, b)| a + b);
                    total.count.raw += c.raw;
                    total.count.enabled_ns += c.enabled_ns;
                    total.count.running_ns += c.running_ns;
                }
                None => totals.push(ProbeCount {
                    name,
                    ops,
                    count: c,
                }),
            }
        }
    }
    Ok(totals)
}

/// Whether the 95% CI of the median is narrower than the target.
fn precise_enough(values: &[f64], cfg: &SamplerConfig) -> bool {
    let (Some(median), Some((lo, hi))) = (
        analysis::median(values),
        analysis::median_ci(values, 0.95, 1000, cfg.seed),
    ) else {
        return false;
    };
    median != 0.0 && (hi - lo) / 2.0 <= cfg.precision * median.abs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::clock::{self, ClockChoice};

    /// A routine that costs nothing and holds at most `most` ops a batch; the largest batch
    /// it was asked to run.
    struct Bounded {
        most: u64,
        largest: u64,
    }

    impl Routine for Bounded {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            self.largest = self.largest.max(ops);
            Ok(())
        }

        fn max_batch(&self) -> Option<u64> {
            Some(self.most)
        }
    }

    #[test]
    fn probes_count_whole_periods() {
        assert_eq!(probe_batches(5, false, None), vec![5, 5, 5]);
        assert_eq!(probe_batches(4096, true, Some(64)), vec![4096]);
        // Three reads of a 64-read pass: 64 reads, the last batch short.
        let batches = probe_batches(3, false, Some(64));
        assert_eq!(batches.iter().sum::<u64>(), 64);
        assert!(batches.iter().all(|&b| (1..=3).contains(&b)), "{batches:?}");
        // Already whole: 3 × 100 over a period of 60.
        assert_eq!(probe_batches(100, false, Some(60)), vec![100, 100, 100]);
        assert_eq!(probe_batches(100, false, Some(70)).iter().sum::<u64>(), 350);
        assert_eq!(probe_batches(0, false, Some(1)), vec![1, 1, 1]);
        // A period beyond MAX_PROBE_BATCHES batches keeps three.
        assert_eq!(probe_batches(2, false, Some(1 << 40)), vec![2, 2, 2]);
        assert_eq!(probe_batches(1, false, Some(1024)).len(), 1024);
    }

    #[test]
    fn a_batch_stops_growing_at_the_routines_bound() {
        let (clock, _) = clock::choose(ClockChoice::Monotonic);
        for most in [1, 7, 1000] {
            let mut routine = Bounded { most, largest: 0 };
            // A target no empty batch of 1000 reaches.
            let ops = size_batch(&mut routine, clock, None, 1e12).expect("sized");
            assert_eq!(ops, most);
            assert_eq!(routine.largest, most);
        }
        // A fixed batch is the experiment's own count, bound or not.
        let mut routine = Bounded {
            most: 3,
            largest: 0,
        };
        assert_eq!(size_batch(&mut routine, clock, Some(3), 1e12).ok(), Some(3));
    }

    #[test]
    fn a_baseline_paid_once_a_batch_spreads_over_a_pass_batch() {
        // A program's start of 1 ms timed over a sized batch of 200 loops: 5 µs a loop; a
        // pass batch of 120,000 loops starts it once: 1 ms / 120,000 a loop.
        let b = pass_baseline(Some(5_000.0), true, 200, 120_000).unwrap();
        assert!((b - 1e6 / 120_000.0).abs() < 1e-9, "{b}");
        // A cost per operation (a working set touched per hop) stays as it is.
        assert_eq!(
            pass_baseline(Some(5_000.0), false, 200, 120_000),
            Some(5_000.0)
        );
        assert_eq!(pass_baseline(None, true, 200, 120_000), None);
    }

    #[test]
    fn processes_share_the_budget_and_loosen_precision() {
        let s = SamplerConfig::standard();
        assert_eq!(s.per_process(1), s);
        let three = s.per_process(3);
        assert!((three.budget_s * 3.0 - s.budget_s).abs() < 1e-9);
        assert!((three.min_time_s * 3.0 - s.min_time_s).abs() < 1e-9);
        assert!((three.precision - s.precision * 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(three.warmup_ns, s.warmup_ns);
        assert!(three.min_samples >= 5 && three.max_samples >= three.min_samples);
        // Zero processes is read as one.
        assert_eq!(s.per_process(0), s);
    }
}

//! Making a routine ready to sample: the batch size, the empty loop's cost, the routine's own
//! baseline, the warm-up.

use std::hint::black_box;

use super::SamplerConfig;
use crate::measure::clock::Clock;
use crate::model::Calibration;
use crate::model::routine::{self, Routine, RoutineError};

/// The shortest a sample may be: 1000 times the clock's resolution, and the configured floor.
pub(super) fn target_ns(clock: Clock, cfg: &SamplerConfig) -> f64 {
    (clock.resolution_ns() * 1000.0).max(cfg.min_sample_ns)
}

/// A routine made ready to sample: its calibration, and what each sample's time per operation
/// has taken off (the empty loop, the baseline).
pub(super) struct Calibrated {
    pub(super) calibration: Calibration,
    pub(super) subtract_ns: f64,
}

/// Size the batch, measure the empty loop (`subtract_loop_overhead`) and the routine's
/// baseline, and warm up.
pub(super) fn calibrate(
    subtract_loop_overhead: bool,
    routine: &mut dyn Routine,
    fixed_ops: Option<u64>,
    clock: Clock,
    cpus: &[usize],
    cfg: &SamplerConfig,
) -> Result<Calibrated, RoutineError> {
    let ops = size_batch(routine, clock, fixed_ops, target_ns(clock, cfg))?;
    let loop_overhead_ns = subtract_loop_overhead.then(|| empty_loop_ns_per_op(clock, ops));
    let baseline_ns = baseline_ns_per_op(routine, clock, ops).transpose()?;
    let warmup_ns = warm_up(routine, clock, ops, fixed_ops.is_some(), cfg.warmup_ns)?;
    Ok(Calibrated {
        calibration: Calibration {
            ops_per_sample: ops,
            timer_overhead_ns: clock.overhead_ns(),
            loop_overhead_ns,
            baseline_ns,
            warmup_ns,
            cpus: cpus.to_vec(),
        },
        // Per-operation overheads each sample's time has taken off.
        subtract_ns: loop_overhead_ns.unwrap_or(0.0) + baseline_ns.unwrap_or(0.0),
    })
}

/// The batch size: `fixed_ops`, or the smallest count from the routine's `min_batch` up whose
/// fastest of three timings reaches `target_ns`, or the routine's `max_batch` when that comes
/// first.
pub(super) fn size_batch(
    routine: &mut dyn Routine,
    clock: Clock,
    fixed_ops: Option<u64>,
    target_ns: f64,
) -> Result<u64, RoutineError> {
    // Batch sizing. Each candidate batch is timed three times and judged by its fastest
    // timing, so one interrupt or cold miss cannot stop the growth early.
    let mut ops: u64 = fixed_ops
        .unwrap_or_else(|| routine::smallest(routine))
        .max(1);
    while fixed_ops.is_none() {
        ops = routine::bounded(routine, ops);
        let mut elapsed = f64::INFINITY;
        for _ in 0..3 {
            routine.prepare(ops)?;
            let t0 = clock.start();
            routine.run(ops)?;
            let t1 = clock.stop();
            elapsed = elapsed.min(clock.ns(t0, t1));
        }
        let at_bound = routine::bounded(routine, ops.saturating_add(1)) == ops;
        if elapsed >= target_ns || ops >= 1 << 40 || at_bound {
            break;
        }
        let factor = if elapsed <= 0.0 {
            10.0
        } else {
            (target_ns / elapsed * 1.2).clamp(2.0, 10.0)
        };
        ops = ((ops as f64) * factor).ceil() as u64;
    }
    Ok(ops)
}

/// Run discarded batches, at least three (one of a fixed batch: a whole pass) and for at
/// least `warmup_ns`; returns the time spent.
fn warm_up(
    routine: &mut dyn Routine,
    clock: Clock,
    ops: u64,
    fixed: bool,
    warmup_ns: f64,
) -> Result<f64, RoutineError> {
    let min_batches = if fixed { 1 } else { 3 };
    let warm_start = clock.start();
    let mut batches = 0;
    while batches < min_batches || clock.ns(warm_start, clock.stop()) < warmup_ns {
        routine.prepare(ops)?;
        routine.run(ops)?;
        batches += 1;
    }
    Ok(clock.ns(warm_start, clock.stop()))
}

/// Per-operation cost of the routine's own baseline, if it has one: the median of nine
/// timings of `ops` baseline operations (after one untimed warm-up run).
fn baseline_ns_per_op(
    routine: &mut dyn Routine,
    clock: Clock,
    ops: u64,
) -> Option<Result<f64, RoutineError>> {
    if let Err(e) = routine.run_baseline(ops)? {
        return Some(Err(e));
    }
    let mut timings = Vec::with_capacity(9);
    for _ in 0..9 {
        let t0 = clock.start();
        let outcome = routine.run_baseline(ops)?;
        let t1 = clock.stop();
        if let Err(e) = outcome {
            return Some(Err(e));
        }
        timings.push(clock.ns(t0, t1) / ops as f64);
    }
    timings.sort_by(f64::total_cmp);
    Some(Ok(timings[timings.len() / 2]))
}

/// Per-iteration cost of an empty loop of `ops` iterations: the median of nine timings.
fn empty_loop_ns_per_op(clock: Clock, ops: u64) -> f64 {
    let mut timings: Vec<f64> = (0..9)
        .map(|_| {
            let t0 = clock.start();
            empty_loop(ops);
            let t1 = clock.stop();
            clock.ns(t0, t1) / ops as f64
        })
        .collect();
    timings.sort_by(f64::total_cmp);
    timings[timings.len() / 2]
}

#[inline(never)]
fn empty_loop(ops: u64) {
    for i in 0..ops {
        black_box(i);
    }
}

//! Timed passes (`--passes`, the UnixBench suite): UnixBench's sync and sleep before each,
//! the batch a pass runs, the baseline a pass batch carries, and the pass itself — batches
//! until their timed total reaches the pass's length, one sample of all of them.

use super::*;

/// What UnixBench's `Run` does before every pass of every test: `sync; sleep 1; sync; sleep
/// 2`, so that one pass's (or one test's) dirty data is not written back under the next. The
/// sleeps are scaled by the pass's length over 10 s, UnixBench's shortest, for shorter passes
/// (`--quick`).
pub(super) fn settle_before_pass(seconds: f64) {
    let scale = (seconds / 10.0).clamp(0.0, 1.0);
    let secs = std::time::Duration::from_secs_f64;
    crate::platform::sync_and_settle(secs(scale), secs(2.0 * scale));
}

/// The batch of a timed pass: as many of the sized batches (`ops`, about `target_ns` long)
/// as make a fiftieth of the pass, so that a batch's fixed cost (a fork, a program's start)
/// is negligible and the pass overshoots its time by 2% at most; never above `max_batch`.
pub(super) fn pass_batch(ops: u64, target_ns: f64, seconds: f64, max_batch: Option<u64>) -> u64 {
    let batches = (seconds * 1e9 / 50.0 / target_ns.max(1.0)).floor().max(1.0) as u64;
    let batch = ops.max(1).saturating_mul(batches);
    max_batch.map_or(batch, |max| batch.min(max.max(1)))
}

/// The baseline per operation of a pass batch of `batch` operations, from `baseline_ns` timed
/// per operation of the sized batch of `ops`: the same for a cost per operation; for one paid
/// once per batch (`Routine::baseline_per_batch`), spread over the pass batch's operations.
pub(super) fn pass_baseline(
    baseline_ns: Option<f64>,
    per_batch: bool,
    ops: u64,
    batch: u64,
) -> Option<f64> {
    baseline_ns.map(|b| {
        if per_batch {
            b * ops as f64 / batch.max(1) as f64
        } else {
            b
        }
    })
}

/// One timed pass: batches of `batch` operations until the timed batches have taken
/// `seconds`; one sample of all of them (UnixBench's loop count over its duration: the rate
/// is the operations over the time they took). Each batch is prepared untimed, but within
/// the pass's rusage and counters.
pub(super) fn take_pass(
    routine: &mut dyn Routine,
    clock: Clock,
    counters: &mut Counting,
    (batch, seconds): (u64, f64),
    overheads: (f64, f64),
    usage: (Option<Partner>, fn() -> Rusage),
) -> Result<Sample, RoutineError> {
    measured(counters, overheads, usage, || {
        let (mut ops, mut elapsed_ns, mut batches) = (0u64, 0.0, 0u32);
        while elapsed_ns < seconds * 1e9 {
            routine.prepare(batch)?;
            let t0 = clock.start();
            routine.run(batch)?;
            let t1 = clock.stop();
            elapsed_ns += clock.ns(t0, t1);
            ops += batch;
            batches += 1;
        }
        Ok((ops, elapsed_ns, batches))
    })
}

//! The profile pass: after a worker's timed samples, batches of the same size with a stack
//! sampler on (hardware `cycles` where a PMU counts them, else `cpu-clock`, with call
//! stacks), so the profile shows where the measured operation's time goes without the
//! sampler's interrupts slowing the samples that give its figure. The batches are timed too: set beside the samples, they say what profiling cost.
//!
//! The sampler follows the worker's thread and what it starts during the pass; a partner
//! started before (the other side of a ping-pong) gets a sampler of its own, and its stacks
//! stand under a `[partner]` root.

use std::time::Instant;

use crate::analysis::profile::{fold, stacks};
use crate::model::profile::{PARTNER_FRAME, Profile, ProfileRequest};
use crate::model::routine::{Routine, RoutineError};
use crate::platform::stacks::{self, Clock, Drained, StackSampler, Task};
use crate::platform::symbols::FrameNamer;

/// Batches a profile pass takes at least: three, or one of a whole-pass experiment.
fn min_batches(fixed: bool) -> u32 {
    if fixed { 1 } else { 3 }
}

/// Profile `routine` in batches of `ops` for `request.seconds` (at least [`min_batches`]).
/// Whatever goes wrong is said in the profile's `problem`, never an error: a profile that
/// cannot be taken leaves the measured result as it is.
pub fn profile_pass(
    routine: &mut dyn Routine,
    ops: u64,
    fixed: bool,
    request: &ProfileRequest,
) -> Profile {
    // Cycles where a PMU counts them (a sample every so many cycles of the CPU's own
    // work), else the kernel's CPU-time clock (`stacks::refusal` words an `Err`).
    let hz = request.frequency_hz;
    let (mut mine, clock) = match StackSampler::open(Task::Me, Clock::Cycles, hz) {
        Ok(sampler) => (sampler, Clock::Cycles),
        Err(_) => match StackSampler::open(Task::Me, Clock::CpuClock, hz) {
            Ok(sampler) => (sampler, Clock::CpuClock),
            Err(e) => return Profile::refused(request, stacks::refusal(&e)),
        },
    };
    let mut problems = Vec::new();
    let partner = routine.partner();
    let mut theirs =
        partner.and_then(
            |p| match StackSampler::open(Task::Thread(p.tid), clock, hz) {
                Ok(sampler) => Some(sampler),
                Err(e) => {
                    let why = stacks::refusal(&e);
                    problems.push(format!("the partner was not sampled: {why}"));
                    None
                }
            },
        );

    let (mut my_stacks, mut their_stacks) = (Drained::default(), Drained::default());
    let mut batch_ns_per_op = Vec::new();
    let start = Instant::now();
    while batch_ns_per_op.len() < min_batches(fixed) as usize
        || start.elapsed().as_secs_f64() < request.seconds
    {
        match profiled_batch(routine, ops, &mut mine, theirs.as_mut()) {
            Ok(ns_per_op) => batch_ns_per_op.push(ns_per_op),
            Err(e) => {
                problems.push(format!("the profile pass stopped: {e}"));
                break;
            }
        }
        append(&mut my_stacks, mine.drain());
        if let Some(sampler) = theirs.as_mut() {
            append(&mut their_stacks, sampler.drain());
        }
    }

    let namer = FrameNamer::new();
    if let Some(why) = namer.kernel_problem() {
        problems.push(format!("kernel frames are unnamed: {why}"));
    }
    let mut named = namer.name(None, &my_stacks.stacks);
    if let Some(p) = partner {
        named.extend(
            namer
                .name(u32::try_from(p.pid).ok(), &their_stacks.stacks)
                .into_iter()
                .map(|mut stack| {
                    stack.push(PARTNER_FRAME.to_string());
                    stack
                }),
        );
    }
    Profile {
        event: clock.name().into(),
        frequency_hz: request.frequency_hz,
        stacks: stacks(fold(&named)),
        lost: my_stacks.lost + their_stacks.lost,
        batch_ns_per_op,
        problem: (!problems.is_empty()).then(|| problems.join("; ")),
    }
}

/// One batch with the samplers on around its run (not its preparation); its time per
/// operation.
fn profiled_batch(
    routine: &mut dyn Routine,
    ops: u64,
    mine: &mut StackSampler,
    mut theirs: Option<&mut StackSampler>,
) -> Result<f64, RoutineError> {
    routine.prepare(ops)?;
    let switch = |sampler: &mut StackSampler, on: bool| {
        let done = if on {
            sampler.enable()
        } else {
            sampler.disable()
        };
        done.map_err(|source| RoutineError::Os {
            call: "switching the sampler".into(),
            source,
        })
    };
    if let Some(sampler) = theirs.as_deref_mut() {
        switch(sampler, true)?;
    }
    switch(mine, true)?;
    let t0 = Instant::now();
    routine.run(ops)?;
    let elapsed = t0.elapsed();
    switch(mine, false)?;
    if let Some(sampler) = theirs {
        switch(sampler, false)?;
    }
    Ok(elapsed.as_nanos() as f64 / ops.max(1) as f64)
}

fn append(into: &mut Drained, more: Drained) {
    into.stacks.extend(more.stacks);
    into.lost += more.lost;
}

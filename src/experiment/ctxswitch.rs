//! Context switches, each variant measured explicitly, with its placement stated and the
//! counters proving that the switches happened.
//!
//! Context-switch figures are the most distrusted numbers of OS measurement: a tool may measure
//! no switch at all (`sched_yield` with nobody else runnable returns at once), count the wrong
//! number of switches per operation, or change 7x with placement (FINDINGS: a pipe round trip
//! pinned to one CPU ~5 µs, across two vCPUs of a VM whose idle vCPU halts ~30–70 µs). So:
//!
//! - `ctxswitch.pipe`: two processes ping-pong one byte over a pair of pipes (lmbench
//!   `lat_ctx`, `perf bench sched pipe`); one operation is one round trip, two switches.
//!   `working_set_kb=N` makes each side sum N KiB between hops, with the cost of summing both
//!   sides' KiB without switching subtracted: what remains includes the indirect cost of a
//!   switch through cache pollution.
//! - `ctxswitch.pipe_noswitch`: the same pipe writes and reads in one process, non-blocking,
//!   without any switch. The report derives `per switch = (pipe − pipe_noswitch) / 2`.
//! - `ctxswitch.futex`: the same ping-pong with futex wait/wake, between two threads or two
//!   processes sharing a page.
//! - `ctxswitch.yield`: `sched_yield()` in a loop, alone or with a competitor on the CPU.
//! - `ctxswitch.nanosleep0`: `nanosleep` of zero, the cost of asking to sleep for nothing.
//!
//! **What proves a switch.** getrusage splits switches into voluntary (the task blocked) and
//! involuntary (it was still runnable). On one CPU a woken task often preempts its waker
//! before the waker reaches its blocking read: measured on Linux 6.18 here, 57% of a pinned
//! pipe ping-pong's switches were voluntary and 43% involuntary on each side, while across CPUs
//! all were voluntary. A `sched_yield` that switches is always involuntary: the task stays
//! `TASK_RUNNING`, and `__schedule` counts a switch as voluntary only when the task leaves the
//! run queue. So the ping-pong experiments check the sum of both kinds on both sides
//! ([`Metric::BothSidesSwitches`]): exactly two per round trip when the switches happen, one
//! or none when they do not.

use super::pingpong::{Channel, PLACEMENT_PARAM, WORKING_SET_PARAM};
use super::{ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::equivalence as eq;

super::unix_setups!(routines => setup_pipe, setup_pipe_noswitch);

mod futex;
pub use futex::*;
mod yield_sleep;
pub use yield_sleep::*;

// --- expectations shared by the round-trip experiments ---

/// Switches of both sides per round trip: two, within a tolerance. Each round trip needs
/// exactly two (the worker leaves the CPU once, the partner once), so one or none fails.
/// The tolerance absorbs preemptions by other tasks during a sample (counted as involuntary
/// switches of our two tasks): 0.25 per round trip is one preemption every four round trips,
/// far above what a quiet or a `--load cpu` machine shows (measured 2.00 in both cases), and
/// far below the 1.0 of a round trip with one switch. Sample edges add at most a few
/// switches over hundreds of round trips.
const SWITCHES_TOLERANCE: f64 = 0.25;

pub(crate) fn two_switches(why: &'static str) -> Expectation {
    Expectation::new(
        Metric::BothSidesSwitches,
        Bound::Near {
            value: 2.0,
            tolerance: SWITCHES_TOLERANCE,
        },
        why,
    )
}

/// The worker's own switch per round trip, from perf's software counter (both kinds): a
/// second witness, independent of getrusage, where perf works.
pub(crate) fn worker_switches_once() -> Expectation {
    Expectation::new(
        Metric::Counter("context-switches"),
        Bound::Near {
            value: 1.0,
            tolerance: 0.15,
        },
        "the worker leaves the CPU once per round trip (perf counts its switches of both kinds)",
    )
}

/// No page fault per operation in the typical sample: a process's first sample may take the
/// faults of its first touches, which a short run divides by few operations.
pub(crate) fn no_faults(why: &'static str) -> Expectation {
    Expectation::new(Metric::TypicalFaults, Bound::Below(0.01), why)
}

pub(crate) fn syscalls_near(value: f64, tolerance: f64, why: &'static str) -> Expectation {
    Expectation::new(
        Metric::Counter("syscalls"),
        Bound::Near { value, tolerance },
        why,
    )
}

/// The expectations of a one-byte round trip with a partner process over pipes or sockets.
///
/// Unix stream sockets switch more than twice per round trip on one CPU, and that is the
/// kernel's doing, not a measurement error: when the reader frees the skb it received,
/// `sock_wfree` → `unix_write_space` wakes the *sender's* socket wait queue (there is room to
/// write again), where the sender sleeps waiting for its answer; it runs, finds no data and
/// sleeps again. `perf record -e sched:sched_wakeup -g` of a socketpair ping-pong here: 41% of
/// all wake-ups come from `unix_write_space`; getrusage: 3.6 switches per round trip pinned
/// to one CPU, 2.03 across CPUs. So for sockets two switches are the minimum, not the count.
pub(crate) fn byte_round_trip_expectations(channel: Channel) -> Vec<Expectation> {
    let switches = match channel {
        Channel::Pipes => vec![
            two_switches(
                "each round trip switches to the partner and back: exactly two switches, \
                 voluntary or involuntary (a woken partner on the same CPU often preempts the \
                 writer)",
            ),
            worker_switches_once(),
        ],
        Channel::UnixSockets => vec![
            Expectation::new(
                Metric::BothSidesSwitches,
                Bound::AtLeast(2.0 - SWITCHES_TOLERANCE),
                "each round trip switches to the partner and back, at least; reading a Unix \
                 socket also wakes the sender's wait queue (unix_write_space), so a sender \
                 sleeping for its answer wakes once more for nothing (measured 3.6 per round \
                 trip on one CPU)",
            ),
            Expectation::new(
                Metric::Counter("context-switches"),
                Bound::AtLeast(0.85),
                "the worker leaves the CPU at least once per round trip (perf counts its \
                 switches of both kinds)",
            ),
        ],
    };
    let mut e = switches;
    e.extend([
        syscalls_near(
            2.0,
            0.05,
            "the worker makes one write and one read per round trip (the syscall probe counts \
             the worker thread only, not the partner)",
        ),
        no_faults("a round trip touches no new memory"),
    ]);
    e
}

// --- ctxswitch.pipe ---

fn pipe_expectations(_: &Params) -> Vec<Expectation> {
    byte_round_trip_expectations(Channel::Pipes)
}

/// Where `ctxswitch.pipe`, `ctxswitch.pipe_noswitch` run and how (the equivalence table's row).
pub(crate) const PIPE_CELLS: eq::Cells = eq::Cells {
    linux: eq::noted("pipes", "pinned with sched_setaffinity"),
    freebsd: eq::noted("pipes", "pinned with cpuset_setaffinity"),
    macos: eq::noted(
        "pipes",
        "placements that need pinning are unsupported: no CPU affinity",
    ),
    windows: eq::Cell::No(
        "not enabled yet: anonymous pipes between two processes need a partner process \
             of their own; ctxswitch.event is Windows' hand-over",
    ),
};

/// Where `ctxswitch.yield` run and how (the equivalence table's row).
pub(crate) const YIELD_CELLS: eq::Cells = eq::Cells {
    linux: eq::runs("sched_yield"),
    freebsd: eq::runs("sched_yield"),
    macos: eq::runs("sched_yield"),
    windows: eq::noted(
        "SwitchToThread",
        "yields only to a thread ready on the same CPU; Sleep(0) is ctxswitch.sleep",
    ),
};

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[
    &PIPE,
    &PIPE_NOSWITCH,
    &FUTEX,
    // Windows builds its own (`winapi`: SwitchToThread).
    #[cfg(unix)]
    &YIELD,
    &NANOSLEEP0,
];

pub static PIPE: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.pipe",
    "two processes ping-pong one byte over a pair of pipes: two switches per round \
     trip (lmbench lat_ctx, perf bench sched pipe)",
    "round trip",
    "glibc write()/read() on blocking pipes, partner forked and pinned",
    setup_pipe,
)
.params(&[PLACEMENT_PARAM, WORKING_SET_PARAM])
.syscalls(|_| crate::experiment::each(&["write", "read"]))
.subtract_loop_overhead()
.ladder()
.counters_between_samples()
.expectations(pipe_expectations)
.cells(PIPE_CELLS);

// --- ctxswitch.pipe_noswitch ---

/// No claim on perf's `context-switches`: it counts involuntary switches too, and a
/// preemption by another task (0.015 per op measured under load) is contamination, reported in
/// the samples' nivcsw, not something the operation did. nvcsw says what the operation does.
fn pipe_noswitch_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Below(0.01),
            "non-blocking pipes in one process never wait, so nothing blocks",
        ),
        syscalls_near(
            4.0,
            0.05,
            "two writes and two reads: the system calls of one round trip of both sides",
        ),
        no_faults("the pipes' pages are reused, no new memory is touched"),
    ]
}

pub static PIPE_NOSWITCH: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.pipe_noswitch",
    "the system calls of one pipe round trip (write+read on each of two pipes) in one \
     process, non-blocking, without any switch: subtract from ctxswitch.pipe, halve, \
     and the rest is one switch",
    "round trip",
    "glibc write()/read() on non-blocking pipes, one process",
    setup_pipe_noswitch,
)
.syscalls(|_| crate::experiment::each(&["write", "read"]))
.subtract_loop_overhead()
.ladder()
.counters_between_samples()
.expectations(pipe_noswitch_expectations)
.cells(PIPE_CELLS);

/// The routines, POSIX's: pipes and a forked partner.
#[cfg(unix)]
mod routines {
    use super::super::pingpong::{self, Channel, PingPong};
    use super::super::{Context, Params, Routine, RoutineError, SetupError};

    pub(super) fn setup_pipe(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let cpus = pingpong::place(params, ctx)?;
        let working_set = params.u64("working_set_kb") as usize * 1024;
        Ok(Box::new(PingPong::start(
            Channel::Pipes,
            Some(cpus.partner),
            working_set,
        )?))
    }

    /// One process writes one byte into each of two non-blocking pipes and reads it back: the
    /// same four system calls as one round trip of both sides of `ctxswitch.pipe` (the worker's
    /// write and read, the partner's read and write), without blocking, waking or switching.
    struct PipeNoSwitch {
        pipes: [(std::os::fd::OwnedFd, std::os::fd::OwnedFd); 2],
    }

    impl Routine for PipeNoSwitch {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            use std::os::fd::AsRawFd;
            let [(a_r, a_w), (b_r, b_w)] = &self.pipes;
            let (a_r, a_w, b_r, b_w) = (
                a_r.as_raw_fd(),
                a_w.as_raw_fd(),
                b_r.as_raw_fd(),
                b_w.as_raw_fd(),
            );
            for _ in 0..ops {
                pingpong::write_byte(a_w, 0x5a, "pipe A")?;
                let byte = pingpong::read_byte(a_r, "pipe A")?;
                pingpong::write_byte(b_w, byte, "pipe B")?;
                pingpong::read_byte(b_r, "pipe B")?;
            }
            Ok(())
        }
    }

    pub(super) fn setup_pipe_noswitch(
        _: &Params,
        _: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let a = pingpong::pipe(libc::O_NONBLOCK)?;
        let b = pingpong::pipe(libc::O_NONBLOCK)?;
        Ok(Box::new(PipeNoSwitch { pipes: [a, b] }))
    }
}

#[cfg(all(test, unix))]
mod tests;

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

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::pingpong::{
    self, Channel, Cpus, PLACEMENT_PARAM, PartnerProcess, PingPong, SharedWords, Turns,
    WORKING_SET_PARAM,
};
use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Partner, Routine, SetupError};
use crate::analysis::validate::{Bound, Expectation, Metric};

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

pub(crate) fn no_faults(why: &'static str) -> Expectation {
    Expectation::new(Metric::Faults, Bound::Below(0.01), why)
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

fn setup_pipe(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let cpus = pingpong::place(params, ctx)?;
    let working_set = params.u64("working_set_kb") as usize * 1024;
    Ok(Box::new(PingPong::start(
        Channel::Pipes,
        cpus,
        working_set,
    )?))
}

pub static PIPE: ExperimentInfo = ExperimentInfo {
    name: "ctxswitch.pipe",
    os: crate::experiment::LINUX,
    summary: "two processes ping-pong one byte over a pair of pipes: two switches per round \
              trip (lmbench lat_ctx, perf bench sched pipe)",
    op: "round trip",
    path: "glibc write()/read() on blocking pipes, partner forked and pinned",
    params: &[PLACEMENT_PARAM, WORKING_SET_PARAM],
    syscalls: &["write", "read"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: false,
    work_dir: false,
    expectations: pipe_expectations,
    setup: setup_pipe,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- ctxswitch.pipe_noswitch ---

/// One process writes one byte into each of two non-blocking pipes and reads it back: the
/// same four system calls as one round trip of both sides of `ctxswitch.pipe` (the worker's
/// write and read, the partner's read and write), without blocking, waking or switching.
struct PipeNoSwitch {
    pipes: [(std::os::fd::OwnedFd, std::os::fd::OwnedFd); 2],
}

impl Routine for PipeNoSwitch {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
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

fn pipe_noswitch_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Below(0.01),
            "non-blocking pipes in one process never wait, so nothing blocks",
        ),
        Expectation::new(
            Metric::Counter("context-switches"),
            Bound::Below(0.01),
            "no switch of any kind belongs to the operation: this is the part of a round trip \
             that is not switching",
        ),
        syscalls_near(
            4.0,
            0.05,
            "two writes and two reads: the system calls of one round trip of both sides",
        ),
        no_faults("the pipes' pages are reused, no new memory is touched"),
    ]
}

fn setup_pipe_noswitch(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let a = pingpong::pipe(libc::O_NONBLOCK)?;
    let b = pingpong::pipe(libc::O_NONBLOCK)?;
    Ok(Box::new(PipeNoSwitch { pipes: [a, b] }))
}

pub static PIPE_NOSWITCH: ExperimentInfo = ExperimentInfo {
    name: "ctxswitch.pipe_noswitch",
    os: crate::experiment::LINUX,
    summary: "the system calls of one pipe round trip (write+read on each of two pipes) in one \
              process, non-blocking, without any switch: subtract from ctxswitch.pipe, halve, \
              and the rest is one switch",
    op: "round trip",
    path: "glibc write()/read() on non-blocking pipes, one process",
    params: &[],
    syscalls: &["write", "read"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: false,
    work_dir: false,
    expectations: pipe_noswitch_expectations,
    setup: setup_pipe_noswitch,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- ctxswitch.futex ---

const MODE_PARAM: ParamSpec = ParamSpec {
    name: "mode",
    kind: ParamKind::Choice(&["processes", "threads"]),
    default: "processes",
    help: "processes: a forked partner sharing a MAP_SHARED page (FUTEX_WAIT/WAKE); threads: a \
           partner thread of the worker (FUTEX_*_PRIVATE)",
};

fn futex_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        two_switches(
            "each round trip switches to the partner and back: exactly two switches of both \
             sides (in threads mode the worker's rusage covers both threads)",
        ),
        worker_switches_once(),
        syscalls_near(
            1.5,
            0.55,
            "one FUTEX_WAKE per round trip, and one FUTEX_WAIT unless the answer is already \
             there (when the woken partner preempted the worker and answered before it waited)",
        ),
        no_faults("a round trip touches no new memory"),
    ]
}

enum FutexSide {
    Process(PartnerProcess),
    Thread(Option<JoinHandle<i32>>),
}

/// The worker side of the futex ping-pong; the partner is a forked process or a thread.
struct FutexPingPong {
    words: Arc<SharedWords>,
    private: bool,
    next: u32,
    side: FutexSide,
}

impl FutexPingPong {
    fn turns(&self) -> Turns<'_> {
        Turns {
            seq: self.words.word(0),
            stop: self.words.word(1),
            private: self.private,
        }
    }
}

impl Routine for FutexPingPong {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
        let mut next = self.next;
        let turns = self.turns();
        let mut outcome = Ok(());
        for _ in 0..ops {
            if let Err(e) = turns.worker_round_trip(&mut next) {
                outcome = Err(e);
                break;
            }
        }
        self.next = next;
        outcome
    }

    fn partner(&self) -> Option<Partner> {
        match &self.side {
            FutexSide::Process(p) => Some(p.partner()),
            // A thread's switches are in the worker's own rusage (RUSAGE_SELF covers the
            // whole process), so the harness needs nothing more.
            FutexSide::Thread(_) => None,
        }
    }
}

impl Drop for FutexPingPong {
    fn drop(&mut self) {
        self.turns().stop_partner();
        match &mut self.side {
            FutexSide::Process(p) => p.stop(Duration::from_millis(200)),
            FutexSide::Thread(handle) => {
                if let Some(h) = handle.take() {
                    let _ = h.join();
                }
            }
        }
    }
}

fn setup_futex(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let cpus = pingpong::place(params, ctx)?;
    let words = Arc::new(SharedWords::new()?);
    let threads = params.str("mode") == "threads";
    let side = if threads {
        spawn_futex_thread(&words, cpus)?
    } else {
        let shared = Arc::clone(&words);
        let process = PartnerProcess::spawn(cpus.partner, &[], move || {
            Turns {
                seq: shared.word(0),
                stop: shared.word(1),
                private: false,
            }
            .partner_loop()
        })?;
        FutexSide::Process(process)
    };
    Ok(Box::new(FutexPingPong {
        words,
        private: threads,
        next: 0,
        side,
    }))
}

fn spawn_futex_thread(words: &Arc<SharedWords>, cpus: Cpus) -> Result<FutexSide, SetupError> {
    let shared = Arc::clone(words);
    let (tx, rx) = mpsc::channel::<Result<(), String>>();
    let handle = std::thread::Builder::new()
        .name("oslab-partner".into())
        .spawn(move || {
            let pinned = crate::platform::cpu::pin(&[cpus.partner])
                .map_err(|e| format!("cannot pin the partner thread to CPU {}: {e}", cpus.partner));
            let ok = pinned.is_ok();
            let _ = tx.send(pinned);
            if !ok {
                return 1;
            }
            Turns {
                seq: shared.word(0),
                stop: shared.word(1),
                private: true,
            }
            .partner_loop()
        })
        .map_err(|e| SetupError::Failed(format!("cannot start the partner thread: {e}")))?;
    match rx.recv() {
        Ok(Ok(())) => Ok(FutexSide::Thread(Some(handle))),
        Ok(Err(reason)) => {
            let _ = handle.join();
            Err(SetupError::Failed(reason))
        }
        Err(_) => {
            let _ = handle.join();
            Err(SetupError::Failed(
                "the partner thread ended at once".into(),
            ))
        }
    }
}

pub static FUTEX: ExperimentInfo = ExperimentInfo {
    name: "ctxswitch.futex",
    os: crate::experiment::LINUX,
    summary: "two threads or processes take turns with futex wait/wake on a shared word: two \
              switches per round trip, without the pipe's data path",
    op: "round trip",
    path: "syscall(SYS_futex) FUTEX_WAKE + FUTEX_WAIT, partner pinned",
    params: &[MODE_PARAM, PLACEMENT_PARAM],
    syscalls: &["futex"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: false,
    counters_in_samples: false,
    work_dir: false,
    expectations: futex_expectations,
    setup: setup_futex,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- ctxswitch.yield ---

const COMPETITOR_PARAM: ParamSpec = ParamSpec {
    name: "competitor",
    kind: ParamKind::Choice(&["none", "same_cpu"]),
    default: "none",
    help: "none: the worker yields alone (no switch can happen); same_cpu: a forked process \
           pinned to the worker's CPU yields in a loop too, so every call switches to it and back",
};

/// `ctxswitch.yield` checks what really proves a switch for `sched_yield`. Measured on Linux
/// 6.18 here: with a competitor yielding on the same CPU, getrusage shows 0 voluntary and
/// 1.000 involuntary switches per call on *each* side — a yield leaves the task runnable, so
/// its switch is counted as involuntary (`__schedule` counts a voluntary switch only when the
/// task leaves the run queue). Without a competitor: 0 and 0, and the call (~0.7 µs) is a
/// system call that runs the scheduler and picks the same task again. So the competitor case
/// expects two switches per call of both kinds on both sides, at least 0.9 involuntary on
/// the worker's side and no voluntary one; the lone case expects none of either kind.
fn yield_expectations(params: &Params) -> Vec<Expectation> {
    let one_call = syscalls_near(1.0, 0.05, "one sched_yield per call");
    if params.str("competitor") == "same_cpu" {
        vec![
            two_switches(
                "each call switches to the competitor and back: two switches per call, so one \
                 switch costs half the figure (a switch plus one sched_yield call)",
            ),
            Expectation::new(
                Metric::Rusage("nivcsw"),
                Bound::AtLeast(0.9),
                "a yield that switches leaves the task runnable, so the kernel counts the switch \
                 as involuntary",
            ),
            Expectation::new(
                Metric::Rusage("nvcsw"),
                Bound::Below(0.05),
                "sched_yield never blocks: a voluntary switch means the worker slept",
            ),
            one_call,
        ]
    } else {
        vec![
            Expectation::new(
                Metric::Rusage("nvcsw"),
                Bound::Below(0.01),
                "sched_yield never blocks",
            ),
            Expectation::new(
                Metric::Rusage("nivcsw"),
                Bound::Below(0.01),
                "with no other task runnable on this CPU, sched_yield picks the caller again and \
                 returns: no switch took place, and the figure is the cost of the call, not of \
                 a switch (a switch here means another task was runnable on the CPU)",
            ),
            one_call,
        ]
    }
}

/// `sched_yield()` in a loop, with an optional competitor process.
struct Yield {
    competitor: Option<PartnerProcess>,
}

impl Routine for Yield {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            // SAFETY: sched_yield has no preconditions.
            if unsafe { libc::sched_yield() } != 0 {
                return Err(pingpong::os_error("sched_yield"));
            }
        }
        Ok(())
    }

    fn partner(&self) -> Option<Partner> {
        self.competitor.as_ref().map(PartnerProcess::partner)
    }
}

impl Drop for Yield {
    fn drop(&mut self) {
        // The competitor never ends by itself: kill and reap it at once.
        if let Some(c) = &mut self.competitor {
            c.stop(Duration::ZERO);
        }
    }
}

fn setup_yield(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    if params.str("competitor") != "same_cpu" {
        return Ok(Box::new(Yield { competitor: None }));
    }
    let cpu = ctx.cpu.ok_or_else(|| {
        SetupError::Unsupported(
            "competitor=same_cpu needs a pinned worker, and pinning is unavailable here".into(),
        )
    })?;
    pingpong::pin_worker(cpu)?;
    let competitor = PartnerProcess::spawn(cpu, &[], || {
        loop {
            // SAFETY: sched_yield has no preconditions and is async-signal-safe. The competitor
            // never ends by itself: the worker's drop kills it (and PR_SET_PDEATHSIG).
            unsafe { libc::sched_yield() };
        }
    })?;
    Ok(Box::new(Yield {
        competitor: Some(competitor),
    }))
}

pub static YIELD: ExperimentInfo = ExperimentInfo {
    name: "ctxswitch.yield",
    os: crate::experiment::LINUX,
    summary: "sched_yield() in a loop: alone it switches nowhere (the result says so); with a \
              competitor yielding on the same CPU each call is two switches",
    op: "call",
    path: "glibc sched_yield()",
    params: &[COMPETITOR_PARAM],
    syscalls: &["sched_yield"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: false,
    counters_in_samples: false,
    work_dir: false,
    expectations: yield_expectations,
    setup: setup_yield,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- ctxswitch.nanosleep0 ---

const SLACK_PARAM: ParamSpec = ParamSpec {
    name: "timer_slack_ns",
    kind: ParamKind::Int {
        min: 1,
        max: 100_000_000,
    },
    default: "50000",
    help: "the worker thread's timer slack (prctl PR_SET_TIMERSLACK), set explicitly so the \
           figure does not depend on what oslab inherited; 50000 is Linux's default for normal \
           tasks",
};

/// From this slack up, a zero sleep surely blocks until the timer fires.
const SURELY_SLEEPS_SLACK_NS: u64 = 20_000;

/// `nanosleep` of zero: the kernel arms a timer that expires "now" but may fire up to the
/// timer slack later, and the caller sleeps until it does. Measured on Linux 6.18 here: with
/// the default 50 µs slack, 1.000 voluntary switches per call and ~75 µs per call (the
/// slack plus waking an idle vCPU); with 20 µs, 1.0 and ~43 µs; with 5 µs or less, no switch
/// and ~15–20 µs (programming the timer costs more than the slack, so it has fired before the
/// caller would sleep). Only the first case is portable enough to check: below
/// [`SURELY_SLEEPS_SLACK_NS`] no switch count is expected either way.
fn nanosleep0_expectations(params: &Params) -> Vec<Expectation> {
    let mut e = vec![
        syscalls_near(
            1.0,
            0.05,
            "one clock_nanosleep per call (glibc's nanosleep)",
        ),
        no_faults("a sleep touches no new memory"),
    ];
    if params.u64("timer_slack_ns") >= SURELY_SLEEPS_SLACK_NS {
        e.push(Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Near {
                value: 1.0,
                tolerance: 0.05,
            },
            "a zero sleep arms a timer allowed to fire up to the slack late and blocks until it \
             fires: one voluntary switch per call",
        ));
    }
    e
}

struct NanoSleep0 {
    /// The slack the thread had before, restored on drop.
    old_slack: libc::c_int,
}

impl Routine for NanoSleep0 {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        for _ in 0..ops {
            // SAFETY: `zero` is a valid timespec; no remaining time is asked for.
            if unsafe { libc::nanosleep(&zero, std::ptr::null_mut()) } != 0 {
                return Err(pingpong::os_error("nanosleep"));
            }
        }
        Ok(())
    }
}

impl Drop for NanoSleep0 {
    fn drop(&mut self) {
        if self.old_slack > 0 {
            // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, self.old_slack as libc::c_ulong) };
        }
    }
}

fn setup_nanosleep0(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let slack = params.u64("timer_slack_ns");
    // SAFETY: prctl(PR_GET_TIMERSLACK) only reads this thread's timer slack.
    let old_slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) };
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, slack as libc::c_ulong) } != 0 {
        return Err(SetupError::Failed(pingpong::os_error(&format!(
            "prctl(PR_SET_TIMERSLACK, {slack})"
        ))));
    }
    Ok(Box::new(NanoSleep0 { old_slack }))
}

pub static NANOSLEEP0: ExperimentInfo = ExperimentInfo {
    name: "ctxswitch.nanosleep0",
    os: crate::experiment::LINUX,
    summary: "nanosleep() of zero: asking to sleep for nothing still sleeps up to the timer \
              slack (one voluntary switch per call at the default 50 µs)",
    op: "call",
    path: "glibc nanosleep() (clock_nanosleep system call)",
    params: &[SLACK_PARAM],
    syscalls: &["clock_nanosleep"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: false,
    counters_in_samples: false,
    work_dir: false,
    expectations: nanosleep0_expectations,
    setup: setup_nanosleep0,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

#[cfg(test)]
mod tests;

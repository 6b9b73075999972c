//! Windows' own ways of giving up the CPU, beside a real context switch:
//!
//! - `ctxswitch.sleep0`: `Sleep(0)`, which gives the rest of the time slice to a ready thread
//!   of equal priority, on any CPU, and returns at once when there is none;
//! - `ctxswitch.switch_to_thread`: `SwitchToThread()`, which yields only to a thread ready on
//!   the caller's own CPU (the closest match of Linux's `sched_yield`);
//! - `ctxswitch.event`: two threads of the worker hand a turn back and forth with two
//!   auto-reset events (SetEvent / WaitForSingleObject): two switches per round trip, the
//!   Windows form of lmbench's `lat_ctx`.
//!
//! With `competitor=same_cpu`, a second thread pinned to the worker's CPU makes the same call
//! in a loop, so each call of the worker switches to it and back. Windows counts context
//! switches per thread, not voluntary and involuntary apart: oslab records their sum over the
//! worker's threads as `nvcsw` (platform/windows/rusage.rs), so the checks are on the sum.
//!
//! The descriptions build on every system (`oslab list` names them everywhere); the code is
//! Windows' (`threads.rs`).

use super::{ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Bound, Expectation, Metric};

#[cfg(windows)]
mod threads;

/// Runs on Windows only.
const WINDOWS: &[crate::model::Os] = &[crate::model::Os::Windows];

// The setups are Windows'; elsewhere each refuses (never reached: the runner marks the
// experiment unsupported first).
#[cfg(not(windows))]
use super::elsewhere as setup_sleep0;
#[cfg(not(windows))]
use super::elsewhere as setup_switch_to_thread;
#[cfg(not(windows))]
use super::elsewhere as setup_event;
#[cfg(windows)]
use threads::{setup_event, setup_sleep0, setup_switch_to_thread};

const COMPETITOR_PARAM: ParamSpec = ParamSpec {
    name: "competitor",
    kind: ParamKind::Choice(&["none", "same_cpu"]),
    default: "none",
    help: "none: the worker calls alone (nothing to switch to); same_cpu: a thread pinned to \
           the worker's CPU makes the same call in a loop, so every call switches to it and back",
};

const PLACEMENT_PARAM: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["same", "cross"]),
    default: "same",
    help: "same: both threads pinned to the worker's CPU; cross: the partner on another CPU \
           (each wait then idles its CPU until the other side's SetEvent wakes it)",
};

/// Switches per call of a yield with or without a competitor.
fn yield_expectations(params: &Params) -> Vec<Expectation> {
    let mut e = vec![Expectation::new(
        Metric::Faults,
        Bound::Below(0.01),
        "a yield touches no new memory",
    )];
    if params.str("competitor") == "same_cpu" {
        e.push(Expectation::new(
            Metric::BothSidesSwitches,
            Bound::AtLeast(1.75),
            "each call switches to the competitor thread and back: at least two switches per \
             call over the worker's threads",
        ));
    } else {
        e.push(Expectation::new(
            Metric::BothSidesSwitches,
            Bound::Below(0.05),
            "with no other thread ready, the call returns at once: no switch took place, and \
             the figure is the cost of the call, not of a switch",
        ));
    }
    e
}

/// Two switches per round trip, within the tolerance of the Unix ping-pongs.
fn event_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::BothSidesSwitches,
            Bound::Near {
                value: 2.0,
                tolerance: 0.25,
            },
            "each round trip blocks each thread once: two switches",
        ),
        Expectation::new(
            Metric::Faults,
            Bound::Below(0.01),
            "a hand-over touches no new memory",
        ),
    ]
}

const fn yield_info(
    name: &'static str,
    summary: &'static str,
    path: &'static str,
    syscalls: fn(&Params) -> Vec<super::Claim>,
    setup: super::Setup,
) -> ExperimentInfo {
    ExperimentInfo {
        name,
        os: WINDOWS,
        summary,
        op: "call",
        path,
        params: &[COMPETITOR_PARAM],
        syscalls,
        subtract_loop_overhead: true,
        default_suite: true,
        ladder: false,
        counters_in_samples: false,
        work_dir: false,
        expectations: yield_expectations,
        setup,
        preflight: None,
        batch: super::Batch::Sized,
        sweep: &[],
        quick_params: &[],
    }
}

pub static SLEEP0: ExperimentInfo = yield_info(
    "ctxswitch.sleep0",
    "Sleep(0) in a loop: alone it returns at once (the result says so); with a competitor \
     thread on the same CPU each call is two switches",
    "kernel32 Sleep(0) (NtDelayExecution)",
    |_| super::each(&["NtDelayExecution"]),
    setup_sleep0,
);

pub static SWITCH_TO_THREAD: ExperimentInfo = yield_info(
    "ctxswitch.switch_to_thread",
    "SwitchToThread() in a loop: yields only to a thread ready on the same CPU; alone it \
     returns at once, with a competitor there each call is two switches",
    "kernel32 SwitchToThread() (NtYieldExecution)",
    |_| super::each(&["NtYieldExecution"]),
    setup_switch_to_thread,
);

pub static EVENT: ExperimentInfo = ExperimentInfo {
    name: "ctxswitch.event",
    os: WINDOWS,
    summary: "two threads hand a turn back and forth with auto-reset events: one round trip is \
              two context switches",
    op: "round trip",
    path: "kernel32 SetEvent + WaitForSingleObject",
    params: &[PLACEMENT_PARAM],
    // Windows' own system calls: no tracer checks them yet (`oslab trace` is Linux's).
    syscalls: |_| super::each(&["NtSetEvent", "NtWaitForSingleObject"]),
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: false,
    work_dir: false,
    expectations: event_expectations,
    setup: setup_event,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

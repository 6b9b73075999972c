//! The experiments of Windows' own calls.
//!
//! - `ctxswitch.sleep` (`ms=0`, `ms=1`): `Sleep(0)` gives the rest of the time slice to a
//!   ready thread of equal priority, on any CPU, and returns at once when there is none;
//!   `Sleep(1)` waits for the next timer tick, so it always blocks;
//! - `ctxswitch.yield`, Windows' build: `SwitchToThread()`, which yields only to a thread
//!   ready on the caller's own CPU (the closest match of `sched_yield`, which the Unix build
//!   of the same experiment calls: `compare` marks the two ≠);
//! - `ctxswitch.event`: two threads of the worker hand a turn back and forth with two
//!   auto-reset events (SetEvent / WaitForSingleObject): two switches per round trip, the
//!   Windows form of lmbench's `lat_ctx`;
//! - `process.thread`, Windows' build: CreateThread of an empty thread, then
//!   WaitForSingleObject and CloseHandle (pthread_create and join on Unix);
//! - `process.create_process`: CreateProcessW of oslab.exe's `--version` and a wait for it;
//! - `syscall.create_file`: CreateFileW of an existing file and CloseHandle;
//! - `pagefault.virtual_alloc`: the first touch of each page of fresh VirtualAlloc memory.
//!
//! With `competitor=same_cpu`, a second thread pinned to the worker's CPU makes the same call
//! in a loop, so each call of the worker switches to it and back. Windows counts context
//! switches per thread, not voluntary and involuntary apart: oslab records their sum over the
//! worker's live threads as `nvcsw` (platform/windows/rusage.rs), so the checks are on the sum.
//!
//! The Windows-only experiments are described on every system (`oslab list` names them
//! everywhere); the Windows builds of `ctxswitch.yield` and `process.thread` exist only there.
//! The code is Windows' (`threads.rs`, `kernel.rs`).

use super::{Batch, ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::equivalence as eq;

#[cfg(windows)]
mod kernel;
#[cfg(windows)]
mod threads;

// The setups are Windows'; elsewhere each refuses (never reached: the runner marks the
// experiment unsupported first).
#[cfg(not(windows))]
use super::elsewhere as setup_sleep;
#[cfg(not(windows))]
use super::elsewhere as setup_event;
#[cfg(not(windows))]
use super::elsewhere as setup_create_process;
#[cfg(not(windows))]
use super::elsewhere as setup_create_file;
#[cfg(not(windows))]
use super::elsewhere as setup_virtual_alloc;
#[cfg(windows)]
use kernel::{setup_create_file, setup_create_process, setup_virtual_alloc};
#[cfg(windows)]
use threads::{setup_event, setup_sleep};

/// The same parameter as the Unix `ctxswitch.yield`'s, so that runs of the two compare.
const COMPETITOR_PARAM: ParamSpec = ParamSpec {
    name: "competitor",
    kind: ParamKind::Choice(&["none", "same_cpu"]),
    default: "none",
    help: "none: the worker calls alone (nothing to switch to); same_cpu: a thread pinned to \
           the worker's CPU makes the same call in a loop, so every call switches to it and back",
};

const MS_PARAM: ParamSpec = ParamSpec {
    name: "ms",
    kind: ParamKind::Choice(&["0", "1"]),
    default: "0",
    help: "Sleep's argument: 0 yields to a ready thread of equal priority (returns at once when \
           there is none), 1 waits for the next timer tick",
};

const PLACEMENT_PARAM: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["same", "cross"]),
    default: "same",
    help: "same: both threads pinned to the worker's CPU; cross: the partner on another CPU \
           (each wait then idles its CPU until the other side's SetEvent wakes it)",
};

const SIZE_PARAM: ParamSpec = ParamSpec {
    name: "size",
    kind: ParamKind::Size {
        min: 4096,
        max: 1 << 34,
    },
    default: "64M",
    help: "bytes of fresh memory allocated and touched per sample, one write per page",
};

fn faults_below(bound: f64, why: &'static str) -> Expectation {
    Expectation::new(Metric::Faults, Bound::Below(bound), why)
}

/// Switches per call of a yield with or without a competitor.
fn yield_expectations(params: &Params) -> Vec<Expectation> {
    let mut e = vec![faults_below(0.01, "a yield touches no new memory")];
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

fn sleep_expectations(params: &Params) -> Vec<Expectation> {
    if params.str("ms") == "0" {
        return yield_expectations(params);
    }
    vec![
        faults_below(0.01, "a sleep touches no new memory"),
        Expectation::new(
            Metric::BothSidesSwitches,
            Bound::AtLeast(0.9),
            "Sleep(1) waits for the next timer tick: the thread blocks, one switch per call",
        ),
    ]
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
        faults_below(0.01, "a hand-over touches no new memory"),
    ]
}

fn no_hard_faults(_: &Params) -> Vec<Expectation> {
    vec![Expectation::new(
        Metric::Rusage("majflt"),
        Bound::Below(0.01),
        "everything it touches is in memory already: a hard fault means a page was read back",
    )]
}

fn open_close_expectations(_: &Params) -> Vec<Expectation> {
    vec![faults_below(
        0.01,
        "opening and closing a file touches no new memory of the worker",
    )]
}

fn first_touch_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Faults,
            Bound::Near {
                value: 1.0,
                tolerance: 0.1,
            },
            "the first touch of a committed page faults in a demand-zero page: one fault per \
             page",
        ),
        Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.01),
            "a demand-zero page is never read from the disk",
        ),
    ]
}

pub static SLEEP: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.sleep",
    "Sleep(0) and Sleep(1) in a loop: Sleep(0) alone returns at once (the result says so), \
     with a competitor thread on the same CPU each call is two switches; Sleep(1) blocks \
     until the next timer tick",
    "call",
    "kernel32 Sleep (NtDelayExecution)",
    setup_sleep,
)
.params(&[MS_PARAM, COMPETITOR_PARAM])
.syscalls(|_| super::each(&["NtDelayExecution"]))
.subtract_loop_overhead()
.counters_between_samples()
.expectations(sleep_expectations)
.sweep(&[("ms", &["0", "1"])])
.cells(eq::Cells {
    linux: eq::NOT_WINDOWS,
    freebsd: eq::NOT_WINDOWS,
    macos: eq::NOT_WINDOWS,
    windows: eq::runs("Sleep(0), Sleep(1)"),
});

pub static EVENT: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.event",
    "two threads hand a turn back and forth with auto-reset events: one round trip is two \
     context switches",
    "round trip",
    "kernel32 SetEvent + WaitForSingleObject",
    setup_event,
)
.params(&[PLACEMENT_PARAM])
// Windows' own system calls: no tracer checks them yet (`oslab trace` is Linux's).
.syscalls(|_| super::each(&["NtSetEvent", "NtWaitForSingleObject"]))
.subtract_loop_overhead()
.ladder()
.counters_between_samples()
.expectations(event_expectations)
.cells(eq::Cells {
    linux: eq::NOT_WINDOWS_HAND_OVER,
    freebsd: eq::NOT_WINDOWS_HAND_OVER,
    macos: eq::NOT_WINDOWS_HAND_OVER,
    windows: eq::noted(
        "auto-reset events between two threads",
        "SetEvent / WaitForSingleObject",
    ),
});

pub static CREATE_FILE: ExperimentInfo = ExperimentInfo::new(
    "syscall.create_file",
    "CreateFileW of an existing file, then CloseHandle: Windows' open and close",
    "open+close",
    "kernel32 CreateFileW (NtCreateFile) + CloseHandle (NtClose)",
    setup_create_file,
)
.syscalls(|_| super::each(&["NtCreateFile", "NtClose"]))
.subtract_loop_overhead()
.ladder()
.counters_between_samples()
.expectations(open_close_expectations)
.cells(eq::Cells {
    linux: eq::Cell::No("not available: a Windows call; syscall.open_close is openat + close"),
    freebsd: eq::Cell::No("not available: a Windows call; syscall.open_close is openat + close"),
    macos: eq::Cell::No("not available: a Windows call; syscall.open_close is open + close"),
    windows: eq::runs("CreateFileW + CloseHandle"),
});

pub static CREATE_PROCESS: ExperimentInfo = ExperimentInfo::new(
    "process.create_process",
    "CreateProcessW of oslab.exe printing its version to nowhere, then a wait for its \
     end: a whole process, its image loaded and its runtime started",
    "process",
    "kernel32 CreateProcessW + WaitForSingleObject + GetExitCodeProcess",
    setup_create_process,
)
.syscalls(|_| super::each(&["NtCreateUserProcess", "NtWaitForSingleObject"]))
.ladder()
.counters_between_samples()
.expectations(no_hard_faults)
.cells(eq::Cells {
    linux: eq::NOT_WINDOWS_PROCESS,
    freebsd: eq::NOT_WINDOWS_PROCESS,
    macos: eq::NOT_WINDOWS_PROCESS,
    windows: eq::noted("CreateProcessW", "of oslab.exe --version, waited for"),
});

/// One sample touches every page of the region once.
fn pages(params: &Params) -> u64 {
    (params.u64("size") / 4096).max(1)
}

pub static VIRTUAL_ALLOC: ExperimentInfo = ExperimentInfo::new(
    "pagefault.virtual_alloc",
    "the first write to each page of fresh VirtualAlloc memory: one demand-zero fault per \
     page (the memory is allocated again, untimed, before every sample)",
    "page",
    "a write to committed memory (the fault handler, MmAccessFault)",
    setup_virtual_alloc,
)
.params(&[SIZE_PARAM])
.expectations(first_touch_expectations)
.batch(Batch::Fixed(pages))
.quick_params(&[("size", "8M")])
.cells(eq::Cells {
    linux: eq::NOT_WINDOWS_MEMORY,
    freebsd: eq::NOT_WINDOWS_MEMORY,
    macos: eq::NOT_WINDOWS_MEMORY,
    windows: eq::runs("VirtualAlloc, then a first write per page"),
});

// Windows' experiments by the family they belong to, each list where the family's own stands
// in the registry (`experiment::REGISTRY`); the same names' Windows builds first.

/// Windows' system calls.
pub static SYSCALL: &[&ExperimentInfo] = &[&CREATE_FILE];

/// Windows' context switches.
pub static CTXSWITCH: &[&ExperimentInfo] = &[
    #[cfg(windows)]
    &same_names::YIELD,
    &SLEEP,
    &EVENT,
];

/// Windows' processes and threads.
pub static PROCESS: &[&ExperimentInfo] = &[
    #[cfg(windows)]
    &same_names::THREAD,
    &CREATE_PROCESS,
];

/// Windows' page faults.
pub static PAGEFAULT: &[&ExperimentInfo] = &[&VIRTUAL_ALLOC];

/// The Windows builds of experiments the Unix builds perform their own way: the same name,
/// parameters and operation, Windows' calls (the equivalence table names both).
#[cfg(windows)]
pub mod same_names {
    use super::*;

    pub static YIELD: ExperimentInfo = ExperimentInfo::new(
        "ctxswitch.yield",
        "SwitchToThread() in a loop: alone it switches nowhere (the result says so); with a \
         competitor thread on the same CPU each call is two switches",
        "call",
        "kernel32 SwitchToThread() (NtYieldExecution)",
        super::threads::setup_switch_to_thread,
    )
    .params(&[COMPETITOR_PARAM])
    .syscalls(|_| super::super::each(&["NtYieldExecution"]))
    .subtract_loop_overhead()
    .counters_between_samples()
    .expectations(yield_expectations)
    .cells(crate::experiment::ctxswitch::YIELD_CELLS);

    pub static THREAD: ExperimentInfo = ExperimentInfo::new(
        "process.thread",
        "CreateThread() of an empty thread, then a wait for its end and CloseHandle: a \
         task that shares everything",
        "create+join",
        "kernel32 CreateThread (NtCreateThreadEx) + WaitForSingleObject + CloseHandle",
        super::threads::setup_thread,
    )
    .syscalls(|_| super::super::each(&["NtCreateThreadEx", "NtWaitForSingleObject", "NtClose"]))
    .ladder()
    .expectations(no_hard_faults)
    .cells(crate::experiment::process::THREAD_CELLS);
}

//! UnixBench's OS-facing tests (byte-unixbench 5.1.3 / 6.0, the `index` set of its `Run`
//! script), each measured as oslab measures everything else. One operation is one loop as
//! UnixBench counts it, so the stored median (ns per op) converts exactly to UnixBench's unit
//! (`report::peers::unixbench`): lps = 1e9/ns, KBps = bufsize/1024 × 1e9/ns, lpm = 60e9/ns,
//! MWIPS = 1e10/ns (one Whetstone pass of 10 million Whetstone instructions).
//!
//! The workloads are UnixBench's, read from its sources (`src/syscall.c`, `pipe.c`,
//! `context1.c`, `spawn.c`, `execl.c`, `fstime.c`, `looper.c`, `pgms/multi.sh`, `tst.sh`,
//! `dhry_1.c`, `whets.c`) and written again in Rust; no UnixBench file is shipped (it is
//! GPL). Where oslab cannot do exactly what UnixBench does, the kind's file says what differs
//! and docs/unixbench.md collects it.
//!
//! - `unixbench.dhrystone`: one loop of Weicker's Dhrystone 2.1 (`dhrystone.rs`).
//! - `unixbench.whetstone`: one pass of Curnow and Wichmann's Whetstone, double precision,
//!   as Roy Longbottom's whets.c runs it (`whetstone.rs`).
//! - `unixbench.syscall`: close(dup(fd)), getpid, getuid, umask(022) (`syscall.rs`).
//! - `unixbench.pipe`: write 512 bytes into a pipe and read them back, one process;
//!   `unixbench.context1`: a round trip over two pipes with a forked partner (`pipe.rs`).
//! - `unixbench.spawn`: fork, the child exits, the parent waits (`spawn.rs`).
//! - `unixbench.execl`: one execve of a program that execs itself, counting down (`execl.rs`).
//! - `unixbench.file_copy`: one `bufsize` block read from one file and written to another,
//!   both rewound after `maxblocks` blocks (`file_copy.rs`).
//! - `unixbench.shell`: /bin/sh running `concurrency` copies of tst.sh's sort, od, grep, tee
//!   and wc pipeline at once, and waiting for them (`shell.rs`).

use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::experiment::ctxswitch::no_faults;
use crate::model::equivalence as eq;

mod dhrystone;
pub use dhrystone::DHRYSTONE;
mod native;
mod whetstone;
pub use whetstone::WHETSTONE;
mod syscall;
pub use syscall::SYSCALL;
mod context1;
mod pipe;
pub use context1::CONTEXT1;
pub use pipe::PIPE;
mod spawn;
pub use spawn::SPAWN;
mod execl;
pub use execl::EXECL;
mod file_copy;
#[cfg(unix)]
mod program;
pub use file_copy::FILE_COPY;
mod shell;
pub use shell::{SHELL, sort_input};

// --- where the processes run ---

/// What `placement=free` means, for each experiment's `placement` help.
macro_rules! placement_free {
    () => {
        "free: the worker and the processes it starts run where the scheduler puts them, on \
         the run's CPUs (--cpu, else every CPU oslab may use), as UnixBench runs"
    };
}
use placement_free;

/// `placement=free|same`: UnixBench leaves its processes to the scheduler, and so does
/// `free`; `same` keeps the worker and everything it starts on the worker's CPU (oslab's
/// usual pinning: a cleaner figure, but not UnixBench's).
pub(super) const PLACEMENT_FREE_SAME: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["free", "same"]),
    default: "free",
    help: concat!(placement_free!(), "; same: all of them on the worker's CPU"),
};

/// Whether `placement` leaves the processes to the scheduler.
pub(super) fn free(params: &Params) -> bool {
    params.get("placement").is_none_or(|p| p == "free")
}

/// For `placement=free`: widen the worker's affinity (the harness pinned it to one CPU) to
/// the run's CPUs, so that it and every process it starts from now on run where the
/// scheduler puts them. Nothing to do where nothing was pinned.
pub(super) fn unpin(ctx: &Context) -> Result<(), SetupError> {
    if ctx.free_cpus.is_empty() || crate::platform::cpu::pinning_refusal().is_some() {
        return Ok(());
    }
    crate::platform::cpu::pin(&ctx.free_cpus).map_err(|e| {
        SetupError::Failed(format!(
            "cannot widen the worker's CPUs to {}: {e}",
            crate::platform::cpu::format_list(&ctx.free_cpus)
        ))
    })
}

/// Unpin for `placement=free`; with `same`, keep the harness's pinning.
pub(super) fn place(params: &Params, ctx: &Context) -> Result<(), SetupError> {
    if free(params) { unpin(ctx) } else { Ok(()) }
}

// --- expectations shared by the kinds ---

fn no_major_faults() -> Expectation {
    Expectation::new(
        Metric::Rusage("majflt"),
        Bound::Below(0.01),
        "the loop reads nothing from disk: a major fault means the worker's memory was \
         swapped or evicted meanwhile",
    )
}

fn no_switch(why: &'static str) -> Expectation {
    Expectation::new(Metric::Rusage("nvcsw"), Bound::Below(0.01), why)
}

fn syscalls_near(value: f64, why: &'static str) -> Expectation {
    Expectation::new(
        Metric::Counter("syscalls"),
        Bound::Near {
            value,
            tolerance: 0.05,
        },
        why,
    )
}

fn children_fault() -> Expectation {
    Expectation::new(
        Metric::Children("minflt"),
        Bound::AtLeast(1.0),
        "each operation runs at least one child process, which faults at least once in its \
         own address space; none means no child ran (or its usage was not reported)",
    )
}

/// Where `unixbench.*` run and how (the equivalence table's row).
pub(crate) const UNIXBENCH_FAMILY_CELLS: eq::Cells = eq::Cells {
    linux: eq::runs("POSIX calls"),
    freebsd: eq::runs("POSIX calls"),
    macos: eq::noted(
        "POSIX calls",
        "unixbench.context1 placement=same or cross needs pinning, unsupported without CPU \
             affinity; placement=free, the default, runs",
    ),
    windows: eq::NOT_WINDOWS_UNIXBENCH,
};

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[
    &DHRYSTONE, &WHETSTONE, &EXECL, &FILE_COPY, &PIPE, &CONTEXT1, &SPAWN, &SHELL, &SYSCALL,
];

/// The cpu program's routine elsewhere: never reached (the experiment does not run here).
#[cfg(not(unix))]
fn not_posix(_: &'static str, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    crate::experiment::elsewhere(&Params::default(), ctx)
}

#[cfg(all(test, unix))]
mod tests;

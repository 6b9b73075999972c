//! The system-call cost ladder: from a plain function call, through a vDSO call that never
//! enters the kernel, to calls that do a little (getppid) and more (open+close) work inside
//! it. The classic result (lmbench `lat_syscall`, Ousterhout 1990) is that a system call
//! costs tens to hundreds of function calls.
//!
//! Every rung that enters the kernel is measured on the path its `entry` parameter names
//! (`entry.rs`): `call` (the raw trap instruction in a function that is never inlined, what a
//! program pays: the headline figure), `inline` (the instruction inline in the timed loop:
//! the floor) and, on request, `libc` (the C library's wrapper; for clock_gettime, whose libc
//! call is the vDSO, glibc's `syscall()`). `call` and `inline` are
//! measured by default and the ladder shows the gap (docs/syscall-path.md). The routines are
//! in `routines.rs`.

use crate::experiment::RoutineError;
use crate::model::equivalence as eq;
use std::hint::black_box;

use super::{Context, ExperimentInfo, Params, Routine, SetupError};
use crate::analysis::validate::{Bound, Expectation, Metric};

pub mod entry;
/// The rungs' routines, POSIX's (raw traps and libc).
#[cfg(unix)]
mod routines;
mod rungs;
pub use rungs::*;

/// Expectations shared by the family, plus how many kernel entries one operation makes.
pub(crate) fn ladder_expectations(syscalls_per_op: f64) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Faults,
            Bound::Below(0.01),
            "a call in a loop touches no new memory, so a fault means something else ran",
        ),
        Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Below(0.01),
            "nothing in the loop blocks, so a voluntary switch means the call slept",
        ),
        Expectation::new(
            Metric::Counter("syscalls"),
            Bound::Near {
                value: syscalls_per_op,
                tolerance: 0.05,
            },
            "the number of kernel entries one operation makes",
        ),
    ]
}

fn no_syscall(_: &Params) -> Vec<Expectation> {
    ladder_expectations(0.0)
}

// --- function_call ---

#[inline(never)]
fn empty_function(x: u64) -> u64 {
    x
}

/// The empty function, called through a pointer the optimiser cannot see through, so the
/// call stays a call.
struct FunctionCall {
    f: fn(u64) -> u64,
}

impl Routine for FunctionCall {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for i in 0..ops {
            black_box((self.f)(black_box(i)));
        }
        Ok(())
    }
}

fn setup_function_call(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(Box::new(FunctionCall {
        f: black_box(empty_function),
    }))
}

/// Where `syscall.getpid`, `syscall.getppid` run and how (the equivalence table's row).
pub(crate) const GETPID_CELLS: eq::Cells = eq::Cells {
    linux: eq::noted(eq::RAW, "getpid, getppid: `syscall` or `svc`"),
    freebsd: eq::noted(
        eq::RAW,
        "getpid (20), getppid (39): `syscall`, errors by the carry flag, turned into -errno",
    ),
    macos: eq::noted("libc", eq::NO_RAW_MACOS),
    windows: eq::Cell::No(
        "not available: GetCurrentProcessId reads the thread's environment block without \
             entering the kernel, and there is no getppid",
    ),
};

/// Where `syscall.read`, `syscall.write` run and how (the equivalence table's row).
pub(crate) const READ_CELLS: eq::Cells = eq::Cells {
    linux: eq::noted(eq::RAW, "read, write"),
    freebsd: eq::noted(eq::RAW, "read (3), write (4)"),
    macos: eq::noted("libc", eq::NO_RAW_MACOS),
    windows: eq::Cell::No("not enabled yet: ReadFile and WriteFile would be the analogues"),
};

/// Where `syscall.fstat`, `syscall.stat` run and how (the equivalence table's row).
pub(crate) const FSTAT_CELLS: eq::Cells = eq::Cells {
    linux: eq::noted(eq::RAW, "fstat, newfstatat"),
    freebsd: eq::noted(eq::RAW, "fstat (551), fstatat (552)"),
    macos: eq::noted("libc", eq::NO_RAW_MACOS),
    windows: eq::Cell::No(
        "not enabled yet: GetFileInformationByHandle and GetFileAttributesExW would be the \
             analogues",
    ),
};

/// The family's experiments that run everywhere (the system calls' own are `RUNGS`, Unix's);
/// the registry is the families' lists (`experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[&FUNCTION_CALL];

pub static FUNCTION_CALL: ExperimentInfo = ExperimentInfo::new(
    "syscall.function_call",
    "an empty function called through a pointer: the baseline of the ladder",
    "call",
    "user space only",
    setup_function_call,
)
.user_space()
.subtract_loop_overhead()
.ladder()
.expectations(no_syscall)
.cells(eq::Cells {
    linux: eq::runs("no call"),
    freebsd: eq::runs("no call"),
    macos: eq::runs("no call"),
    windows: eq::runs("no call"),
});

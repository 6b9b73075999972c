//! The rungs that enter the kernel: clock_gettime (through the vDSO and forced into the
//! kernel), getpid, getppid, read, write, fstat, stat and open+close, each on the paths of its
//! `entry` parameter.

use super::entry::{ENTRY_PARAM, ENTRY_SWEEP};
use super::*;
use crate::experiment::{ParamKind, ParamSpec};
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(super::routines => setup_clock_gettime, setup_getpid, setup_getppid,
    setup_getppid_libc, setup_read, setup_write, setup_fstat, setup_stat, setup_open_close);
crate::experiment::unix_setups!(vdso => setup_vdso_clock_gettime);

const PATH_PARAM: ParamSpec = ParamSpec {
    name: "path",
    kind: ParamKind::Path,
    default: "/etc/passwd",
    help: "file to stat/open (the cost grows with its number of path components)",
};

const SIZE_PARAM: ParamSpec = ParamSpec {
    name: "size",
    kind: ParamKind::Size {
        min: 1,
        max: 1 << 20,
    },
    default: "1",
    help: "bytes per call",
};

fn one_syscall(_: &Params) -> Vec<Expectation> {
    ladder_expectations(1.0)
}

fn two_syscalls(_: &Params) -> Vec<Expectation> {
    ladder_expectations(2.0)
}

fn vdso_expectations(_: &Params) -> Vec<Expectation> {
    let mut e = ladder_expectations(0.0);
    e.push(Expectation::new(
        Metric::SystemShare,
        Bound::Below(0.25),
        "the vDSO reads the clock in user space; kernel time means it fell back to the system \
         call (the clocksource has no vDSO support)",
    ));
    e
}

fn raw_clock_expectations(_: &Params) -> Vec<Expectation> {
    let mut e = ladder_expectations(1.0);
    e.push(Expectation::new(
        Metric::SystemShare,
        Bound::AtLeast(0.4),
        "a forced system call spends most of its time entering, running in and leaving the kernel",
    ));
    e
}

// --- clock_gettime, through the vDSO and forced into the kernel ---

/// The system calls' rungs of the ladder, in the order the default suite runs them.
pub static RUNGS: &[&ExperimentInfo] = &[
    &VDSO_CLOCK_GETTIME,
    &CLOCK_GETTIME,
    &GETPID,
    &GETPPID,
    &GETPPID_LIBC,
    &READ,
    &WRITE,
    &FSTAT,
    &STAT,
    &OPEN_CLOSE,
];

pub static VDSO_CLOCK_GETTIME: ExperimentInfo = ExperimentInfo::new(
    "syscall.vdso_clock_gettime",
    "clock_gettime(CLOCK_MONOTONIC) through glibc and the vDSO: no kernel entry",
    "call",
    "glibc → vDSO",
    setup_vdso_clock_gettime,
)
.user_space()
.subtract_loop_overhead()
.ladder()
.expectations(vdso_expectations)
.cells(eq::Cells {
    linux: eq::runs("clock_gettime in the vDSO"),
    freebsd: eq::Cell::No(
        "not enabled: FreeBSD reads its clock from a shared page too, but the experiment \
             is about Linux's vDSO",
    ),
    macos: eq::Cell::No("not enabled: the same, through the commpage"),
    windows: eq::Cell::No(
        "not enabled: Windows reads its clock in user space too (QueryPerformanceCounter), \
             but the experiment is about Linux's vDSO",
    ),
});

pub static CLOCK_GETTIME: ExperimentInfo = ExperimentInfo::new(
    "syscall.clock_gettime",
    "the same clock_gettime forced into the kernel: what the vDSO saves",
    "call",
    entry::PATH,
    setup_clock_gettime,
)
.params(&[ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["clock_gettime"]))
.subtract_loop_overhead()
.ladder()
.expectations(raw_clock_expectations)
.sweep(ENTRY_SWEEP)
.cells(eq::Cells {
    linux: eq::noted(eq::RAW, "clock_gettime, 228 on x86-64; libc: syscall()"),
    freebsd: eq::noted(eq::RAW, "clock_gettime (232); libc: syscall()"),
    macos: eq::Cell::No(
        "not available: macOS's clock_gettime is a libSystem function, with no system \
             call of that name",
    ),
    windows: eq::Cell::No(
        "not available: Windows has no clock_gettime system call, and its system-call \
             numbers change with every build",
    ),
});

// --- getpid, getppid ---

pub static GETPID: ExperimentInfo = ExperimentInfo::new(
    "syscall.getpid",
    "getpid(): the smallest useful system call",
    "call",
    entry::PATH,
    setup_getpid,
)
.params(&[ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["getpid"]))
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.sweep(ENTRY_SWEEP)
.cells(crate::experiment::syscall::GETPID_CELLS);

pub static GETPPID: ExperimentInfo = ExperimentInfo::new(
    "syscall.getppid",
    "getppid(): the classic null system call (never cached by any libc)",
    "call",
    entry::PATH,
    setup_getppid,
)
.params(&[ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["getppid"]))
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.sweep(ENTRY_SWEEP)
.cells(crate::experiment::syscall::GETPID_CELLS);

pub static GETPPID_LIBC: ExperimentInfo = ExperimentInfo::new(
    "syscall.getppid_libc",
    "getppid() through libc, the path `perf bench syscall basic` and lmbench measure: \
     the older name of `syscall.getppid --param entry=libc`",
    "call",
    "libc wrapper",
    setup_getppid_libc,
)
.syscalls(|_| crate::experiment::each(&["getppid"]))
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.cells(eq::Cells {
    linux: eq::runs("getppid through libc"),
    freebsd: eq::runs("getppid through libc"),
    macos: eq::runs("getppid through libc"),
    windows: eq::Cell::No("not available: Windows has no getppid"),
});

// --- read, write ---

pub static READ: ExperimentInfo = ExperimentInfo::new(
    "syscall.read",
    "read() of `size` bytes from /dev/zero",
    "call",
    entry::PATH,
    setup_read,
)
.params(&[SIZE_PARAM, ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["read"]))
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.sweep(ENTRY_SWEEP)
.cells(crate::experiment::syscall::READ_CELLS);

pub static WRITE: ExperimentInfo = ExperimentInfo::new(
    "syscall.write",
    "write() of `size` bytes to /dev/null",
    "call",
    entry::PATH,
    setup_write,
)
.params(&[SIZE_PARAM, ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["write"]))
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.sweep(ENTRY_SWEEP)
.cells(crate::experiment::syscall::READ_CELLS);

// --- stat, fstat, open+close ---

/// glibc's fstat (2.33 and later) is `fstatat(fd, "", AT_EMPTY_PATH)`: the libc entry makes
/// newfstatat, the raw entries fstat itself.
fn fstat_calls(params: &Params) -> Vec<crate::experiment::Claim> {
    match params.get("entry") {
        Some("libc") => crate::experiment::each(&["newfstatat"]),
        _ => crate::experiment::each(&["fstat"]),
    }
}

pub static FSTAT: ExperimentInfo = ExperimentInfo::new(
    "syscall.fstat",
    "fstat() of an open file: a system call that copies a struct out",
    "call",
    entry::PATH,
    setup_fstat,
)
.params(&[PATH_PARAM, ENTRY_PARAM])
.syscalls(fstat_calls)
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.sweep(ENTRY_SWEEP)
.cells(crate::experiment::syscall::FSTAT_CELLS);

pub static STAT: ExperimentInfo = ExperimentInfo::new(
    "syscall.stat",
    "stat() of a path: a lookup through the dentry cache",
    "call",
    entry::PATH,
    setup_stat,
)
.params(&[PATH_PARAM, ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["newfstatat"]))
.subtract_loop_overhead()
.ladder()
.expectations(one_syscall)
.sweep(ENTRY_SWEEP)
.cells(crate::experiment::syscall::FSTAT_CELLS);

pub static OPEN_CLOSE: ExperimentInfo = ExperimentInfo::new(
    "syscall.open_close",
    "open() then close() of a path: allocating and freeing a file descriptor",
    "open+close",
    entry::PATH,
    setup_open_close,
)
.params(&[PATH_PARAM, ENTRY_PARAM])
.syscalls(|_| crate::experiment::each(&["openat", "close"]))
.subtract_loop_overhead()
.ladder()
.expectations(two_syscalls)
.sweep(ENTRY_SWEEP)
.cells(eq::Cells {
    linux: eq::noted(eq::RAW, "openat + close"),
    freebsd: eq::noted(eq::RAW, "openat (499) + close (6)"),
    macos: eq::noted(
        "libc",
        "open + close; raw system calls are private to libSystem",
    ),
    windows: eq::Cell::No(
        "not available as such: syscall.create_file is CreateFileW + CloseHandle",
    ),
});

#[cfg(all(test, unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;
    use crate::experiment::REGISTRY;

    /// Every rung works on every path its parameter accepts, and the paths make the same
    /// calls: what differs between them is how the kernel is entered, nothing else.
    #[test]
    fn every_rung_runs_on_every_path() {
        let mut tried = 0;
        for info in REGISTRY.iter().filter(|e| e.family() == "syscall") {
            let Some(spec) = info.param(entry::Entry::NAME) else {
                continue;
            };
            let ParamKind::Choice(paths) = spec.kind else {
                panic!("{}: entry is a choice", info.name);
            };
            for path in paths {
                let given = [(entry::Entry::NAME.to_string(), path.to_string())];
                let params = Params::resolve(info.name, info.params, &given).unwrap();
                assert_eq!(entry::Entry::of(&params).as_str(), *path);
                let mut routine = (info.setup)(&params, &Context::default())
                    .unwrap_or_else(|e| panic!("{} entry={path}: {e:?}", info.name));
                routine
                    .run(1000)
                    .unwrap_or_else(|e| panic!("{} entry={path}: {e}", info.name));
                tried += 1;
            }
        }
        assert_eq!(tried, 8 * 3, "eight rungs on three paths");
    }
}

/// The vDSO's clock_gettime, POSIX's (libc's).
#[cfg(unix)]
mod vdso {
    use super::super::entry::boxed;
    use crate::experiment::{Context, Params, Routine, SetupError};
    use std::hint::black_box;

    pub(super) fn setup_vdso_clock_gettime(
        _: &Params,
        _: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        Ok(boxed("clock_gettime (vDSO)", move |_| {
            // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
            let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            black_box(&ts);
            if ret == 0 {
                0
            } else {
                -(std::io::Error::last_os_error().raw_os_error().unwrap_or(0) as i64)
            }
        }))
    }
}

//! The system-call cost ladder: from a plain function call, through a vDSO call that never
//! enters the kernel, to calls that do a little (getppid) and more (open+close) work inside
//! it. The classic result (lmbench `lat_syscall`, Ousterhout 1990) is that a system call
//! costs tens to hundreds of function calls; this family measures each rung on one path.
//!
//! Every call except `vdso_clock_gettime` and `getppid_libc` is made with the raw trap
//! instruction (`platform::raw`), so the figures are the kernel's, not a library wrapper's.

use std::ffi::CString;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;

use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::platform::raw::{self, nr};

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

/// Expectations shared by the family, plus how many kernel entries one operation makes.
fn ladder_expectations(syscalls_per_op: f64) -> Vec<Expectation> {
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

fn raw_only() -> Result<(), SetupError> {
    raw::unsupported_reason().map_or(Ok(()), |r| Err(SetupError::Unsupported(r)))
}

/// Build a routine around a closure that performs one operation and returns the kernel's
/// result; a negative result stops the experiment with the errno.
struct Calls<F: FnMut(u64) -> i64> {
    what: &'static str,
    call: F,
}

impl<F: FnMut(u64) -> i64> Routine for Calls<F> {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for i in 0..ops {
            let ret = (self.call)(black_box(i));
            if ret < 0 {
                return Err(format!("{} failed: {}", self.what, raw::errno_text(ret)));
            }
        }
        Ok(())
    }
}

fn boxed<F: FnMut(u64) -> i64 + 'static>(what: &'static str, call: F) -> Box<dyn Routine> {
    Box::new(Calls { what, call })
}

// --- function_call ---

#[inline(never)]
fn empty_function(x: u64) -> u64 {
    x
}

fn setup_function_call(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    // Called through a pointer the optimiser cannot see through, so the call stays a call.
    let f: fn(u64) -> u64 = black_box(empty_function);
    Ok(boxed("function call", move |i| {
        black_box(f(i));
        0
    }))
}

pub static FUNCTION_CALL: ExperimentInfo = ExperimentInfo {
    name: "syscall.function_call",
    os: crate::experiment::LINUX,
    summary: "an empty function called through a pointer: the baseline of the ladder",
    op: "call",
    path: "user space only",
    params: &[],
    syscalls: &[],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: no_syscall,
    setup: setup_function_call,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- clock_gettime, through the vDSO and forced into the kernel ---

fn setup_vdso_clock_gettime(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
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

pub static VDSO_CLOCK_GETTIME: ExperimentInfo = ExperimentInfo {
    name: "syscall.vdso_clock_gettime",
    os: crate::experiment::LINUX,
    summary: "clock_gettime(CLOCK_MONOTONIC) through glibc and the vDSO: no kernel entry",
    op: "call",
    path: "glibc → vDSO",
    params: &[],
    syscalls: &[],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: vdso_expectations,
    setup: setup_vdso_clock_gettime,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_clock_gettime(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    Ok(boxed("clock_gettime", move |_| {
        let ptr = &mut ts as *mut libc::timespec as i64;
        // SAFETY: clock_gettime writes one timespec to `ptr`, which points at `ts`.
        let ret = unsafe { raw::syscall2(nr::CLOCK_GETTIME, libc::CLOCK_MONOTONIC as i64, ptr) };
        black_box(&ts);
        ret
    }))
}

pub static CLOCK_GETTIME: ExperimentInfo = ExperimentInfo {
    name: "syscall.clock_gettime",
    os: crate::experiment::LINUX,
    summary: "the same clock_gettime forced into the kernel: what the vDSO saves",
    op: "call",
    path: "raw syscall instruction",
    params: &[],
    syscalls: &["clock_gettime"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: raw_clock_expectations,
    setup: setup_clock_gettime,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- getpid, getppid ---

fn setup_getpid(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    // SAFETY: getpid takes no argument and cannot fail.
    Ok(boxed("getpid", |_| unsafe { raw::syscall0(nr::GETPID) }))
}

pub static GETPID: ExperimentInfo = ExperimentInfo {
    name: "syscall.getpid",
    os: crate::experiment::LINUX,
    summary: "getpid(): the smallest useful system call",
    op: "call",
    path: "raw syscall instruction",
    params: &[],
    syscalls: &["getpid"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_getpid,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_getppid(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    // SAFETY: getppid takes no argument and cannot fail.
    Ok(boxed("getppid", |_| unsafe { raw::syscall0(nr::GETPPID) }))
}

pub static GETPPID: ExperimentInfo = ExperimentInfo {
    name: "syscall.getppid",
    os: crate::experiment::LINUX,
    summary: "getppid(): the classic null system call (never cached by any libc)",
    op: "call",
    path: "raw syscall instruction",
    params: &[],
    syscalls: &["getppid"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_getppid,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_getppid_libc(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    // SAFETY: getppid takes no argument and cannot fail.
    Ok(boxed("getppid (libc)", |_| unsafe { libc::getppid() } as i64))
}

pub static GETPPID_LIBC: ExperimentInfo = ExperimentInfo {
    name: "syscall.getppid_libc",
    os: crate::experiment::LINUX,
    summary: "getppid() through libc: the path `perf bench syscall basic` and lmbench measure",
    op: "call",
    path: "libc wrapper",
    params: &[],
    syscalls: &["getppid"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_getppid_libc,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- read, write ---

fn open(path: &str, write: bool) -> Result<File, SetupError> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open(path)
        .map_err(|e| SetupError::Failed(format!("cannot open {path}: {e}")))
}

fn setup_read(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    let file = open("/dev/zero", false)?;
    let size = params.u64("size") as usize;
    let mut buf = vec![0u8; size];
    Ok(boxed("read /dev/zero", move |_| {
        let fd = file.as_raw_fd() as i64;
        // SAFETY: `buf` is `size` writable bytes owned by this closure.
        let ret = unsafe { raw::syscall3(nr::READ, fd, buf.as_mut_ptr() as i64, size as i64) };
        black_box(&buf);
        ret
    }))
}

pub static READ: ExperimentInfo = ExperimentInfo {
    name: "syscall.read",
    os: crate::experiment::LINUX,
    summary: "read() of `size` bytes from /dev/zero",
    op: "call",
    path: "raw syscall instruction",
    params: &[SIZE_PARAM],
    syscalls: &["read"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_read,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_write(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    let file = open("/dev/null", true)?;
    let size = params.u64("size") as usize;
    let buf = vec![0x5au8; size];
    Ok(boxed("write /dev/null", move |_| {
        let fd = file.as_raw_fd() as i64;
        // SAFETY: `buf` is `size` readable bytes owned by this closure.
        unsafe { raw::syscall3(nr::WRITE, fd, buf.as_ptr() as i64, size as i64) }
    }))
}

pub static WRITE: ExperimentInfo = ExperimentInfo {
    name: "syscall.write",
    os: crate::experiment::LINUX,
    summary: "write() of `size` bytes to /dev/null",
    op: "call",
    path: "raw syscall instruction",
    params: &[SIZE_PARAM],
    syscalls: &["write"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_write,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- stat, fstat, open+close ---

/// Room for the kernel's `struct stat` on any architecture (144 bytes on x86_64).
type StatBuf = [u64; 32];

fn c_path(params: &Params) -> Result<CString, SetupError> {
    let path = params.str("path");
    std::fs::metadata(path).map_err(|e| {
        SetupError::Failed(format!("cannot stat {path}: {e}; pass --param path=FILE"))
    })?;
    CString::new(path).map_err(|_| SetupError::Failed("path contains a NUL byte".into()))
}

fn setup_fstat(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    c_path(params)?;
    let file = open(params.str("path"), false)?;
    let mut buf: StatBuf = [0; 32];
    Ok(boxed("fstat", move |_| {
        let fd = file.as_raw_fd() as i64;
        // SAFETY: `buf` is large enough for the kernel's struct stat and owned by the closure.
        let ret = unsafe { raw::syscall2(nr::FSTAT, fd, buf.as_mut_ptr() as i64) };
        black_box(&buf);
        ret
    }))
}

pub static FSTAT: ExperimentInfo = ExperimentInfo {
    name: "syscall.fstat",
    os: crate::experiment::LINUX,
    summary: "fstat() of an open file: a system call that copies a struct out",
    op: "call",
    path: "raw syscall instruction",
    params: &[PATH_PARAM],
    syscalls: &["fstat"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_fstat,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_stat(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    let path = c_path(params)?;
    let mut buf: StatBuf = [0; 32];
    Ok(boxed("stat", move |_| {
        // SAFETY: `path` is NUL-terminated and `buf` large enough for struct stat.
        let ret = unsafe {
            raw::syscall4(
                nr::NEWFSTATAT,
                libc::AT_FDCWD as i64,
                path.as_ptr() as i64,
                buf.as_mut_ptr() as i64,
                0,
            )
        };
        black_box(&buf);
        ret
    }))
}

pub static STAT: ExperimentInfo = ExperimentInfo {
    name: "syscall.stat",
    os: crate::experiment::LINUX,
    summary: "stat() of a path: a lookup through the dentry cache",
    op: "call",
    path: "raw syscall instruction (newfstatat)",
    params: &[PATH_PARAM],
    syscalls: &["newfstatat"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: one_syscall,
    setup: setup_stat,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_open_close(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    raw_only()?;
    let path = c_path(params)?;
    let flags = (libc::O_RDONLY | libc::O_CLOEXEC) as i64;
    Ok(boxed("open+close", move |_| {
        // SAFETY: `path` is NUL-terminated; the descriptor opened is closed at once.
        unsafe {
            let fd = raw::syscall3(
                nr::OPENAT,
                libc::AT_FDCWD as i64,
                path.as_ptr() as i64,
                flags,
            );
            if fd < 0 {
                return fd;
            }
            raw::syscall1(nr::CLOSE, fd)
        }
    }))
}

pub static OPEN_CLOSE: ExperimentInfo = ExperimentInfo {
    name: "syscall.open_close",
    os: crate::experiment::LINUX,
    summary: "open() then close() of a path: allocating and freeing a file descriptor",
    op: "open+close",
    path: "raw syscall instruction (openat, close)",
    params: &[PATH_PARAM],
    syscalls: &["openat", "close"],
    subtract_loop_overhead: true,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: two_syscalls,
    setup: setup_open_close,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

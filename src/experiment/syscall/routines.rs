//! The timed routines of the ladder's rungs, each on the path its `entry` parameter names:
//! generic over [`Trap`] for the raw paths (`Called`, `Inline`), plus the libc call where the
//! C library has one.

use std::ffi::CString;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;

use super::super::{Context, Params, Routine, SetupError};
use super::entry::{Entry, boxed, from_libc, widen};
use crate::platform::raw::{self, Called, Inline, Trap, nr};

fn raw_only() -> Result<(), SetupError> {
    raw::unsupported_reason().map_or(Ok(()), |r| Err(SetupError::Unsupported(r)))
}

/// Pick the routine for the result's entry: `trap::<Called>` or `trap::<Inline>` (which need
/// the raw path on this architecture), or `libc`.
macro_rules! by_entry {
    ($params:expr, $trap:ident ($($arg:expr),*), $libc:expr) => {
        match Entry::of($params) {
            Entry::Call => {
                raw_only()?;
                Ok($trap::<Called>($($arg),*))
            }
            Entry::Inline => {
                raw_only()?;
                Ok($trap::<Inline>($($arg),*))
            }
            Entry::Libc => Ok($libc),
        }
    };
}

// --- clock_gettime forced into the kernel ---

fn clock_gettime<T: Trap>() -> Box<dyn Routine> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    boxed("clock_gettime", move |_| {
        let ptr = &mut ts as *mut libc::timespec as i64;
        // SAFETY: clock_gettime writes one timespec to `ptr`, which points at `ts`.
        let ret = unsafe { T::call2(nr::CLOCK_GETTIME, libc::CLOCK_MONOTONIC as i64, ptr) };
        black_box(&ts);
        ret
    })
}

/// libc's own clock_gettime never enters the kernel (that is `syscall.vdso_clock_gettime`);
/// forced in through libc, it is glibc's generic `syscall()`.
fn clock_gettime_libc() -> Box<dyn Routine> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    boxed("clock_gettime (libc syscall())", move |_| {
        let ptr = &mut ts as *mut libc::timespec;
        // SAFETY: clock_gettime writes one timespec to `ptr`, which points at `ts`.
        let ret = unsafe { libc::syscall(nr::CLOCK_GETTIME as _, libc::CLOCK_MONOTONIC, ptr) };
        black_box(&ts);
        from_libc(widen(ret))
    })
}

pub fn setup_clock_gettime(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    by_entry!(params, clock_gettime(), clock_gettime_libc())
}

// --- getpid, getppid ---

fn getpid<T: Trap>() -> Box<dyn Routine> {
    // SAFETY: getpid takes no argument and cannot fail.
    boxed("getpid", |_| unsafe { T::call0(nr::GETPID) })
}

pub fn setup_getpid(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    by_entry!(
        params,
        getpid(),
        // SAFETY: getpid takes no argument and cannot fail (glibc ≥ 2.25 does not cache it).
        boxed("getpid (libc)", |_| unsafe { libc::getpid() } as i64)
    )
}

fn getppid<T: Trap>() -> Box<dyn Routine> {
    // SAFETY: getppid takes no argument and cannot fail.
    boxed("getppid", |_| unsafe { T::call0(nr::GETPPID) })
}

fn getppid_libc() -> Box<dyn Routine> {
    // SAFETY: getppid takes no argument and cannot fail.
    boxed("getppid (libc)", |_| unsafe { libc::getppid() } as i64)
}

pub fn setup_getppid(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    by_entry!(params, getppid(), getppid_libc())
}

/// `syscall.getppid_libc`: the older name of `syscall.getppid entry=libc`.
pub fn setup_getppid_libc(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(getppid_libc())
}

// --- read, write ---

fn open(path: &str, write: bool) -> Result<File, SetupError> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open(path)
        .map_err(|e| SetupError::Failed(format!("cannot open {path}: {e}")))
}

fn read<T: Trap>(file: File, size: usize) -> Box<dyn Routine> {
    let mut buf = vec![0u8; size];
    boxed("read /dev/zero", move |_| {
        let fd = file.as_raw_fd() as i64;
        // SAFETY: `buf` is `size` writable bytes owned by this closure.
        let ret = unsafe { T::call3(nr::READ, fd, buf.as_mut_ptr() as i64, size as i64) };
        black_box(&buf);
        ret
    })
}

fn read_libc(file: File, size: usize) -> Box<dyn Routine> {
    let mut buf = vec![0u8; size];
    boxed("read /dev/zero (libc)", move |_| {
        // SAFETY: `buf` is `size` writable bytes owned by this closure.
        let ret = unsafe { libc::read(file.as_raw_fd(), buf.as_mut_ptr().cast(), size) };
        black_box(&buf);
        from_libc(ret as i64)
    })
}

pub fn setup_read(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let file = open("/dev/zero", false)?;
    let size = params.u64("size") as usize;
    by_entry!(params, read(file, size), read_libc(file, size))
}

fn write<T: Trap>(file: File, size: usize) -> Box<dyn Routine> {
    let buf = vec![0x5au8; size];
    boxed("write /dev/null", move |_| {
        let fd = file.as_raw_fd() as i64;
        // SAFETY: `buf` is `size` readable bytes owned by this closure.
        unsafe { T::call3(nr::WRITE, fd, buf.as_ptr() as i64, size as i64) }
    })
}

fn write_libc(file: File, size: usize) -> Box<dyn Routine> {
    let buf = vec![0x5au8; size];
    boxed("write /dev/null (libc)", move |_| {
        // SAFETY: `buf` is `size` readable bytes owned by this closure.
        from_libc(unsafe { libc::write(file.as_raw_fd(), buf.as_ptr().cast(), size) } as i64)
    })
}

pub fn setup_write(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let file = open("/dev/null", true)?;
    let size = params.u64("size") as usize;
    by_entry!(params, write(file, size), write_libc(file, size))
}

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

fn fstat<T: Trap>(file: File) -> Box<dyn Routine> {
    let mut buf: StatBuf = [0; 32];
    boxed("fstat", move |_| {
        let fd = file.as_raw_fd() as i64;
        // SAFETY: `buf` is large enough for the kernel's struct stat and owned by the closure.
        let ret = unsafe { T::call2(nr::FSTAT, fd, buf.as_mut_ptr() as i64) };
        black_box(&buf);
        ret
    })
}

fn fstat_libc(file: File) -> Box<dyn Routine> {
    // SAFETY: `libc::stat` is plain old data; all zeroes is a valid value.
    let mut buf: libc::stat = unsafe { std::mem::zeroed() };
    boxed("fstat (libc)", move |_| {
        // SAFETY: `buf` is a struct stat owned by the closure.
        let ret = unsafe { libc::fstat(file.as_raw_fd(), &mut buf) };
        black_box(&buf);
        from_libc(ret as i64)
    })
}

pub fn setup_fstat(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    c_path(params)?;
    let file = open(params.str("path"), false)?;
    by_entry!(params, fstat(file), fstat_libc(file))
}

fn stat<T: Trap>(path: CString) -> Box<dyn Routine> {
    let mut buf: StatBuf = [0; 32];
    boxed("stat", move |_| {
        let (dir, p, b) = (
            libc::AT_FDCWD as i64,
            path.as_ptr() as i64,
            buf.as_mut_ptr() as i64,
        );
        // SAFETY: `path` is NUL-terminated and `buf` large enough for struct stat.
        let ret = unsafe { T::call4(nr::NEWFSTATAT, dir, p, b, 0) };
        black_box(&buf);
        ret
    })
}

fn stat_libc(path: CString) -> Box<dyn Routine> {
    // SAFETY: `libc::stat` is plain old data; all zeroes is a valid value.
    let mut buf: libc::stat = unsafe { std::mem::zeroed() };
    boxed("stat (libc)", move |_| {
        // SAFETY: `path` is NUL-terminated and `buf` a struct stat owned by the closure.
        let ret = unsafe { libc::stat(path.as_ptr(), &mut buf) };
        black_box(&buf);
        from_libc(ret as i64)
    })
}

pub fn setup_stat(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let path = c_path(params)?;
    by_entry!(params, stat(path), stat_libc(path))
}

const OPEN_FLAGS: i32 = libc::O_RDONLY | libc::O_CLOEXEC;

fn open_close<T: Trap>(path: CString) -> Box<dyn Routine> {
    boxed("open+close", move |_| {
        let (dir, p) = (libc::AT_FDCWD as i64, path.as_ptr() as i64);
        // SAFETY: `path` is NUL-terminated; the descriptor opened is closed at once.
        unsafe {
            let fd = T::call3(nr::OPENAT, dir, p, OPEN_FLAGS as i64);
            if fd < 0 {
                return fd;
            }
            T::call1(nr::CLOSE, fd)
        }
    })
}

fn open_close_libc(path: CString) -> Box<dyn Routine> {
    boxed("open+close (libc)", move |_| {
        // SAFETY: `path` is NUL-terminated; the descriptor opened is closed at once.
        unsafe {
            let fd = libc::open(path.as_ptr(), OPEN_FLAGS);
            if fd < 0 {
                return from_libc(fd as i64);
            }
            from_libc(libc::close(fd) as i64)
        }
    })
}

pub fn setup_open_close(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let path = c_path(params)?;
    by_entry!(params, open_close(path), open_close_libc(path))
}

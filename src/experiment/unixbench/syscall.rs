//! unixbench.syscall: UnixBench's "System Call Overhead" (`syscall.c`, test `mix`, the one
//! its index runs): per loop `close(dup(fd))`, `getpid()`, `getuid()` and `umask(022)` on
//! the read end of a pipe whose write end is closed. UnixBench calls getpid through
//! `syscall(SYS_getpid)` to get past a C library that caches it; glibc has not cached getpid
//! since 2.25, so `getpid()` enters the kernel here as well (the syscall counter checks it).

use super::*;

crate::experiment::unix_setups!(routines => setup);

fn expectations(_: &Params) -> Vec<Expectation> {
    vec![
        syscalls_near(
            5.0,
            "dup, close, getpid, getuid and umask: five kernel entries per loop (a C library \
             that answered getpid or getuid from memory would show fewer)",
        ),
        no_faults("the loop allocates nothing"),
        no_switch("none of the five calls blocks"),
    ]
}

pub static SYSCALL: ExperimentInfo = ExperimentInfo::new(
    "unixbench.syscall",
    "UnixBench's System Call Overhead: close(dup(fd)), getpid(), getuid(), \
     umask(022) per loop",
    "loop",
    "libc dup, close, getpid, getuid, umask",
    setup,
)
.params(&[PLACEMENT_FREE_SAME])
.syscalls(|_| crate::experiment::each(&["dup", "close", "getpid", "getuid", "umask"]))
.outside_default_suite()
.expectations(expectations)
.cells(crate::experiment::unixbench::UNIXBENCH_FAMILY_CELLS);

/// The routine, POSIX's: close(dup(fd)), getpid, getuid, umask.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;
    use std::os::fd::{AsRawFd, OwnedFd};

    struct Mix {
        fd: OwnedFd,
    }

    impl Routine for Mix {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let fd = self.fd.as_raw_fd();
            for _ in 0..ops {
                // SAFETY: `fd` is open for the routine's life; the duplicate is closed at once.
                let copy = unsafe { libc::dup(fd) };
                if copy < 0 {
                    return Err(RoutineError::last_os("dup"));
                }
                // SAFETY: `copy` is the descriptor dup just returned, owned here.
                unsafe { libc::close(copy) };
                // SAFETY: getpid, getuid and umask have no preconditions.
                unsafe {
                    std::hint::black_box(libc::getpid());
                    std::hint::black_box(libc::getuid());
                    libc::umask(0o022);
                }
            }
            Ok(())
        }
    }

    pub(super) fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        place(params, ctx)?;
        let (read, write) = crate::experiment::pingpong::pipe(0)?;
        drop(write);
        Ok(Box::new(Mix { fd: read }))
    }
}

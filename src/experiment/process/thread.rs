//! process.thread: pthread_create and join of a thread that returns at once.

use super::*;

crate::experiment::unix_setups!(routines => setup_thread);

// --- process.thread ---

pub static THREAD: ExperimentInfo = ExperimentInfo::new(
    "process.thread",
    "pthread_create() of an empty thread, then pthread_join(): a task that shares \
     everything (on the worker's CPU)",
    "create+join",
    "glibc pthread_create (clone3) + pthread_join (futex)",
    setup_thread,
)
// The worker's clone3 between two rt_sigprocmask and its futex wait in join; the new
// thread's start-up (rseq, set_robust_list), the madvise that frees its stack's unused
// pages at exit, and its exit. The join waits on the futex only while the thread has not
// exited yet: a claims run here traced 0.989 per op (the thread finished first the rest).
.syscalls(|_| {
    let mut claims = crate::experiment::each(&[
        "clone3",
        "rt_sigprocmask",
        "rseq",
        "set_robust_list",
        "madvise",
        "exit",
    ]);
    claims.push(crate::experiment::Claim::at_least("futex", 0.9));
    claims
})
.ladder()
.expectations(thread_expectations)
.cells(crate::experiment::process::THREAD_CELLS);

/// The routine, POSIX's: pthread_create and pthread_join.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::{Context, Routine, RoutineError, SetupError};

    pub(super) extern "C" fn thread_body(_: *mut c_void) -> *mut c_void {
        std::ptr::null_mut()
    }

    /// A raw `pthread_create` with default attributes and an empty body, then `pthread_join`:
    /// the kernel's clone3 of a thread plus glibc's own work (its stack cache makes stacks
    /// reusable, so no mmap per thread), without Rust's `std::thread` bookkeeping (a name,
    /// an `Arc` packet, the spawn hooks).
    pub(super) struct Thread;

    impl Routine for Thread {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                let mut thread = std::mem::MaybeUninit::<libc::pthread_t>::uninit();
                // SAFETY: `thread` is writable storage for the id; null attributes mean the
                // defaults; `thread_body` is a valid `extern "C"` function that touches nothing.
                let rc = unsafe {
                    libc::pthread_create(
                        thread.as_mut_ptr(),
                        std::ptr::null(),
                        thread_body,
                        std::ptr::null_mut(),
                    )
                };
                if rc != 0 {
                    return Err(RoutineError::Os {
                        call: "pthread_create".into(),
                        source: std::io::Error::from_raw_os_error(rc),
                    });
                }
                // SAFETY: pthread_create succeeded, so `thread` holds a joinable thread id that
                // is joined exactly once.
                let rc = unsafe { libc::pthread_join(thread.assume_init(), std::ptr::null_mut()) };
                if rc != 0 {
                    return Err(RoutineError::Os {
                        call: "pthread_join".into(),
                        source: std::io::Error::from_raw_os_error(rc),
                    });
                }
            }
            Ok(())
        }
    }

    pub(super) fn setup_thread(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
        Ok(Box::new(Thread))
    }
}

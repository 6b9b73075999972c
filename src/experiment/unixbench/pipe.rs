//! unixbench.pipe: UnixBench's "Pipe Throughput" (`pipe.c`: one process writes 512 bytes
//! into a pipe and reads them back, per loop). Its partner test, context1, is in
//! `context1.rs`.

use super::*;

crate::experiment::unix_setups!(routines => setup_pipe);

fn pipe_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        syscalls_near(2.0, "one write and one read per loop"),
        no_switch(
            "512 bytes fit in an empty pipe and are there to read: neither call blocks, so the \
             process never sleeps",
        ),
        no_faults("the same 512-byte buffer every time"),
    ]
}

pub static PIPE: ExperimentInfo = ExperimentInfo::new(
    "unixbench.pipe",
    "UnixBench's Pipe Throughput: one process writes 512 bytes into a pipe and reads \
     them back, per loop",
    "loop",
    "libc write() and read() on one blocking pipe, no partner",
    setup_pipe,
)
.params(&[PLACEMENT_FREE_SAME])
.syscalls(|_| crate::experiment::each(&["write", "read"]))
.outside_default_suite()
.expectations(pipe_expectations)
.cells(crate::experiment::unixbench::UNIXBENCH_FAMILY_CELLS);

/// The routine, POSIX's: 512 bytes into a pipe and back.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;
    use crate::experiment::pingpong;
    use std::os::fd::{AsRawFd, OwnedFd};

    /// UnixBench's `char buf[512]`.
    const PIPE_BYTES: usize = 512;

    struct PipeThroughput {
        read: OwnedFd,
        write: OwnedFd,
        buf: [u8; PIPE_BYTES],
    }

    impl Routine for PipeThroughput {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let (r, w) = (self.read.as_raw_fd(), self.write.as_raw_fd());
            for _ in 0..ops {
                // SAFETY: `buf` is PIPE_BYTES readable and writable bytes.
                let n = unsafe { libc::write(w, self.buf.as_ptr().cast(), PIPE_BYTES) };
                if n != PIPE_BYTES as isize {
                    return Err(RoutineError::last_os("write of 512 bytes into the pipe"));
                }
                // SAFETY: as above.
                let n = unsafe { libc::read(r, self.buf.as_mut_ptr().cast(), PIPE_BYTES) };
                if n != PIPE_BYTES as isize {
                    return Err(RoutineError::last_os("read of 512 bytes from the pipe"));
                }
            }
            Ok(())
        }
    }

    pub(super) fn setup_pipe(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        place(params, ctx)?;
        let (read, write) = pingpong::pipe(0)?;
        Ok(Box::new(PipeThroughput {
            read,
            write,
            buf: [0x5a; PIPE_BYTES],
        }))
    }
}

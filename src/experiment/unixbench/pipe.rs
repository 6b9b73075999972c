//! unixbench.pipe and unixbench.context1: UnixBench's "Pipe Throughput" (`pipe.c`: one
//! process writes 512 bytes into a pipe and reads them back, per loop) and "Pipe-based
//! Context Switching" (`context1.c`: a round trip through two pipes with a forked child,
//! which echoes what it reads).
//!
//! context1 leaves both processes to the scheduler, as UnixBench does (`placement=free`, the
//! default); `same` pins both to the worker's CPU and `cross` to two CPUs (oslab's own
//! measurements, `ctxswitch.pipe`'s). What still differs: UnixBench sends its 8-byte loop
//! counter and checks the echo, oslab's ping-pong (`ctxswitch.pipe`'s) sends one byte.

use std::os::fd::{AsRawFd, OwnedFd};

use super::*;
use crate::experiment::pingpong::{self, Channel, PingPong};

/// UnixBench's `char buf[512]`.
const PIPE_BYTES: usize = 512;

struct PipeThroughput {
    read: OwnedFd,
    write: OwnedFd,
    buf: [u8; PIPE_BYTES],
}

impl Routine for PipeThroughput {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
        let (r, w) = (self.read.as_raw_fd(), self.write.as_raw_fd());
        for _ in 0..ops {
            // SAFETY: `buf` is PIPE_BYTES readable and writable bytes.
            let n = unsafe { libc::write(w, self.buf.as_ptr().cast(), PIPE_BYTES) };
            if n != PIPE_BYTES as isize {
                return Err(last_os_error("write of 512 bytes into the pipe"));
            }
            // SAFETY: as above.
            let n = unsafe { libc::read(r, self.buf.as_mut_ptr().cast(), PIPE_BYTES) };
            if n != PIPE_BYTES as isize {
                return Err(last_os_error("read of 512 bytes from the pipe"));
            }
        }
        Ok(())
    }
}

fn setup_pipe(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let (read, write) = pingpong::pipe(0)?;
    Ok(Box::new(PipeThroughput {
        read,
        write,
        buf: [0x5a; PIPE_BYTES],
    }))
}

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

pub static PIPE: ExperimentInfo = ExperimentInfo {
    name: "unixbench.pipe",
    os: crate::experiment::UNIX,
    summary: "UnixBench's Pipe Throughput: one process writes 512 bytes into a pipe and reads \
              them back, per loop",
    op: "loop",
    path: "libc write() and read() on one blocking pipe, no partner",
    params: &[],
    syscalls: |_| crate::experiment::each(&["write", "read"]),
    subtract_loop_overhead: false,
    default_suite: false,
    ladder: false,
    counters_in_samples: true,
    work_dir: false,
    expectations: pipe_expectations,
    setup: setup_pipe,
    preflight: None,
    batch: crate::experiment::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

/// `placement=free|same|cross`: UnixBench's unpinned pair, or `ctxswitch.pipe`'s pinnings.
const CONTEXT1_PLACEMENT: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["free", "same", "cross"]),
    default: "free",
    help: concat!(
        placement_free!(),
        "; same: both pinned to the worker's CPU; cross: the partner pinned to another CPU"
    ),
};

fn setup_context1(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let partner_cpu = if free(params) {
        unpin(ctx)?;
        None
    } else {
        Some(pingpong::place(params, ctx)?.partner)
    };
    Ok(Box::new(PingPong::start(Channel::Pipes, partner_cpu, 0)?))
}

fn context1_expectations(_: &Params) -> Vec<Expectation> {
    crate::experiment::ctxswitch::byte_round_trip_expectations(Channel::Pipes)
}

pub static CONTEXT1: ExperimentInfo = ExperimentInfo {
    name: "unixbench.context1",
    os: crate::experiment::UNIX,
    summary: "UnixBench's Pipe-based Context Switching: a round trip through two pipes with a \
              forked partner that echoes, per loop",
    op: "loop",
    path: "libc write()/read() on two blocking pipes, partner forked (unpinned by default)",
    params: &[CONTEXT1_PLACEMENT],
    syscalls: |_| crate::experiment::each(&["write", "read"]),
    subtract_loop_overhead: false,
    default_suite: false,
    ladder: false,
    counters_in_samples: false,
    work_dir: false,
    expectations: context1_expectations,
    setup: setup_context1,
    preflight: None,
    batch: crate::experiment::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

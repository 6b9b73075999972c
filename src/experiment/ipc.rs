//! Inter-process communication between a worker and a forked partner process, with the
//! placement stated (`same`: both pinned to one CPU; `cross`: the partner on another CPU).
//!
//! - `ipc.pipe_bandwidth`: the worker writes `size` bytes per operation into a pipe that the
//!   partner drains continuously. The figure is the time per transfer; the bandwidth is
//!   `size / median`. The pipe's capacity (`F_SETPIPE_SZ`/`F_GETPIPE_SZ`, 64 KiB by default
//!   on Linux) bounds how much a writer can hand over before it must wait for the reader: with
//!   `size` at or below the capacity and both sides on one CPU, every transfer is one fill of
//!   the pipe and one drain, with a switch each way. It is a parameter, set explicitly.
//! - `ipc.unix_latency`: a one-byte round trip over a connected pair of Unix stream sockets,
//!   the same ping-pong as `ctxswitch.pipe` over another channel.

use super::ctxswitch::{byte_round_trip_expectations, no_faults, syscalls_near};
use super::pingpong::{Channel, PLACEMENT_PARAM};
use super::{ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::Expectation;
use crate::model::equivalence as eq;

super::unix_setups!(routines => setup_pipe_bandwidth, setup_unix_latency);

// --- ipc.pipe_bandwidth ---

const SIZE_PARAM: ParamSpec = ParamSpec {
    name: "size",
    kind: ParamKind::Size {
        min: 1,
        max: 16 << 20,
    },
    default: "64K",
    help: "bytes per transfer (one blocking write(2)); bandwidth = size / median",
};

const CAPACITY_PARAM: ParamSpec = ParamSpec {
    name: "capacity",
    kind: ParamKind::Size {
        min: 4096,
        max: 1 << 20,
    },
    default: "64K",
    help: "the pipe's capacity, set with F_SETPIPE_SZ (Linux's default is 64K; a power of two \
           of pages; above the fs.pipe-max-size sysctl needs CAP_SYS_RESOURCE)",
};

fn bandwidth_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        syscalls_near(
            1.0,
            0.05,
            "one blocking write per transfer, however often it waits for the reader to make room",
        ),
        no_faults("the worker writes from the same buffer every time: no new memory"),
    ]
}

/// The worker's one write per transfer, and the partner's reads: each takes at most
/// `capacity` bytes, so at least size/capacity of them per transfer (16 for 1M through 64K).
/// With a size under the capacity a read may drain many transfers, and a short pass may
/// never fill the pipe, so that the partner, woken on another CPU, reads nothing before the
/// pass ends: any number of reads then.
fn bandwidth_calls(params: &Params) -> Vec<super::Claim> {
    let (size, capacity) = (params.u64("size"), params.u64("capacity").max(1));
    let read = if size < capacity {
        super::Claim::any_number("read")
    } else {
        super::Claim::at_least("read", size as f64 / capacity as f64)
    };
    vec![super::Claim::each("write"), read]
}

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[&PIPE_BANDWIDTH, &UNIX_LATENCY];

pub static PIPE_BANDWIDTH: ExperimentInfo = ExperimentInfo::new(
    "ipc.pipe_bandwidth",
    "the worker writes `size` bytes (64 KiB) per transfer into a pipe a partner process \
     drains; bandwidth = size / median; the pipe's capacity is a parameter",
    "transfer",
    "glibc write() of `size` bytes to a blocking pipe; partner read()s up to `capacity`",
    setup_pipe_bandwidth,
)
.params(&[SIZE_PARAM, CAPACITY_PARAM, PLACEMENT_PARAM])
.syscalls(bandwidth_calls)
.subtract_loop_overhead()
.counters_between_samples()
.expectations(bandwidth_expectations)
.cells(eq::Cells {
    linux: eq::runs("pipe sized with F_SETPIPE_SZ"),
    freebsd: eq::Cell::No("not available: a pipe's capacity cannot be set"),
    macos: eq::Cell::No("not available: a pipe's capacity cannot be set"),
    windows: eq::Cell::No("not available: CreatePipe's size is only a hint"),
});

// --- ipc.unix_latency ---

fn unix_latency_expectations(_: &Params) -> Vec<Expectation> {
    byte_round_trip_expectations(Channel::UnixSockets)
}

pub static UNIX_LATENCY: ExperimentInfo = ExperimentInfo::new(
    "ipc.unix_latency",
    "two processes ping-pong one byte over a Unix stream socket pair: a round trip, \
     two switches (compare ctxswitch.pipe)",
    "round trip",
    "glibc write()/read() on socketpair(AF_UNIX, SOCK_STREAM), partner forked and pinned",
    setup_unix_latency,
)
.params(&[PLACEMENT_PARAM])
.syscalls(|_| crate::experiment::each(&["write", "read"]))
.subtract_loop_overhead()
.counters_between_samples()
.expectations(unix_latency_expectations)
.cells(eq::Cells {
    linux: eq::runs("AF_UNIX socketpair"),
    freebsd: eq::runs("AF_UNIX socketpair"),
    macos: eq::noted(
        "AF_UNIX socketpair",
        "close-on-exec set by fcntl: no SOCK_CLOEXEC",
    ),
    windows: eq::Cell::No("not available: Windows has AF_UNIX sockets but no socketpair"),
});

/// The routines, POSIX's: a pipe or a socket pair to a forked partner.
#[cfg(unix)]
mod routines {
    use crate::experiment::pingpong::{self, Channel, PartnerProcess, PingPong};
    use crate::experiment::{Context, Params, Partner, Routine, RoutineError, SetupError};
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};

    /// The worker writes `buf` whole into the pipe per operation; the forked partner reads.
    struct PipeStream {
        out: RawFd,
        buf: Vec<u8>,
        /// The partner's read buffer, allocated before the fork (the child uses its copy).
        _sink: Vec<u8>,
        // Before `child`: closed first, so the partner reads end of file and exits by itself.
        _fd: OwnedFd,
        child: PartnerProcess,
    }

    impl Routine for PipeStream {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                let mut done = 0;
                while done < self.buf.len() {
                    let rest = &self.buf[done..];
                    // SAFETY: `rest` is readable for its length.
                    let n = unsafe { libc::write(self.out, rest.as_ptr().cast(), rest.len()) };
                    if n < 0 {
                        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                            continue;
                        }
                        return Err(RoutineError::last_os("write to the partner's pipe"));
                    }
                    done += n as usize;
                }
            }
            Ok(())
        }

        fn partner(&self) -> Option<Partner> {
            Some(self.child.partner())
        }

        fn min_batch(&self) -> Option<u64> {
            Some(pingpong::MIN_BATCH)
        }
    }

    /// Set the pipe's capacity to exactly `capacity` bytes, or say why it cannot be.
    pub(super) fn set_capacity(fd: RawFd, capacity: usize) -> Result<(), SetupError> {
        crate::platform::pipe::set_capacity(fd, capacity)
            .map_err(|e| SetupError::Unsupported(e.to_string()))
    }

    pub(super) fn setup_pipe_bandwidth(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let cpus = pingpong::place(params, ctx)?;
        let size = params.u64("size") as usize;
        let capacity = params.u64("capacity") as usize;
        let (r, w) = pingpong::pipe(0)?;
        set_capacity(w.as_raw_fd(), capacity)?;
        // The worker's data, every page touched now so no write faults later.
        let buf = vec![0x5au8; size];
        let mut sink = vec![0u8; capacity];
        let (input, sink_ptr, sink_len) = (r.as_raw_fd(), sink.as_mut_ptr(), sink.len());
        let child = PartnerProcess::spawn(Some(cpus.partner), &[input], move || {
            loop {
                // SAFETY: the child's copy of `sink` is `sink_len` writable bytes.
                let n = unsafe { libc::read(input, sink_ptr.cast(), sink_len) };
                if n <= 0 {
                    // End of file (the worker closed its end or died) or an error: stop.
                    return 0;
                }
            }
        })?;
        drop(r);
        Ok(Box::new(PipeStream {
            out: w.as_raw_fd(),
            buf,
            _sink: sink,
            _fd: w,
            child,
        }))
    }

    pub(super) fn setup_unix_latency(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let cpus = pingpong::place(params, ctx)?;
        Ok(Box::new(PingPong::start(
            Channel::UnixSockets,
            Some(cpus.partner),
            0,
        )?))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::routines::*;
    use super::*;
    #[cfg(target_os = "linux")]
    use crate::experiment::pingpong;
    use crate::experiment::{Context, SetupError};
    #[cfg(target_os = "linux")]
    use std::os::fd::AsRawFd;

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::from_pairs(pairs)
    }

    // Linux's F_SETPIPE_SZ rounding; elsewhere a capacity cannot be set at all.
    #[cfg(target_os = "linux")]
    #[test]
    fn capacity_is_set_exactly_or_refused_with_a_reason() {
        let (_r, w) = pingpong::pipe(0).unwrap();
        set_capacity(w.as_raw_fd(), 64 << 10).unwrap();
        // SAFETY: fcntl on our own pipe.
        let got = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GETPIPE_SZ) };
        assert_eq!(got, 64 << 10);
        match set_capacity(w.as_raw_fd(), 12 << 10) {
            Err(SetupError::Unsupported(reason)) => assert!(reason.contains("power of two")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bandwidth_and_unix_latency_run_with_a_partner() {
        let cpu = *crate::platform::cpu::allowed().last().unwrap();
        let ctx = Context {
            cpu: Some(cpu),
            ..Context::default()
        };
        // Pinning the worker pins the calling thread: use a thread of its own.
        std::thread::spawn(move || {
            let p = params(&[("size", "100K"), ("capacity", "64K"), ("placement", "same")]);
            // Where a pipe's capacity cannot be set (FreeBSD, macOS) the experiment is not
            // enabled, and its setup says so.
            match setup_pipe_bandwidth(&p, &ctx) {
                Ok(mut r) => {
                    r.run(20).unwrap();
                    assert!(r.partner().is_some());
                }
                Err(SetupError::Unsupported(why)) => {
                    assert!(!PIPE_BANDWIDTH.runs_here(), "{why}");
                }
                Err(e) => panic!("{e:?}"),
            }
            let mut r = setup_unix_latency(&params(&[("placement", "same")]), &ctx).unwrap();
            r.run(100).unwrap();
            assert!(r.partner().is_some());
        })
        .join()
        .unwrap();
    }
}

//! The partner machinery's code: placement, descriptors, the working set, the one-byte
//! ping-pong.

use crate::experiment::RoutineError;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::super::{Context, Params, Partner, Routine, SetupError};
use super::{Channel, partner::*};
use crate::platform::cpu;

/// Where the two sides of an experiment run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Same,
    Cross,
}

impl Placement {
    pub fn of(params: &Params) -> Placement {
        match params.str("placement") {
            "cross" => Placement::Cross,
            _ => Placement::Same,
        }
    }
}

/// The CPUs of the two sides: `(worker, partner)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpus {
    pub worker: usize,
    pub partner: usize,
}

/// Decide the CPUs of both sides for `placement` (pure, for tests).
pub fn choose_cpus(placement: Placement, ctx: &Context) -> Result<Cpus, SetupError> {
    let worker = ctx.cpu.ok_or_else(|| {
        SetupError::Unsupported(
            "a placement needs a pinned worker, and pinning is unavailable here".to_string(),
        )
    })?;
    let partner = match placement {
        Placement::Same => worker,
        Placement::Cross => ctx.other_cpu.filter(|&o| o != worker).ok_or_else(|| {
            SetupError::Unsupported(format!(
                "placement=cross needs a second CPU, but this process may only use CPU {worker} \
                 (its affinity, e.g. taskset, or --cpu allows one CPU); give --cpu A,B with two \
                 allowed CPUs"
            ))
        })?,
    };
    Ok(Cpus { worker, partner })
}

/// Choose the CPUs for `placement` and pin the calling (worker) thread to its one CPU: the
/// worker may have been pinned to a list (`--cpu 0,1`), and `same` must mean one CPU.
pub fn place(params: &Params, ctx: &Context) -> Result<Cpus, SetupError> {
    let cpus = choose_cpus(Placement::of(params), ctx)?;
    pin_worker(cpus.worker)?;
    Ok(cpus)
}

/// Pin the calling thread to `cpu`.
pub fn pin_worker(cpu: usize) -> Result<(), SetupError> {
    if let Some(why) = cpu::pinning_refusal() {
        return Err(SetupError::Unsupported(format!(
            "its placement needs pinned processes: {why}"
        )));
    }
    cpu::pin(&[cpu])
        .map_err(|e| SetupError::Failed(format!("cannot pin the worker to CPU {cpu}: {e}")))
}

// --- descriptors ---

/// A pipe as (read end, write end), close-on-exec, with extra `flags` (e.g. O_NONBLOCK).
pub fn pipe(flags: libc::c_int) -> Result<(OwnedFd, OwnedFd), SetupError> {
    crate::platform::pipe::pipe_cloexec(flags)
        .map_err(|e| SetupError::Failed(format!("pipe failed: {e}")))
}

/// A connected pair of Unix stream sockets, close-on-exec.
pub fn socketpair() -> Result<(OwnedFd, OwnedFd), SetupError> {
    crate::platform::pipe::socketpair_cloexec()
        .map_err(|e| SetupError::Failed(format!("socketpair(AF_UNIX, SOCK_STREAM) failed: {e}")))
}

/// Write one byte; `Err` with the reason when it was not written.
#[inline]
pub fn write_byte(fd: RawFd, byte: u8, what: &str) -> Result<(), RoutineError> {
    // SAFETY: one readable byte at `&byte`.
    let n = unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    if n == 1 {
        Ok(())
    } else {
        Err(RoutineError::last_os(format!("write to {what}")))
    }
}

/// Read one byte; `Err` with the reason on end of file or error.
#[inline]
pub fn read_byte(fd: RawFd, what: &str) -> Result<u8, RoutineError> {
    let mut byte = 0u8;
    // SAFETY: one writable byte at `&mut byte`.
    let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
    match n {
        1 => Ok(byte),
        0 => Err(RoutineError::Check(format!(
            "read from {what}: end of file (the partner has gone)"
        ))),
        _ => Err(RoutineError::last_os(format!("read from {what}"))),
    }
}

// --- the one-byte ping-pong (ctxswitch.pipe, ipc.unix_latency) ---

/// The worker side of a one-byte ping-pong with a forked partner: one operation writes a byte
/// to the partner and reads its answer, a round trip. With a working set, each side sums its
/// own N KiB after receiving the byte (lmbench `lat_ctx -s`), and the baseline is the worker
/// summing both halves without any switch.
pub struct PingPong {
    out: RawFd,
    inp: RawFd,
    what: &'static str,
    /// The worker's half and the partner's half (the child reads its copy of the mapping).
    working_sets: Option<(WorkingSet, WorkingSet)>,
    // Declared before `child`, so they are closed first: the partner then reads end of file
    // and exits by itself before `child` is dropped, which reaps (or kills and reaps) it.
    _fds: Vec<OwnedFd>,
    child: PartnerProcess,
}

impl PingPong {
    /// Start the partner, pinned to `partner_cpu` (`None`: unpinned, on the worker's CPUs).
    pub fn start(
        channel: Channel,
        partner_cpu: Option<usize>,
        working_set_bytes: usize,
    ) -> Result<PingPong, SetupError> {
        let working_sets = if working_set_bytes > 0 {
            Some((
                WorkingSet::new(working_set_bytes)?,
                WorkingSet::new(working_set_bytes)?,
            ))
        } else {
            None
        };
        // (worker's descriptors, partner's descriptors: read, write)
        let (worker_fds, partner_in, partner_out, partner_fds, what) = match channel {
            Channel::Pipes => {
                let (to_r, to_w) = pipe(0)?;
                let (from_r, from_w) = pipe(0)?;
                let (pin, pout) = (to_r.as_raw_fd(), from_w.as_raw_fd());
                (
                    vec![to_w, from_r],
                    pin,
                    pout,
                    vec![to_r, from_w],
                    "the partner's pipe",
                )
            }
            Channel::UnixSockets => {
                let (mine, theirs) = socketpair()?;
                let fd = theirs.as_raw_fd();
                (vec![mine], fd, fd, vec![theirs], "the partner's socket")
            }
        };
        let (out, inp) = match channel {
            Channel::Pipes => (worker_fds[0].as_raw_fd(), worker_fds[1].as_raw_fd()),
            Channel::UnixSockets => (worker_fds[0].as_raw_fd(), worker_fds[0].as_raw_fd()),
        };
        let partner_ws = working_sets.as_ref().map(|(_, theirs)| theirs);
        let keep: Vec<RawFd> = partner_fds.iter().map(|fd| fd.as_raw_fd()).collect();
        let child = PartnerProcess::spawn(partner_cpu, &keep, || {
            echo_loop(partner_in, partner_out, partner_ws)
        })?;
        // The partner's ends belong to the child now: closing ours lets it see end of file
        // when the worker closes (or loses) its own.
        drop(partner_fds);
        Ok(PingPong {
            out,
            inp,
            what,
            working_sets,
            _fds: worker_fds,
            child,
        })
    }
}

/// The fewest operations a batch of a two-process hand-off holds. A batch is sized to last a
/// millisecond, and across CPUs of a busy machine one round trip takes that long (the partner
/// waits for its CPU), so batches of one or two round trips were taken; a stray page fault of
/// the worker in one sample of forty then read 0.026 faults a round trip against a claim of
/// fewer than 0.01. With 128 a stray fault per sample stays under 0.008 an operation, and a
/// round trip pinned to one CPU (~5 µs) sizes its batch above 128 anyway.
pub const MIN_BATCH: u64 = 128;

impl Routine for PingPong {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        let mut byte = 0x5au8;
        for _ in 0..ops {
            write_byte(self.out, byte, self.what)?;
            byte = read_byte(self.inp, self.what)?;
            if let Some((mine, _)) = &self.working_sets {
                mine.touch();
            }
        }
        Ok(())
    }

    fn partner(&self) -> Option<Partner> {
        Some(self.child.partner())
    }

    fn min_batch(&self) -> Option<u64> {
        Some(MIN_BATCH)
    }

    fn run_baseline(&mut self, ops: u64) -> Option<Result<(), RoutineError>> {
        let (mine, theirs) = self.working_sets.as_ref()?;
        for _ in 0..ops {
            mine.touch();
            theirs.touch();
        }
        Some(Ok(()))
    }
}

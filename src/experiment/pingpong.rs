//! The partner machinery shared by the two-party experiments (`ctxswitch.*`, `ipc.*`): where
//! the two sides run (`placement`), a forked partner process that dies with the worker and is
//! always reaped, a pinned partner thread, pipes and socket pairs, a working set to touch
//! between hops, and futex wait/wake.
//!
//! A forked partner runs only async-signal-safe code between `fork` and `_exit` (the worker
//! may hold locks in other threads at the moment of the fork): read, write, futex, sched_yield,
//! prctl, close_range and plain loads and stores over memory mapped before the fork. It never
//! allocates and never returns into Rust code that could unwind.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::mapping::Anon;
use super::{Context, ParamKind, ParamSpec, Params, Partner, Routine, SetupError};
use crate::platform::cpu;

/// `placement=same|cross`: both sides pinned to one CPU, or to two different CPUs.
pub const PLACEMENT_PARAM: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["same", "cross"]),
    default: "same",
    help: "same: both sides pinned to the worker's CPU; cross: the partner pinned to another CPU \
           (the second --cpu, else the highest other allowed CPU; its idle state matters)",
};

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
    cpu::pin(&[cpu])
        .map_err(|e| SetupError::Failed(format!("cannot pin the worker to CPU {cpu}: {e}")))
}

/// The text of the last OS error, prefixed with what failed.
pub fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn setup_failed(what: &str) -> SetupError {
    SetupError::Failed(os_error(what))
}

// --- descriptors ---

/// A pipe as (read end, write end), close-on-exec, with extra `flags` (e.g. O_NONBLOCK).
pub fn pipe(flags: libc::c_int) -> Result<(OwnedFd, OwnedFd), SetupError> {
    let mut fds = [-1 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | flags) } != 0 {
        return Err(setup_failed("pipe2"));
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A connected pair of Unix stream sockets, close-on-exec.
pub fn socketpair() -> Result<(OwnedFd, OwnedFd), SetupError> {
    let mut fds = [-1 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(setup_failed("socketpair(AF_UNIX, SOCK_STREAM)"));
    }
    // SAFETY: socketpair succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Write one byte; `Err` with the reason when it was not written.
#[inline]
pub fn write_byte(fd: RawFd, byte: u8, what: &str) -> Result<(), String> {
    // SAFETY: one readable byte at `&byte`.
    let n = unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    if n == 1 {
        Ok(())
    } else {
        Err(os_error(&format!("write to {what}")))
    }
}

/// Read one byte; `Err` with the reason on end of file or error.
#[inline]
pub fn read_byte(fd: RawFd, what: &str) -> Result<u8, String> {
    let mut byte = 0u8;
    // SAFETY: one writable byte at `&mut byte`.
    let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
    match n {
        1 => Ok(byte),
        0 => Err(format!(
            "read from {what}: end of file (the partner has gone)"
        )),
        _ => Err(os_error(&format!("read from {what}"))),
    }
}

// --- a working set touched between hops (lmbench lat_ctx -s) ---

/// `working_set_kb=N`: each side touches N KiB between hops.
pub const WORKING_SET_PARAM: ParamSpec = ParamSpec {
    name: "working_set_kb",
    kind: ParamKind::Int { min: 0, max: 16384 },
    default: "0",
    help: "KiB each side sums between hops (lmbench lat_ctx -s; try 64); the cost of summing \
           both sides' KiB without switching is measured and subtracted",
};

/// An anonymous private mapping of `words` u64s, every page written at creation so each has
/// its own physical page (an untouched page would be the shared zero page, and a switch
/// could not evict anything).
pub struct WorkingSet {
    map: Anon,
    words: usize,
}

impl WorkingSet {
    pub fn new(bytes: usize) -> Result<WorkingSet, SetupError> {
        let map = Anon::private(bytes.max(8))?;
        let set = WorkingSet {
            words: map.len() / 8,
            map,
        };
        let ptr = set.map.ptr().cast::<u64>();
        for i in 0..set.words {
            // SAFETY: `i` is within the mapping, which is readable, writable and 8-aligned.
            unsafe { ptr.add(i).write(i as u64 | 1) };
        }
        Ok(set)
    }

    /// Sum every word: loads of all its cache lines. Async-signal-safe (no allocation).
    #[inline(never)]
    pub fn touch(&self) -> u64 {
        // SAFETY: the mapping holds `words` initialised u64s and lives as long as `self`.
        let words = unsafe { std::slice::from_raw_parts(self.map.ptr().cast::<u64>(), self.words) };
        std::hint::black_box(words.iter().fold(0u64, |a, &w| a.wrapping_add(w)))
    }
}

// --- a forked partner process ---

/// Descriptors a partner process keeps open (everything else is closed in the child).
const MAX_KEPT_FDS: usize = 8;

/// A forked partner process. Dropping it waits a moment for the child to end by itself (its
/// pipes were closed first), then kills it, and always reaps it: no process is left behind.
/// The child also has `PR_SET_PDEATHSIG(SIGKILL)`, so it dies with the worker if the worker
/// is killed, and it shares the worker's process group, which the harness kills on a time-out.
pub struct PartnerProcess {
    pid: libc::pid_t,
    reaped: bool,
}

impl PartnerProcess {
    /// Fork a child that keeps only the descriptors in `keep`, is pinned to `cpu`, runs `body`
    /// and exits with its result. `body` runs in the forked child: it must be
    /// async-signal-safe (no allocation, no locks, no panics) — see the module comment.
    pub fn spawn<F: FnOnce() -> i32>(
        cpu: usize,
        keep: &[RawFd],
        body: F,
    ) -> Result<PartnerProcess, SetupError> {
        if keep.len() > MAX_KEPT_FDS {
            return Err(SetupError::Failed(format!(
                "a partner keeps at most {MAX_KEPT_FDS} descriptors"
            )));
        }
        // Everything the child needs is prepared before the fork.
        let mut kept = [RawFd::MAX; MAX_KEPT_FDS];
        kept[..keep.len()].copy_from_slice(keep);
        kept[..keep.len()].sort_unstable();
        let kept_len = keep.len();
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };

        // SAFETY: fork has no memory-safety preconditions; the child below only makes
        // async-signal-safe calls and leaves with _exit, never returning from this function.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(setup_failed("fork of the partner process"));
        }
        if pid == 0 {
            // The child. SAFETY (whole block): prctl, getppid, close_range, close and _exit
            // are async-signal-safe system calls on plain integers.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                // The worker may have died before the flag was set: nobody would stop us.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                close_all_but(&kept[..kept_len]);
            }
            let code = body();
            // SAFETY: _exit ends the child without running the parent's destructors/atexit.
            unsafe { libc::_exit(code) };
        }
        let child = PartnerProcess { pid, reaped: false };
        // Pin from the parent, so a failure is reported here (the child may run briefly on
        // the worker's CPU first, before its first hop).
        pin_task(pid, cpu).map_err(|e| {
            SetupError::Failed(format!("cannot pin the partner process to CPU {cpu}: {e}"))
        })?;
        Ok(child)
    }

    /// The partner as the harness reads it from /proc (single-threaded: tid = pid).
    pub fn partner(&self) -> Partner {
        Partner {
            pid: self.pid,
            tid: self.pid,
        }
    }

    /// Wait up to `grace` for the child to exit by itself, then kill it; reap it either way.
    pub fn stop(&mut self, grace: Duration) {
        if self.reaped {
            return;
        }
        let deadline = Instant::now() + grace;
        loop {
            let mut status = 0;
            // SAFETY: `pid` is our own child, not yet reaped.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if rc == self.pid || (rc < 0 && errno() != libc::EINTR) {
                self.reaped = true;
                return;
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // SAFETY: signalling our own unreaped child (the pid cannot have been reused).
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        loop {
            let mut status = 0;
            // SAFETY: as above; blocking until the killed child is gone.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc == self.pid || (rc < 0 && errno() != libc::EINTR) {
                break;
            }
        }
        self.reaped = true;
    }
}

impl Drop for PartnerProcess {
    fn drop(&mut self) {
        self.stop(Duration::from_millis(200));
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Close every descriptor of the calling process except `keep` (sorted ascending).
/// Async-signal-safe: close_range(2) over the gaps, else close(2) of the standard streams.
///
/// # Safety
/// Only for a freshly forked child: descriptors owned by Rust objects are closed under them.
unsafe fn close_all_but(keep: &[RawFd]) {
    let mut first: u32 = 0;
    for &fd in keep {
        let fd = fd as u32;
        if fd > first {
            // SAFETY: closing descriptors of this child only (see the function's contract).
            let rc = unsafe { libc::syscall(libc::SYS_close_range, first, fd - 1, 0u32) };
            if rc != 0 {
                // No close_range (Linux < 5.9): at least let go of the worker's stdio pipes.
                for std_fd in first..fd.min(3) {
                    // SAFETY: as above.
                    unsafe { libc::close(std_fd as RawFd) };
                }
            }
        }
        first = fd + 1;
    }
    // SAFETY: as above.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first, u32::MAX, 0u32) };
    if rc != 0 {
        for std_fd in first..3 {
            // SAFETY: as above.
            unsafe { libc::close(std_fd as RawFd) };
        }
    }
}

/// Pin task `pid` (a process or thread id) to `cpu`.
pub fn pin_task(pid: libc::pid_t, cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The partner side of a one-byte ping-pong, for a forked child: read a byte from `input`,
/// touch `working_set` (if any), write it back to `output`, until end of file. Returns the
/// exit code. Async-signal-safe.
pub fn echo_loop(input: RawFd, output: RawFd, working_set: Option<&WorkingSet>) -> i32 {
    let mut byte = 0u8;
    loop {
        // SAFETY: one writable byte at `&mut byte`.
        let n = unsafe { libc::read(input, (&mut byte as *mut u8).cast(), 1) };
        if n != 1 {
            // End of file (the worker closed its side or died) or an error: stop.
            return 0;
        }
        if let Some(ws) = working_set {
            ws.touch();
        }
        // SAFETY: one readable byte at `&byte`.
        let n = unsafe { libc::write(output, (&byte as *const u8).cast(), 1) };
        if n != 1 {
            return 0;
        }
    }
}

// --- the one-byte ping-pong (ctxswitch.pipe, ipc.unix_latency) ---

/// What carries the byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// Two pipes, one per direction.
    Pipes,
    /// One connected pair of Unix stream sockets.
    UnixSockets,
}

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
    pub fn start(
        channel: Channel,
        cpus: Cpus,
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
        let child = PartnerProcess::spawn(cpus.partner, &keep, || {
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

impl Routine for PingPong {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), String> {
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

    fn run_baseline(&mut self, ops: u64) -> Option<Result<(), String>> {
        let (mine, theirs) = self.working_sets.as_ref()?;
        for _ in 0..ops {
            mine.touch();
            theirs.touch();
        }
        Some(Ok(()))
    }
}

// --- futex wait/wake on a word in shared memory ---

/// Two futex words in a `MAP_SHARED | MAP_ANONYMOUS` page, so a forked child shares them
/// (a private mapping would be copied on write by the fork).
pub struct SharedWords {
    map: Anon,
}

// SAFETY: the mapping is only accessed through atomics, from any thread.
unsafe impl Send for SharedWords {}
// SAFETY: as above.
unsafe impl Sync for SharedWords {}

const SHARED_LEN: usize = 4096;

impl SharedWords {
    pub fn new() -> Result<SharedWords, SetupError> {
        Ok(SharedWords {
            map: Anon::shared(SHARED_LEN)?,
        })
    }

    /// Word `i` (0 or 1).
    pub fn word(&self, i: usize) -> &AtomicU32 {
        assert!(i < 2);
        // SAFETY: the page is mapped for the lifetime of `self`, zero-initialised (a valid
        // AtomicU32) and aligned; `i` is within it.
        unsafe { &*self.map.ptr().cast::<AtomicU32>().add(i) }
    }
}

/// FUTEX_WAIT: sleep while `*word == expected`. Returns 0 or `-errno` (EAGAIN when the word
/// had already changed, EINTR). Async-signal-safe.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32, private: bool) -> i64 {
    let op = libc::FUTEX_WAIT | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; no timeout.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc < 0 { -(errno() as i64) } else { rc as i64 }
}

/// FUTEX_WAKE: wake up to `n` waiters on `word`. Returns how many, or `-errno`.
/// Async-signal-safe.
#[inline]
pub fn futex_wake(word: &AtomicU32, n: i32, private: bool) -> i64 {
    let op = libc::FUTEX_WAKE | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            n,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc < 0 { -(errno() as i64) } else { rc as i64 }
}

/// The turn-taking protocol of the futex ping-pong, on two words: `seq` counts hops (odd: the
/// partner's turn, even: the worker's), `stop` asks the partner to leave. Each side waits
/// only while `seq` still holds the value it saw, so a wake-up that comes before the wait is
/// never lost (FUTEX_WAIT compares and sleeps atomically).
pub struct Turns<'a> {
    pub seq: &'a AtomicU32,
    pub stop: &'a AtomicU32,
    pub private: bool,
}

impl Turns<'_> {
    /// One round trip from the worker's side; `next` is the worker's even value.
    #[inline]
    pub fn worker_round_trip(&self, next: &mut u32) -> Result<(), String> {
        let ask = next.wrapping_add(1);
        let want = next.wrapping_add(2);
        self.seq.store(ask, Ordering::Release);
        let rc = futex_wake(self.seq, 1, self.private);
        if rc < 0 {
            return Err(format!(
                "futex wake failed: {}",
                std::io::Error::from_raw_os_error(-rc as i32)
            ));
        }
        loop {
            let v = self.seq.load(Ordering::Acquire);
            if v == want {
                break;
            }
            if v != ask {
                return Err(format!(
                    "futex protocol broken: expected {ask} or {want}, found {v}"
                ));
            }
            let rc = futex_wait(self.seq, ask, self.private);
            if rc < 0 && rc != -(libc::EAGAIN as i64) && rc != -(libc::EINTR as i64) {
                return Err(format!(
                    "futex wait failed: {}",
                    std::io::Error::from_raw_os_error(-rc as i32)
                ));
            }
        }
        *next = want;
        Ok(())
    }

    /// The partner's loop: answer each odd value with the next even one, until `stop`.
    /// Async-signal-safe (atomics and futex calls only). Returns the exit code.
    pub fn partner_loop(&self) -> i32 {
        let mut expect: u32 = 1;
        loop {
            if self.stop.load(Ordering::Acquire) != 0 {
                return 0;
            }
            let v = self.seq.load(Ordering::Acquire);
            if v == expect {
                self.seq.store(v.wrapping_add(1), Ordering::Release);
                futex_wake(self.seq, 1, self.private);
                expect = expect.wrapping_add(2);
                continue;
            }
            // EAGAIN (changed meanwhile) and EINTR just loop; the stop flag is checked first.
            futex_wait(self.seq, v, self.private);
        }
    }

    /// Ask the partner to leave: set `stop`, change `seq` so a wait about to start returns at
    /// once, and wake every waiter.
    pub fn stop_partner(&self) {
        self.stop.store(1, Ordering::Release);
        self.seq.fetch_add(2, Ordering::AcqRel);
        futex_wake(self.seq, i32::MAX, self.private);
    }
}

#[cfg(test)]
mod tests;

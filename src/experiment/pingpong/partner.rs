//! A forked partner process: pinned, holding only the descriptors it needs, echoing until told
//! to stop; the working set both sides touch between hops, and the setup errors they share.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use crate::experiment::mapping::Anon;
use crate::experiment::{Partner, SetupError};
use crate::platform::{cpu, process};

// --- a forked partner process ---

/// Descriptors a partner process keeps open (everything else is closed in the child).
pub(super) const MAX_KEPT_FDS: usize = 8;

/// A forked partner process. Dropping it waits a moment for the child to end by itself (its
/// pipes were closed first), then kills it, and always reaps it: no process is left behind.
/// The child is also tied to the worker (`platform::process::die_with_parent_of`), so it dies with the worker if the worker
/// is killed, and it shares the worker's process group, which the harness kills on a time-out.
pub struct PartnerProcess {
    pub(super) pid: libc::pid_t,
    pub(super) reaped: bool,
}

impl PartnerProcess {
    /// Fork a child that keeps only the descriptors in `keep`, is pinned to `cpu` (`None`: it
    /// keeps the worker's CPUs, as a forked child does), runs `body`
    /// and exits with its result. `body` runs in the forked child: it must be
    /// async-signal-safe (no allocation, no locks, no panics) — see the module comment.
    pub fn spawn<F: FnOnce() -> i32>(
        cpu: Option<usize>,
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
            // The child. SAFETY (whole block): die_with_parent_of, close_all_but and _exit make
            // only async-signal-safe system calls on plain integers, in a fresh child.
            unsafe {
                if !process::die_with_parent_of(parent as u32) {
                    libc::_exit(1);
                }
                process::close_all_but(&kept[..kept_len]);
            }
            let code = body();
            // SAFETY: _exit ends the child without running the parent's destructors/atexit.
            unsafe { libc::_exit(code) };
        }
        let child = PartnerProcess { pid, reaped: false };
        // Pin from the parent, so a failure is reported here (the child may run briefly on
        // the worker's CPU first, before its first hop).
        if let Some(cpu) = cpu {
            cpu::pin_task(pid, &[cpu]).map_err(|e| {
                SetupError::Failed(format!("cannot pin the partner process to CPU {cpu}: {e}"))
            })?;
        }
        Ok(child)
    }

    /// The partner as the harness reads its usage (single-threaded: tid = pid).
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

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
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

/// The text of the last OS error, prefixed with what failed.
pub fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

pub(super) fn setup_failed(what: &str) -> SetupError {
    SetupError::Failed(os_error(what))
}

// --- a working set touched between hops (lmbench lat_ctx -s) ---

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

//! A forked partner process: pinned, holding only the descriptors it needs, echoing until told to stop.

use super::*;

// --- a forked partner process ---

/// Descriptors a partner process keeps open (everything else is closed in the child).
pub(super) const MAX_KEPT_FDS: usize = 8;

/// A forked partner process. Dropping it waits a moment for the child to end by itself (its
/// pipes were closed first), then kills it, and always reaps it: no process is left behind.
/// The child also has `PR_SET_PDEATHSIG(SIGKILL)`, so it dies with the worker if the worker
/// is killed, and it shares the worker's process group, which the harness kills on a time-out.
pub struct PartnerProcess {
    pub(super) pid: libc::pid_t,
    pub(super) reaped: bool,
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

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Close every descriptor of the calling process except `keep` (sorted ascending).
/// Async-signal-safe: close_range(2) over the gaps, else close(2) of the standard streams.
///
/// # Safety
/// Only for a freshly forked child: descriptors owned by Rust objects are closed under them.
pub(super) unsafe fn close_all_but(keep: &[RawFd]) {
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

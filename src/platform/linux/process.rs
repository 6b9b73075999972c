//! Processes: this process's lifetime tied to its parent's (a worker or load process must
//! never outlive the oslab that started it), whether another one still lives, its
//! descriptors after a fork, its standing with the OOM killer.

use std::os::fd::RawFd;

/// Ask the kernel to send this process SIGKILL when its parent dies (Ctrl-C, kill), with
/// prctl(PR_SET_PDEATHSIG) (prctl(2)).
pub fn die_with_parent() {
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag on this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
}

pub use super::super::unix::process::{Group, ending, is_alive};

/// Whether process `pid` has ended: gone, or a zombie (dead, waiting to be reaped).
pub fn has_ended(pid: libc::pid_t) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => stat
            .rfind(')')
            .is_none_or(|end| stat[end + 1..].trim_start().starts_with('Z')),
    }
}

/// Make this process the OOM killer's first choice (oom_score_adj 1000), so that a memory
/// competitor is the one killed, never the measured worker.
pub fn prefer_for_oom_kill() -> std::io::Result<()> {
    std::fs::write("/proc/self/oom_score_adj", "1000")
}

/// Close every descriptor of the calling process except `keep` (sorted ascending).
/// Async-signal-safe: close_range(2) over the gaps, else close(2) of the standard streams.
///
/// # Safety
/// Only for a freshly forked child: descriptors owned by Rust objects are closed under them.
pub unsafe fn close_all_but(keep: &[RawFd]) {
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

/// Die with the parent, as [`die_with_parent`], and say whether the parent is still
/// `parent`: it may have died before the flag was set, and then nobody would stop this
/// process (false: exit now). Async-signal-safe, for a freshly forked child.
pub fn die_with_parent_of(parent: u32) -> bool {
    die_with_parent();
    // SAFETY: getppid has no preconditions.
    (unsafe { libc::getppid() }) as u32 == parent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness() {
        assert!(is_alive(std::process::id()));
        // pid_max is at most 2^22: this pid cannot exist.
        assert!(!is_alive(1 << 30));
        assert!(!is_alive(u32::MAX));
        assert!(!has_ended(std::process::id() as libc::pid_t));
        assert!(has_ended(1 << 30));
    }
}

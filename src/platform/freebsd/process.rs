//! Processes on FreeBSD: this process's lifetime tied to its parent's with procctl(2)
//! PROC_PDEATHSIG_CTL, whether another one still lives (kill(2), `kinfo_proc`'s state), its
//! descriptors after a fork (closefrom(2)).

use std::os::fd::RawFd;

pub use super::super::unix::process::{Group, ending, is_alive};

/// Ask the kernel to send this process SIGKILL when its parent dies (procctl(2)
/// PROC_PDEATHSIG_CTL, FreeBSD 11.2 and later).
pub fn die_with_parent() {
    let mut signal: libc::c_int = libc::SIGKILL;
    // SAFETY: procctl on this process (P_PID 0) with a pointer to an int, as the call asks.
    unsafe {
        libc::procctl(
            libc::P_PID,
            0,
            libc::PROC_PDEATHSIG_CTL,
            (&mut signal as *mut libc::c_int).cast(),
        )
    };
}

/// Die with the parent, as [`die_with_parent`], and say whether the parent is still
/// `parent` (false: it died before the flag was set; exit now). Async-signal-safe.
pub fn die_with_parent_of(parent: u32) -> bool {
    die_with_parent();
    // SAFETY: getppid has no preconditions.
    (unsafe { libc::getppid() }) as u32 == parent
}

/// Whether process `pid` has ended: gone, or a zombie (its `kinfo_proc` state is SZOMB).
pub fn has_ended(pid: libc::pid_t) -> bool {
    super::rusage::kinfo(pid, false)
        .first()
        .is_none_or(|k| k.ki_stat == libc::SZOMB)
}

/// FreeBSD's OOM killer picks the largest process and has no score to adjust: nothing to do.
pub fn prefer_for_oom_kill() -> std::io::Result<()> {
    Ok(())
}

/// Close every descriptor of the calling process except `keep` (sorted ascending): close(2)
/// over the gaps, closefrom(2) past the last. Async-signal-safe.
///
/// # Safety
/// Only for a freshly forked child: descriptors owned by Rust objects are closed under them.
pub unsafe fn close_all_but(keep: &[RawFd]) {
    let mut first: RawFd = 0;
    for &fd in keep {
        for gap in first..fd {
            // SAFETY: closing descriptors of this child only (see the function's contract).
            unsafe { libc::close(gap) };
        }
        first = fd + 1;
    }
    // SAFETY: as above.
    unsafe { libc::closefrom(first) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness() {
        assert!(is_alive(std::process::id()));
        assert!(!has_ended(std::process::id() as libc::pid_t));
        assert!(has_ended(1 << 30));
    }
}

//! Processes on macOS. macOS has no parent-death signal (no PR_SET_PDEATHSIG or
//! PROC_PDEATHSIG_CTL), so a watcher thread waits in kqueue(2) for the parent's exit
//! (EVFILT_PROC NOTE_EXIT) and then kills this process with SIGKILL: it sleeps in the kernel
//! until then, and costs the measurement nothing. Descriptors are closed one by one.

use std::os::fd::RawFd;

pub use super::super::unix::process::{Group, ending, is_alive};

/// The watcher: block until process `parent` exits, then SIGKILL this process. Also when the
/// parent is already gone (kevent refuses to watch it: ESRCH).
extern "C" fn watch(parent: *mut libc::c_void) -> *mut libc::c_void {
    let parent = parent as usize as libc::uintptr_t;
    // SAFETY: kqueue, kevent, getpid and kill with plain values and a stack-held kevent; no
    // allocation, so this is safe in a freshly forked child too.
    unsafe {
        let kq = libc::kqueue();
        if kq >= 0 {
            let mut change: libc::kevent = std::mem::zeroed();
            change.ident = parent;
            change.filter = libc::EVFILT_PROC;
            change.flags = libc::EV_ADD | libc::EV_ONESHOT;
            change.fflags = libc::NOTE_EXIT;
            let mut event: libc::kevent = std::mem::zeroed();
            // Returns when the parent exits, or at once with an error when it is gone.
            libc::kevent(kq, &change, 1, &mut event, 1, std::ptr::null());
        }
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::ptr::null_mut()
}

/// Start the watcher of `parent` (see the module); false when no thread could be started.
fn watch_parent(parent: libc::pid_t) -> bool {
    // SAFETY: an all-zero pthread_t is a valid out-parameter; `watch` takes the pid by value
    // in the pointer and touches no memory of ours.
    unsafe {
        let mut thread: libc::pthread_t = std::mem::zeroed();
        let rc = libc::pthread_create(
            &mut thread,
            std::ptr::null(),
            watch,
            parent as usize as *mut libc::c_void,
        );
        if rc == 0 {
            libc::pthread_detach(thread);
        }
        rc == 0
    }
}

/// Be killed when the parent dies (the kqueue watcher above).
pub fn die_with_parent() {
    // SAFETY: getppid has no preconditions.
    watch_parent(unsafe { libc::getppid() });
}

/// Die with the parent, as [`die_with_parent`], and say whether the parent is still
/// `parent` (false: it died first, or no watcher could start; exit now). For a freshly
/// forked child: the watcher allocates nothing (pthread_create maps its stack).
pub fn die_with_parent_of(parent: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(parent) else {
        return false;
    };
    // SAFETY: getppid has no preconditions.
    watch_parent(pid) && (unsafe { libc::getppid() }) == pid
}

/// Whether process `pid` has ended: gone, or a zombie (proc_pidinfo finds no task for it).
pub fn has_ended(pid: libc::pid_t) -> bool {
    super::rusage::task_info(pid).is_none()
}

/// macOS's memory-pressure killer (jetsam) has no per-process score to raise here: nothing.
pub fn prefer_for_oom_kill() -> std::io::Result<()> {
    Ok(())
}

/// Close every descriptor of the calling process except `keep` (sorted ascending), one
/// close(2) each up to the descriptor table's size (macOS has no closefrom).
/// Async-signal-safe.
///
/// # Safety
/// Only for a freshly forked child: descriptors owned by Rust objects are closed under them.
pub unsafe fn close_all_but(keep: &[RawFd]) {
    // SAFETY: getdtablesize has no preconditions.
    let top = unsafe { libc::getdtablesize() }.clamp(3, 1 << 16);
    for fd in 0..top {
        if keep.binary_search(&fd).is_err() {
            // SAFETY: closing descriptors of this child only (see the function's contract).
            unsafe { libc::close(fd) };
        }
    }
}

//! This process's lifetime tied to its parent's: a worker or load process must never outlive
//! the oslab that started it.

/// Ask the kernel to send this process SIGKILL when its parent dies (Ctrl-C, kill), with
/// prctl(PR_SET_PDEATHSIG) (prctl(2)).
pub fn die_with_parent() {
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag on this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
}

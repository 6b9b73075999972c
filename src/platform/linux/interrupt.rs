//! Ctrl-C (SIGINT), SIGTERM and SIGHUP during a run: the parent notes the request, kills the
//! running worker's process group, removes its directories, stores what was measured, and
//! exits with 130 — instead of dying at once and leaving files or half a result behind.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked oslab to stop, or 0.
static REQUESTED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    REQUESTED.store(signal, Ordering::SeqCst);
}

/// Install the handlers (once, in the parent of a run).
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: an all-zero sigaction is valid; the handler only stores to an atomic, and
        // the mask and flags are set explicitly.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The signal that asked oslab to stop, if one did.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

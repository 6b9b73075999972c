//! Ctrl-C, Ctrl-Break and closing the console during a run: a console control handler notes
//! the request, as the Unix signal handlers do, so the run kills its worker's job, removes its
//! directories, stores what was measured and exits with 130.

use std::sync::atomic::{AtomicI32, Ordering};

use windows_sys::Win32::Foundation::{FALSE, TRUE};
use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
    SetConsoleCtrlHandler,
};
use windows_sys::core::BOOL;

/// The request's number (the C runtime's SIGINT = 2 for Ctrl-C, SIGBREAK = 21 for Ctrl-Break,
/// SIGTERM = 15 for the others), or 0.
static REQUESTED: AtomicI32 = AtomicI32::new(0);

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;
const SIGBREAK: i32 = 21;

unsafe extern "system" fn note(event: u32) -> BOOL {
    let signal = match event {
        CTRL_C_EVENT => SIGINT,
        CTRL_BREAK_EVENT => SIGBREAK,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => SIGTERM,
        _ => return FALSE,
    };
    REQUESTED.store(signal, Ordering::SeqCst);
    // The console runs this handler on a thread of its own: waking the waiters is safe here.
    crate::platform::contract::wakers::wake();
    TRUE
}

pub use crate::platform::contract::wakers::{Subscription, on_request};

/// Install the handler (once, in the parent of a run).
pub fn install() {
    // SAFETY: the handler stores to an atomic and wakes the waiters, on its own thread.
    unsafe { SetConsoleCtrlHandler(Some(note), TRUE) };
}

/// What asked oslab to stop, if anything did.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The name of a request or of the C runtime's signal number.
pub fn signal_name(signal: i32) -> String {
    match signal {
        SIGINT => "Ctrl-C".into(),
        SIGBREAK => "Ctrl-Break".into(),
        SIGTERM => "closing the console".into(),
        other => format!("signal {other}"),
    }
}

/// Windows has no signal for a file past a size limit: nothing to ignore.
pub fn ignore_file_size_limit_signal() {}

/// Windows has no file-size limit of a process.
pub fn file_size_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(signal_name(SIGINT), "Ctrl-C");
        assert_eq!(signal_name(64), "signal 64");
        assert_eq!(requested(), None);
    }
}

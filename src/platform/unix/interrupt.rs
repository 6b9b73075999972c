//! Ctrl-C (SIGINT), SIGTERM and SIGHUP during a run: the parent notes the request, kills the
//! running worker's process group, removes its directories, stores what was measured, and
//! exits with 130 — instead of dying at once and leaving files or half a result behind.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// The signal that asked oslab to stop, or 0.
static REQUESTED: AtomicI32 = AtomicI32::new(0);

/// The signals `install` handles.
const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Which of them oslab found ignored when it installed its handlers (bit N: signal N), as a
/// background job or nohup leaves them.
static IGNORED_AT_START: AtomicU64 = AtomicU64::new(0);

pub use crate::platform::contract::wakers::{Subscription, on_request};

/// The write end of the pipe whose reader wakes the subscribers (`on_request`), or -1.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn note(signal: libc::c_int) {
    // An atomic store and a write of one byte to a non-blocking pipe: async-signal-safe. A
    // full pipe (requests no one has read yet) drops the byte: a wake is already pending.
    REQUESTED.store(signal, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: one readable byte at `&byte`; errno is saved and restored around the call,
        // so the interrupted code does not see it change.
        unsafe {
            let saved = *errno();
            libc::write(fd, (&byte as *const u8).cast(), 1);
            *errno() = saved;
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn errno() -> *mut libc::c_int {
    // SAFETY: the thread's errno location.
    unsafe { libc::__errno_location() }
}

#[cfg(any(target_os = "freebsd", target_os = "macos"))]
unsafe fn errno() -> *mut libc::c_int {
    // SAFETY: the thread's errno location.
    unsafe { libc::__error() }
}

/// The pipe the handler writes to and a thread that reads it and wakes the subscribers. Without
/// it (no pipe or no thread: out of descriptors) a request still sets the flag, and a waiter
/// that polls sees it; one that sleeps until its deadline sees it then.
fn start_waking() {
    use std::os::fd::{AsRawFd, IntoRawFd};
    if WAKE_FD.load(Ordering::SeqCst) >= 0 {
        return;
    }
    let Ok((read, write)) = crate::platform::unix::fds::pipe_cloexec(0) else {
        return;
    };
    // The write end alone non-blocking: the handler must never block; the reader sleeps.
    // SAFETY: F_GETFL/F_SETFL on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(write.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(write.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let spawned = std::thread::Builder::new()
        .name("oslab-interrupt".into())
        .spawn(move || {
            let mut file = std::fs::File::from(read);
            let mut byte = [0u8; 1];
            loop {
                match std::io::Read::read(&mut file, &mut byte) {
                    Ok(1) => crate::platform::contract::wakers::wake(),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    _ => break,
                }
            }
        });
    if spawned.is_ok() {
        // Kept open for the life of the process: the handler may write at any time.
        WAKE_FD.store(write.into_raw_fd(), Ordering::SeqCst);
    }
}

/// Install the handlers (once, in the parent of a run).
pub fn install() {
    start_waking();
    for signal in HANDLED {
        // SAFETY: an all-zero sigaction is valid; the handler only stores to an atomic, and
        // the mask and flags are set explicitly; `old` is written by the call.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
            {
                IGNORED_AT_START.fetch_or(1 << signal, Ordering::SeqCst);
            }
        }
    }
}

/// In a forked child before its execve: ignore again the signals oslab found ignored, so that
/// a program oslab runs (`oslab trace -- CMD`) starts with the dispositions oslab was given,
/// as it would under strace or from the shell (a handled signal is reset to its default by
/// the execve itself; an ignored one stays ignored, and programs such as dd and sh install
/// their handlers only when it is not). Async-signal-safe: sigaction on plain values.
pub fn restore_inherited() {
    let ignored = IGNORED_AT_START.load(Ordering::SeqCst);
    for signal in HANDLED {
        if ignored & (1 << signal) != 0 {
            // SAFETY: SIG_IGN with an empty mask; no pointer but the action itself.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_IGN;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
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

/// The name of a signal (`SIGSEGV`), or `signal N` for one without a usual name.
pub fn signal_name(signal: i32) -> String {
    const NAMES: [(i32, &str); 24] = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGCONT, "SIGCONT"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    NAMES.iter().find(|(n, _)| *n == signal).map_or_else(
        || format!("signal {signal}"),
        |(_, name)| (*name).to_string(),
    )
}

/// Ignore SIGXFSZ, whose default action kills the process without a word when a file would
/// grow past the file-size limit (`ulimit -f`): the write fails with EFBIG instead, and the
/// command says so in one line.
pub fn ignore_file_size_limit_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no memory-safety preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// The file-size limit (`ulimit -f`) in bytes, `None` when unlimited.
pub fn file_size_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0;
    // rlim_t is u64 on Linux and the BSDs, i64 on none oslab builds for.
    #[allow(clippy::unnecessary_cast)]
    let current = limit.rlim_cur as u64;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(signal_name(libc::SIGXFSZ), "SIGXFSZ");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(64), "signal 64");
    }
}

//! FreeBSD's futex: _umtx_op(2) UMTX_OP_WAIT_UINT and UMTX_OP_WAKE (and their `_PRIVATE`
//! forms), sleeping on a 32-bit word until another task changes it and wakes the sleepers.

use std::sync::atomic::AtomicU32;

/// Sleep while `*word == expected`. Returns 0 (also when the word had already changed:
/// FreeBSD does not answer EAGAIN there) or `-errno` (EINTR). Async-signal-safe.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32, private: bool) -> i64 {
    let op = if private {
        libc::UMTX_OP_WAIT_UINT_PRIVATE
    } else {
        libc::UMTX_OP_WAIT_UINT
    };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; no timeout.
    let rc = unsafe {
        libc::_umtx_op(
            word.as_ptr().cast(),
            op,
            expected as libc::c_ulong,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if rc < 0 { -(errno() as i64) } else { 0 }
}

/// Wake up to `n` waiters on `word`. Returns 0 (FreeBSD does not say how many woke) or
/// `-errno`. Async-signal-safe.
#[inline]
pub fn futex_wake(word: &AtomicU32, n: i32, private: bool) -> i64 {
    let op = if private {
        libc::UMTX_OP_WAKE_PRIVATE
    } else {
        libc::UMTX_OP_WAKE
    };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call.
    let rc = unsafe {
        libc::_umtx_op(
            word.as_ptr().cast(),
            op,
            n.max(0) as libc::c_ulong,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if rc < 0 { -(errno() as i64) } else { 0 }
}

/// The calling thread's errno. Async-signal-safe.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

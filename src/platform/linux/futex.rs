//! Futexes (futex(2)): sleep on a 32-bit word until another task changes it and wakes the
//! sleepers — the kernel's cheapest way for one task to wait for another.

use std::sync::atomic::AtomicU32;

/// FUTEX_WAIT: sleep while `*word == expected`. Returns 0 or `-errno` (EAGAIN when the word
/// had already changed, EINTR). Async-signal-safe.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32, private: bool) -> i64 {
    let op = libc::FUTEX_WAIT | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; no timeout.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc < 0 { -(errno() as i64) } else { rc as i64 }
}

/// FUTEX_WAKE: wake up to `n` waiters on `word`. Returns how many, or `-errno`.
/// Async-signal-safe.
#[inline]
pub fn futex_wake(word: &AtomicU32, n: i32, private: bool) -> i64 {
    let op = libc::FUTEX_WAKE | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            n,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc < 0 { -(errno() as i64) } else { rc as i64 }
}

/// The calling thread's errno. Async-signal-safe.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_returns_at_once_when_the_word_differs_and_wake_finds_no_waiter() {
        let word = AtomicU32::new(1);
        assert_eq!(futex_wait(&word, 0, true), -(libc::EAGAIN as i64));
        assert_eq!(futex_wake(&word, 1, true), 0);
        assert_eq!(futex_wake(&word, 1, false), 0);
    }
}

//! No futex on macOS: `__ulock_wait`/`__ulock_wake` exist but are private to libSystem, so
//! the futex experiments declare Linux and FreeBSD only. Each call fails with ENOSYS.

use std::sync::atomic::AtomicU32;

/// Unsupported: returns `-ENOSYS`.
#[inline]
pub fn futex_wait(_word: &AtomicU32, _expected: u32, _private: bool) -> i64 {
    -(libc::ENOSYS as i64)
}

/// Unsupported: returns `-ENOSYS`.
#[inline]
pub fn futex_wake(_word: &AtomicU32, _n: i32, _private: bool) -> i64 {
    -(libc::ENOSYS as i64)
}

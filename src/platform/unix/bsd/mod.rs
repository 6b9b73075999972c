//! What FreeBSD and macOS share from their common BSD past: sysctl by name, clock_gettime by
//! clock id, statfs with the file system's name in it, the environment's common part, memory
//! without Linux's PSI and THP, pipes whose capacity cannot be set.

pub mod env;
pub mod memory;
pub mod mount;
pub mod pipe;
pub mod sysctl;

/// Clock `id` (clock_gettime(2)) in nanoseconds.
pub fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the backends pass clocks their system has.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

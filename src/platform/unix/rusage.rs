//! getrusage(2) deltas: the kernel's own per-process accounting, on every Unix.

use crate::model::Rusage;

/// Resource usage of the calling process so far.
pub fn this_process() -> Rusage {
    get(libc::RUSAGE_SELF)
}

/// Resource usage of the children of this process that have been reaped so far.
pub fn reaped_children() -> Rusage {
    get(libc::RUSAGE_CHILDREN)
}

/// Resource usage of the calling thread alone (RUSAGE_THREAD), where the system keeps it:
/// what `--copy-mode threads` needs, so the copies beside the measured thread do not count in
/// its samples. `None` on macOS, which has no per-thread getrusage.
pub fn this_thread() -> Option<Rusage> {
    #[cfg(any(target_os = "linux", target_os = "freebsd"))]
    return Some(get(libc::RUSAGE_THREAD));
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    None
}

fn get(who: libc::c_int) -> Rusage {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; `who` is RUSAGE_SELF, RUSAGE_CHILDREN or RUSAGE_THREAD.
    unsafe { libc::getrusage(who, &mut ru) };
    from_libc(&ru)
}

/// Convert the C struct (as also returned by wait4). `ru_maxrss` is in KiB on Linux and
/// FreeBSD but in bytes on macOS (getrusage(2) there), converted here.
// `suseconds_t` is an i32 on macOS and an i64 elsewhere: the cast is needed there only.
#[allow(clippy::unnecessary_cast)]
pub fn from_libc(ru: &libc::rusage) -> Rusage {
    let us = |tv: libc::timeval| tv.tv_sec * 1_000_000 + tv.tv_usec as i64;
    Rusage {
        utime_us: us(ru.ru_utime),
        stime_us: us(ru.ru_stime),
        maxrss_kb: ru.ru_maxrss / MAXRSS_UNIT,
        minflt: ru.ru_minflt,
        majflt: ru.ru_majflt,
        inblock: ru.ru_inblock,
        oublock: ru.ru_oublock,
        nvcsw: ru.ru_nvcsw,
        nivcsw: ru.ru_nivcsw,
    }
}

/// What one unit of `ru_maxrss` is, in KiB: getrusage(2) on macOS counts bytes.
#[cfg(target_os = "macos")]
const MAXRSS_UNIT: i64 = 1024;
#[cfg(not(target_os = "macos"))]
const MAXRSS_UNIT: i64 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_used_cpu_time() {
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let r = this_process();
        assert!(r.utime_us + r.stime_us > 0);
        assert!(r.maxrss_kb > 0);
    }
}

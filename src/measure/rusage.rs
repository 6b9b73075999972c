//! getrusage(2) deltas: the kernel's own per-process accounting, available without perf.

use crate::model::Rusage;

/// Resource usage of the calling process so far.
pub fn this_process() -> Rusage {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; RUSAGE_SELF cannot fail with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    from_libc(&ru)
}

/// Convert the C struct (as also returned by wait4).
pub fn from_libc(ru: &libc::rusage) -> Rusage {
    let us = |tv: libc::timeval| tv.tv_sec * 1_000_000 + tv.tv_usec;
    Rusage {
        utime_us: us(ru.ru_utime),
        stime_us: us(ru.ru_stime),
        maxrss_kb: ru.ru_maxrss,
        minflt: ru.ru_minflt,
        majflt: ru.ru_majflt,
        inblock: ru.ru_inblock,
        oublock: ru.ru_oublock,
        nvcsw: ru.ru_nvcsw,
        nivcsw: ru.ru_nivcsw,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn touching_memory_counts_minor_faults() {
        let before = super::this_process();
        let mut v = vec![0u8; 16 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let after = super::this_process();
        let d = crate::model::Rusage::delta(&before, &after);
        assert!(
            d.minflt >= 1000,
            "4096 pages touched, {} minor faults",
            d.minflt
        );
        assert!(d.maxrss_kb >= 16 << 10);
    }
}

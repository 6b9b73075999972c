//! Why the kernel does not trust the CPU's time-stamp counter ([`TscDistrust`]): what each
//! backend's `clock::kernel_trusts_tsc` returns when its kernel says so.

/// The kernel's own verdict against the TSC.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TscDistrust {
    /// Linux found it unstable (it drifts between CPUs, say) and dropped it from the clock
    /// sources listed in `list`.
    #[error("the kernel marked the TSC unstable (not in {list})")]
    NotAClockSource { list: &'static str },
    /// FreeBSD rates it with a negative quality in `kern.timecounter.choice`.
    #[error("FreeBSD rates the TSC unusable (quality {0} in kern.timecounter.choice)")]
    Unusable(i64),
    /// FreeBSD does not list it among its timecounters (the list as it reads).
    #[error("the TSC is not among FreeBSD's timecounters (kern.timecounter.choice: {0})")]
    NotATimecounter(String),
}

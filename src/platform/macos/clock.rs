//! The operating system's clock on macOS: CLOCK_MONOTONIC_RAW, which is mach_absolute_time
//! in nanoseconds (it runs on while the machine sleeps; CLOCK_UPTIME_RAW does not).

pub use crate::platform::contract::clock::TscDistrust;

/// The name the system clock of [`monotonic_raw_ns`] is stored under (a run's clock source)
/// and how it is written in text.
pub const MONOTONIC_NAME: &str = "clock_monotonic_raw";
pub const MONOTONIC_TITLE: &str = "CLOCK_MONOTONIC_RAW";

/// CLOCK_MONOTONIC_RAW in nanoseconds: monotonic, not slewed by NTP.
pub fn monotonic_raw_ns() -> u64 {
    super::super::unix::bsd::clock_ns(libc::CLOCK_MONOTONIC_RAW)
}

/// macOS does not say whether it distrusts the TSC (its timebase is the TSC on Intel Macs,
/// and on Apple silicon oslab reads CNTVCT_EL0 instead): the CPUID checks decide.
pub fn kernel_trusts_tsc() -> Result<(), TscDistrust> {
    Ok(())
}

//! The operating system's clock and what the kernel thinks of the CPU's time-stamp counter.

pub use crate::platform::contract::clock::TscDistrust;

/// The name the system clock of [`monotonic_raw_ns`] is stored under (a run's clock source)
/// and how it is written in text.
pub const MONOTONIC_NAME: &str = "clock_monotonic_raw";
pub const MONOTONIC_TITLE: &str = "CLOCK_MONOTONIC_RAW";

/// CLOCK_MONOTONIC_RAW in nanoseconds: monotonic, not slewed by NTP.
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists since Linux 2.6.28.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

const CLOCKSOURCES: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// Whether the kernel still trusts the TSC, or why not: a kernel that found it unstable
/// (e.g. it drifts between CPUs) drops it from the available clock sources. Unknown (the
/// list cannot be read) counts as trusted; the CPUID checks come first anyway.
pub fn kernel_trusts_tsc() -> Result<(), TscDistrust> {
    match std::fs::read_to_string(CLOCKSOURCES) {
        Ok(list) if !list.split_whitespace().any(|c| c == "tsc") => {
            Err(TscDistrust::NotAClockSource { list: CLOCKSOURCES })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances() {
        let a = monotonic_raw_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(monotonic_raw_ns() - a >= 1_000_000);
    }
}

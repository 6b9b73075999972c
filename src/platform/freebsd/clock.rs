//! The operating system's clock and what the kernel thinks of the CPU's time-stamp counter.

pub use crate::platform::contract::clock::TscDistrust;

/// The name the system clock of [`monotonic_raw_ns`] is stored under (a run's clock source)
/// and how it is written in text.
pub const MONOTONIC_NAME: &str = "clock_monotonic_precise";
pub const MONOTONIC_TITLE: &str = "CLOCK_MONOTONIC_PRECISE";

/// CLOCK_MONOTONIC_PRECISE in nanoseconds: FreeBSD has no CLOCK_MONOTONIC_RAW; its monotonic
/// clock follows the timecounter with NTP's frequency correction, read precisely (not the
/// tick-cached `_FAST` variant).
pub fn monotonic_raw_ns() -> u64 {
    super::super::unix::bsd::clock_ns(libc::CLOCK_MONOTONIC_PRECISE)
}

/// Whether FreeBSD trusts the TSC, or why not: it rates every timecounter it found in
/// `kern.timecounter.choice` (`TSC-low(1000) ACPI-fast(900) i8254(0)`), and a negative
/// quality means it found the TSC unusable (unsynchronised between CPUs, or variable).
/// Unknown (unreadable) counts as trusted; the CPUID checks come first anyway.
pub fn kernel_trusts_tsc() -> Result<(), TscDistrust> {
    match super::super::unix::bsd::sysctl::string("kern.timecounter.choice") {
        Some(choice) => judge(&choice),
        None => Ok(()),
    }
}

fn judge(choice: &str) -> Result<(), TscDistrust> {
    let tsc = choice.split_whitespace().find_map(|entry| {
        let (name, quality) = entry.split_once('(')?;
        name.starts_with("TSC")
            .then(|| quality.trim_end_matches(')').parse::<i64>().ok())
            .flatten()
    });
    match tsc {
        Some(q) if q >= 0 => Ok(()),
        Some(q) => Err(TscDistrust::Unusable(q)),
        None => Err(TscDistrust::NotATimecounter(choice.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timecounter_choice() {
        assert_eq!(
            judge("TSC-low(1000) ACPI-fast(900) i8254(0) dummy(-1000000)"),
            Ok(())
        );
        assert_eq!(
            judge("TSC-low(-100) HPET(950)"),
            Err(TscDistrust::Unusable(-100))
        );
        assert!(matches!(
            judge("HPET(950) i8254(0)"),
            Err(TscDistrust::NotATimecounter(_))
        ));
    }

    #[test]
    fn advances() {
        let a = monotonic_raw_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(monotonic_raw_ns() - a >= 1_000_000);
    }
}

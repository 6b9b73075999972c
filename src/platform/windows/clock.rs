//! The operating system's clock on Windows: QueryPerformanceCounter, which Windows backs with
//! the invariant TSC where it has one (and says so through its frequency).

pub use crate::platform::contract::clock::TscDistrust;

use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};

/// The counter's frequency, ticks per second (fixed at boot).
fn frequency() -> u64 {
    static FREQUENCY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *FREQUENCY.get_or_init(|| {
        let mut hz = 0i64;
        // SAFETY: a valid pointer to a local.
        unsafe { QueryPerformanceFrequency(&mut hz) };
        u64::try_from(hz).ok().filter(|&hz| hz > 0).unwrap_or(1)
    })
}

/// The name the system clock of [`monotonic_raw_ns`] is stored under (a run's clock source)
/// and how it is written in text.
pub const MONOTONIC_NAME: &str = "query_performance_counter";
pub const MONOTONIC_TITLE: &str = "QueryPerformanceCounter";

/// QueryPerformanceCounter in nanoseconds: monotonic and not slewed by time synchronisation.
pub fn monotonic_raw_ns() -> u64 {
    let mut ticks = 0i64;
    // SAFETY: a valid pointer to a local; the call cannot fail since Windows XP.
    unsafe { QueryPerformanceCounter(&mut ticks) };
    let ticks = u64::try_from(ticks).unwrap_or(0);
    let hz = frequency();
    // Split to keep full precision without overflowing u64 (10 MHz: ~58 000 years).
    (ticks / hz) * 1_000_000_000 + (ticks % hz) * 1_000_000_000 / hz
}

/// Windows does not say whether it distrusts the TSC (QueryPerformanceCounter falls back to
/// another timer on its own): the CPUID checks of `measure::clock` decide.
pub fn kernel_trusts_tsc() -> Result<(), TscDistrust> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_forward() {
        let a = monotonic_raw_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(monotonic_raw_ns() > a);
    }
}

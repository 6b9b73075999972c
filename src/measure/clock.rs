//! The clock samples are timed with.
//!
//! The CPU's counter when it can be trusted: on x86-64 the TSC, when it is invariant (CPUID
//! 0x8000_0007 EDX bit 8) and the kernel still trusts it (it is among the available
//! clocksources); on aarch64 the generic timer's CNTVCT_EL0, when reading it is not trapped
//! and CNTFRQ_EL0 states its true rate. Either way its rate must calibrate stably against
//! CLOCK_MONOTONIC_RAW: two consecutive calibration windows must agree. Reads are fenced so the
//! timed region cannot leak out of them (each architecture's module says how). Otherwise
//! CLOCK_MONOTONIC_RAW, with the reason stored.

use crate::model::ClockInfo;
use crate::platform::clock::TscDistrust;

/// Why the CPU's counter is not used (the run is timed with the system's clock then, and this
/// is the reason stored with it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unusable {
    #[error("the CPU has no RDTSCP instruction")]
    NoRdtscp,
    #[error("CPUID does not report an invariant TSC (0x80000007 EDX bit 8)")]
    NotInvariant,
    /// The kernel itself does not trust the TSC.
    #[error(transparent)]
    Kernel(#[from] TscDistrust),
    #[error("CNTFRQ_EL0 reads 0: firmware did not set the generic timer's frequency")]
    NoFrequency,
    /// A read costs this many ns: the kernel traps and emulates it.
    #[error(
        "reading CNTVCT_EL0 costs {0:.0} ns: the kernel traps and emulates it (an erratum \
         workaround), so it is no cheaper than CLOCK_MONOTONIC_RAW"
    )]
    Trapped(f64),
    #[error(
        "CNTFRQ_EL0 says {:.3} MHz but the counter runs at {:.3} MHz against \
         CLOCK_MONOTONIC_RAW (firmware set the wrong frequency)",
        architected_hz / 1e6,
        calibrated_hz / 1e6
    )]
    WrongFrequency {
        architected_hz: f64,
        calibrated_hz: f64,
    },
    /// Consecutive calibration windows still differed by this many ppm.
    #[error(
        "its frequency did not calibrate stably (consecutive 20 ms windows differ by {0:.0} ppm)"
    )]
    Unstable(f64),
    /// No counter oslab can read on this architecture.
    #[error("oslab reads no cycle counter on {0}")]
    NoCounter(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    /// The CPU's counter (`counter::NAME`: the TSC, CNTVCT_EL0), ticking `hz` times a second.
    Counter {
        hz: f64,
    },
    MonotonicRaw,
}

/// Which clock to use, as asked on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChoice {
    Auto,
    Counter,
    Monotonic,
}

impl Clock {
    /// A reading to start a timed region.
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self {
            Clock::Counter { .. } => counter::start(),
            Clock::MonotonicRaw => monotonic_raw_ns(),
        }
    }

    /// A reading to end a timed region.
    #[inline(always)]
    pub fn stop(&self) -> u64 {
        match self {
            Clock::Counter { .. } => counter::stop(),
            Clock::MonotonicRaw => monotonic_raw_ns(),
        }
    }

    /// Nanoseconds between two readings.
    pub fn ns(&self, from: u64, to: u64) -> f64 {
        let ticks = to.wrapping_sub(from) as f64;
        match self {
            Clock::Counter { hz } => ticks * 1e9 / hz,
            Clock::MonotonicRaw => ticks,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Clock::Counter { .. } => counter::NAME,
            Clock::MonotonicRaw => crate::platform::clock::MONOTONIC_NAME,
        }
    }

    /// Average cost of one start/stop pair: what a timed region gains from being timed.
    pub fn overhead_ns(&self) -> f64 {
        const PAIRS: u32 = 20_000;
        let mut best = f64::INFINITY;
        // The minimum of a few rounds, so one interrupt does not inflate it.
        for _ in 0..5 {
            let t0 = self.start();
            for _ in 0..PAIRS {
                std::hint::black_box(self.start());
                std::hint::black_box(self.stop());
            }
            let t1 = self.stop();
            best = best.min(self.ns(t0, t1) / PAIRS as f64);
        }
        best
    }

    /// The smallest non-zero interval the clock reports between two successive reads: the
    /// finest difference a sample could resolve.
    pub fn resolution_ns(&self) -> f64 {
        let mut best = f64::INFINITY;
        for _ in 0..10_000 {
            let a = self.start();
            let b = self.stop();
            let d = self.ns(a, b);
            if d > 0.0 && d < best {
                best = d;
            }
        }
        if best.is_finite() { best } else { 1.0 }
    }

    pub fn info(&self, reason: String) -> ClockInfo {
        ClockInfo {
            source: self.name().to_string(),
            reason,
            tsc_hz: match self {
                Clock::Counter { hz } => Some(*hz),
                Clock::MonotonicRaw => None,
            },
            overhead_ns: self.overhead_ns(),
            resolution_ns: self.resolution_ns(),
        }
    }

    /// Rebuild the clock a run chose (the worker gets it from the parent).
    pub fn from_info(info: &ClockInfo) -> Clock {
        match (info.source.as_str(), info.tsc_hz) {
            (source, Some(hz)) if source == counter::NAME => Clock::Counter { hz },
            _ => Clock::MonotonicRaw,
        }
    }
}

/// CLOCK_MONOTONIC_RAW in nanoseconds (`platform::clock`).
pub fn monotonic_raw_ns() -> u64 {
    crate::platform::clock::monotonic_raw_ns()
}

/// Choose the clock for a run, and say why.
pub fn choose(choice: ClockChoice) -> (Clock, String) {
    if choice == ClockChoice::Monotonic {
        return (
            Clock::MonotonicRaw,
            "CLOCK_MONOTONIC_RAW requested with --clock".into(),
        );
    }
    let settled = counter::usable()
        .and_then(|()| calibrate())
        .and_then(|(hz, spread_ppm)| counter::settle(hz, spread_ppm));
    match settled {
        Ok((hz, reason)) => (Clock::Counter { hz }, reason),
        Err(why) => (
            Clock::MonotonicRaw,
            format!(
                "{}: the {} is not used: {why}",
                crate::platform::clock::MONOTONIC_TITLE,
                counter_name()
            ),
        ),
    }
}

/// The CPU counter's name as people write it: "TSC", "CNTVCT_EL0".
pub fn counter_name() -> String {
    counter::NAME.to_uppercase()
}

/// Calibrate the counter's frequency in 20 ms windows until two consecutive windows agree within
/// 20 ppm; returns (Hz, disagreement in ppm).
fn calibrate() -> Result<(f64, f64), Unusable> {
    const WINDOW_NS: u64 = 20_000_000;
    const AGREE_PPM: f64 = 20.0;
    let mut previous: Option<f64> = None;
    let mut last_spread = f64::NAN;
    for _ in 0..12 {
        let (t0, n0) = paired_read();
        while monotonic_raw_ns() - n0 < WINDOW_NS {
            std::hint::spin_loop();
        }
        let (t1, n1) = paired_read();
        let hz = (t1.wrapping_sub(t0)) as f64 * 1e9 / (n1 - n0) as f64;
        if let Some(p) = previous {
            last_spread = ((hz - p) / p).abs() * 1e6;
            if last_spread <= AGREE_PPM {
                return Ok(((hz + p) / 2.0, last_spread));
            }
        }
        previous = Some(hz);
    }
    Err(Unusable::Unstable(last_spread))
}

/// A counter reading and a CLOCK_MONOTONIC_RAW reading taken as close together as possible:
/// the pair with the narrowest counter bracket out of a few tries.
fn paired_read() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = counter::start();
        let ns = monotonic_raw_ns();
        let b = counter::stop();
        let width = b.wrapping_sub(a);
        if width < best.0 {
            best = (width, a + width / 2, ns);
        }
    }
    (best.1, best.2)
}

#[cfg(target_arch = "x86_64")]
#[path = "clock/x86_64.rs"]
mod counter;

#[cfg(target_arch = "aarch64")]
#[path = "clock/aarch64.rs"]
mod counter;

/// Elsewhere there is no counter oslab knows how to read: CLOCK_MONOTONIC_RAW only.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod counter {
    pub const NAME: &str = "none";
    pub fn start() -> u64 {
        super::monotonic_raw_ns()
    }
    pub fn stop() -> u64 {
        super::monotonic_raw_ns()
    }
    use super::Unusable;
    pub fn usable() -> Result<(), Unusable> {
        Err(Unusable::NoCounter(std::env::consts::ARCH))
    }
    pub fn settle(_: f64, _: f64) -> Result<(f64, String), Unusable> {
        Err(Unusable::NoCounter(std::env::consts::ARCH))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance_and_resolve() {
        for choice in [ClockChoice::Auto, ClockChoice::Monotonic] {
            let (clock, reason) = choose(choice);
            assert!(!reason.is_empty());
            let a = clock.start();
            std::thread::sleep(std::time::Duration::from_millis(2));
            let b = clock.stop();
            let ns = clock.ns(a, b);
            // A 2 ms sleep lasts at least 2 ms on any clock that counts real time.
            assert!(ns >= 2e6, "{} measured {ns} ns", clock.name());
            assert!(clock.resolution_ns() > 0.0);
            assert!(clock.overhead_ns() > 0.0);
        }
    }

    #[test]
    fn info_round_trips() {
        let clock = Clock::Counter { hz: 2.5e9 };
        let info = ClockInfo {
            source: counter::NAME.into(),
            reason: String::new(),
            tsc_hz: Some(2.5e9),
            overhead_ns: 1.0,
            resolution_ns: 1.0,
        };
        assert_eq!(Clock::from_info(&info), clock);
        assert_eq!(clock.ns(0, 2_500), 1000.0);
    }
}

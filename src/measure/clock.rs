//! The clock samples are timed with.
//!
//! The TSC is used when it is invariant (CPUID 0x8000_0007 EDX bit 8), the kernel still
//! trusts it (it is among the available clocksources), and its frequency calibrates stably
//! against CLOCK_MONOTONIC_RAW: two consecutive calibration windows must agree. Reads are
//! fenced so the timed region cannot leak out of them (`lfence; rdtsc; lfence` to start,
//! `rdtscp; lfence` to stop — Intel's "How to Benchmark Code Execution Times", 2010; divan's
//! `tsc/x86.rs` does the same). Otherwise CLOCK_MONOTONIC_RAW, with the reason stored.

use crate::model::ClockInfo;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    Tsc { hz: f64 },
    MonotonicRaw,
}

/// Which clock to use, as asked on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChoice {
    Auto,
    Tsc,
    Monotonic,
}

impl Clock {
    /// A reading to start a timed region.
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self {
            Clock::Tsc { .. } => tsc::start(),
            Clock::MonotonicRaw => monotonic_raw_ns(),
        }
    }

    /// A reading to end a timed region.
    #[inline(always)]
    pub fn stop(&self) -> u64 {
        match self {
            Clock::Tsc { .. } => tsc::stop(),
            Clock::MonotonicRaw => monotonic_raw_ns(),
        }
    }

    /// Nanoseconds between two readings.
    pub fn ns(&self, from: u64, to: u64) -> f64 {
        let ticks = to.wrapping_sub(from) as f64;
        match self {
            Clock::Tsc { hz } => ticks * 1e9 / hz,
            Clock::MonotonicRaw => ticks,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Clock::Tsc { .. } => "tsc",
            Clock::MonotonicRaw => "clock_monotonic_raw",
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
                Clock::Tsc { hz } => Some(*hz),
                Clock::MonotonicRaw => None,
            },
            overhead_ns: self.overhead_ns(),
            resolution_ns: self.resolution_ns(),
        }
    }

    /// Rebuild the clock a run chose (the worker gets it from the parent).
    pub fn from_info(info: &ClockInfo) -> Clock {
        match (info.source.as_str(), info.tsc_hz) {
            ("tsc", Some(hz)) => Clock::Tsc { hz },
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
    match tsc::usable().and_then(|()| calibrate_tsc()) {
        Ok((hz, spread_ppm)) => (
            Clock::Tsc { hz },
            format!(
                "invariant TSC, calibrated against CLOCK_MONOTONIC_RAW at {:.6} GHz \
                 (consecutive windows agree within {spread_ppm:.1} ppm)",
                hz / 1e9
            ),
        ),
        Err(why) => (
            Clock::MonotonicRaw,
            format!("CLOCK_MONOTONIC_RAW: the TSC is not used: {why}"),
        ),
    }
}

/// Calibrate the TSC frequency in 20 ms windows until two consecutive windows agree within
/// 20 ppm; returns (Hz, disagreement in ppm).
fn calibrate_tsc() -> Result<(f64, f64), String> {
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
    Err(format!(
        "its frequency did not calibrate stably (consecutive 20 ms windows differ by {last_spread:.0} ppm)"
    ))
}

/// A TSC reading and a CLOCK_MONOTONIC_RAW reading taken as close together as possible: the
/// pair with the narrowest TSC bracket out of a few tries.
fn paired_read() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = tsc::start();
        let ns = monotonic_raw_ns();
        let b = tsc::stop();
        let width = b.wrapping_sub(a);
        if width < best.0 {
            best = (width, a + width / 2, ns);
        }
    }
    (best.1, best.2)
}

#[cfg(target_arch = "x86_64")]
mod tsc {
    use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

    #[inline(always)]
    pub fn start() -> u64 {
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU and have no memory effects.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }

    #[inline(always)]
    pub fn stop() -> u64 {
        let mut aux = 0u32;
        // SAFETY: rdtscp (every x86_64 CPU since 2008; checked in `usable`) writes `aux` only.
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }

    /// Whether the TSC may be used, or why not.
    pub fn usable() -> Result<(), String> {
        let cpuid = raw_cpuid::CpuId::new();
        let ext = cpuid.get_extended_processor_and_feature_identifiers();
        if !ext.is_some_and(|f| f.has_rdtscp()) {
            return Err("the CPU has no RDTSCP instruction".into());
        }
        let invariant = cpuid
            .get_advanced_power_mgmt_info()
            .is_some_and(|p| p.has_invariant_tsc());
        if !invariant {
            return Err("CPUID does not report an invariant TSC (0x80000007 EDX bit 8)".into());
        }
        crate::platform::clock::kernel_trusts_tsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tsc {
    pub fn start() -> u64 {
        super::monotonic_raw_ns()
    }
    pub fn stop() -> u64 {
        super::monotonic_raw_ns()
    }
    pub fn usable() -> Result<(), String> {
        Err(format!("no TSC support on {}", std::env::consts::ARCH))
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
        let clock = Clock::Tsc { hz: 2.5e9 };
        let info = ClockInfo {
            source: "tsc".into(),
            reason: String::new(),
            tsc_hz: Some(2.5e9),
            overhead_ns: 1.0,
            resolution_ns: 1.0,
        };
        assert_eq!(Clock::from_info(&info), clock);
        assert_eq!(clock.ns(0, 2_500), 1000.0);
    }
}

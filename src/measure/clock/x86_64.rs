//! x86-64: the time-stamp counter, read fenced (`lfence; rdtsc; lfence` to start,
//! `rdtscp; lfence` to stop — Intel's "How to Benchmark Code Execution Times", 2010; divan's
//! `tsc/x86.rs` does the same).

use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

use super::Unusable;

/// The name stored as the run's clock source.
pub const NAME: &str = "tsc";

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
pub fn usable() -> Result<(), Unusable> {
    let cpuid = raw_cpuid::CpuId::new();
    let ext = cpuid.get_extended_processor_and_feature_identifiers();
    if !ext.is_some_and(|f| f.has_rdtscp()) {
        return Err(Unusable::NoRdtscp);
    }
    let invariant = cpuid
        .get_advanced_power_mgmt_info()
        .is_some_and(|p| p.has_invariant_tsc());
    if !invariant {
        return Err(Unusable::NotInvariant);
    }
    Ok(crate::platform::clock::kernel_trusts_tsc()?)
}

/// The TSC has no architected frequency: the calibrated one is used.
pub fn settle(calibrated_hz: f64, spread_ppm: f64) -> Result<(f64, String), Unusable> {
    Ok((
        calibrated_hz,
        format!(
            "invariant TSC, calibrated against CLOCK_MONOTONIC_RAW at {:.6} GHz \
             (consecutive windows agree within {spread_ppm:.1} ppm)",
            calibrated_hz / 1e9
        ),
    ))
}

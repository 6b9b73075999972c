//! aarch64: the generic timer's virtual counter, CNTVCT_EL0.
//!
//! Linux lets user space read it (the arch timer driver sets CNTKCTL_EL1.EL0VCTEN; where an
//! erratum makes direct reads unreliable, the kernel traps and emulates them instead, which
//! is correct but slow, so a slow read is refused below). Its frequency is architected:
//! CNTFRQ_EL0, which firmware sets; a wrong CNTFRQ_EL0 is caught by calibrating against
//! CLOCK_MONOTONIC_RAW. The counter is system-wide and never stops or changes rate, so, unlike
//! the TSC, it needs no invariance check. Reads are ordered with `isb` on both sides, so the
//! timed region cannot leak out of them (the Arm ARM: reads of CNTVCT_EL0 may be made
//! speculatively; an ISB before the read prevents that).

use std::arch::asm;

use super::Unusable;

/// The name stored as the run's clock source.
pub const NAME: &str = "cntvct_el0";

/// The most a direct counter read may cost: a trapped and emulated read costs microseconds.
const MAX_READ_NS: f64 = 500.0;

/// The most CNTFRQ_EL0 may differ from the calibrated rate before it is called wrong.
const MAX_FREQUENCY_ERROR_PPM: f64 = 1000.0;

#[inline(always)]
pub fn start() -> u64 {
    let t: u64;
    // SAFETY: reading CNTVCT_EL0 has no side effect; Linux allows (or emulates) it at EL0.
    unsafe {
        asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack, preserves_flags))
    };
    t
}

#[inline(always)]
pub fn stop() -> u64 {
    let t: u64;
    // SAFETY: as in `start`; the trailing isb keeps later instructions after the read.
    unsafe {
        asm!("isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t, options(nostack, preserves_flags))
    };
    t
}

/// CNTFRQ_EL0: the counter's frequency as firmware set it, in Hz.
pub fn frequency() -> u64 {
    let f: u64;
    // SAFETY: reading CNTFRQ_EL0 has no side effect and is allowed at EL0.
    unsafe {
        asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack, preserves_flags))
    };
    f
}

/// Whether the counter may be used, or why not.
pub fn usable() -> Result<(), Unusable> {
    if frequency() == 0 {
        return Err(Unusable::NoFrequency);
    }
    let per_read = read_ns();
    if per_read > MAX_READ_NS {
        return Err(Unusable::Trapped(per_read));
    }
    Ok(())
}

/// What one read costs: the fastest of a few short batches. A trapped read is slow in every
/// batch; a batch the scheduler interrupted is slow alone, so a busy machine cannot make a
/// direct counter look trapped. (Under qemu-user beside eight busy loops on two CPUs, one batch
/// of 10,000 reads averaged 1.7–2.9 µs in 6 starts out of 30; the fastest of eight batches of
/// 1,000 stayed under the bound in 40 out of 40.)
fn read_ns() -> f64 {
    const BATCHES: usize = 8;
    const READS: u32 = 1_000;
    (0..BATCHES)
        .map(|_| {
            let t0 = super::monotonic_raw_ns();
            for _ in 0..READS {
                std::hint::black_box(start());
            }
            (super::monotonic_raw_ns() - t0) as f64 / f64::from(READS)
        })
        .fold(f64::INFINITY, f64::min)
}

/// The architected frequency, once calibration confirms it.
pub fn settle(calibrated_hz: f64, spread_ppm: f64) -> Result<(f64, String), Unusable> {
    check_frequency(frequency() as f64, calibrated_hz, spread_ppm)
}

fn check_frequency(
    architected_hz: f64,
    calibrated_hz: f64,
    spread_ppm: f64,
) -> Result<(f64, String), Unusable> {
    let error_ppm = (calibrated_hz - architected_hz).abs() / architected_hz * 1e6;
    if error_ppm > MAX_FREQUENCY_ERROR_PPM {
        return Err(Unusable::WrongFrequency {
            architected_hz,
            calibrated_hz,
        });
    }
    Ok((
        architected_hz,
        format!(
            "the generic timer's CNTVCT_EL0 at CNTFRQ_EL0 = {:.3} MHz (calibration against \
             CLOCK_MONOTONIC_RAW agrees within {error_ppm:.0} ppm; consecutive windows within \
             {spread_ppm:.1} ppm)",
            architected_hz / 1e6
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_architected_frequency_is_used_when_calibration_confirms_it() {
        let (hz, why) = check_frequency(25e6, 25.001e6, 3.0).expect("within 1000 ppm");
        assert_eq!(hz, 25e6);
        assert!(why.contains("CNTFRQ_EL0 = 25.000 MHz"), "{why}");
        let wrong = check_frequency(50e6, 25e6, 3.0).expect_err("twice the rate");
        assert!(
            wrong
                .to_string()
                .contains("firmware set the wrong frequency"),
            "{wrong}"
        );
    }

    #[test]
    fn the_counter_advances_at_its_frequency() {
        assert!(frequency() > 0);
        let a = stop();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = start();
        let ns = (b - a) as f64 * 1e9 / frequency() as f64;
        assert!(ns >= 4e6, "5 ms sleep measured {ns} ns");
    }
}

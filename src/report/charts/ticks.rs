//! Axis ticks at round values, as pure functions of the data range: 1, 2 or 5 × 10^n for
//! plain numbers and times, powers of two (or multiples of one) for byte quantities, so an
//! axis reads `1 KiB, 4 KiB, 16 KiB`, never `1.95 MiB, 3.91 MiB`. The first tick is at or
//! below the smallest value and the last at or above the largest: the ticks are the axis.

/// What the values on an axis count, which decides what a round value is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unit {
    /// Plain numbers and times: 1, 2 or 5 × 10^n.
    Decimal,
    /// Byte quantities, in bytes or KiB: powers of two, or multiples of one.
    Binary,
}

/// Fewer ticks than this are never asked for: with at least six allowed, the step chosen
/// always leaves three or more.
pub const MIN_MAX: usize = 6;

/// Candidate steps tried at most: three per decade over the whole range of a float.
const MAX_STEPS: usize = 3 * 700;

/// Ticks of a linear axis over `lo..=hi`: equally spaced multiples of the smallest round step
/// that needs at most `max` of them (at least [`MIN_MAX`]). A range of one value is widened.
pub fn linear(lo: f64, hi: f64, unit: Unit, max: usize) -> Vec<f64> {
    let max = max.max(MIN_MAX);
    let (lo, hi) = widen(lo, hi);
    let span = hi - lo;
    // Counted in floating point: a step far below the span would overflow an integer.
    let count = |step: f64| ((hi / step - 1e-9).ceil() - (lo / step + 1e-9).floor()) + 1.0;
    // Candidate steps from about a hundredth of the span upwards; a span past the largest
    // float (from −1e308 to 1e308) has no round step: its ends are the ticks.
    let mut step = Step::below(span / 100.0, unit);
    let mut tries = 0;
    let too_many = |step: Step| {
        let n = count(step.value());
        n.is_nan() || n > max as f64
    };
    while too_many(step) {
        step = step.next();
        tries += 1;
        if tries > MAX_STEPS || !span.is_finite() {
            return vec![lo, hi];
        }
    }
    let s = step.value();
    let (first, last) = (
        (lo / s + 1e-9).floor() as i64,
        (hi / s - 1e-9).ceil() as i64,
    );
    finite_or_ends((first..=last).map(|k| step.times(k)).collect(), lo, hi)
}

/// The ticks that are finite numbers (a round step past 1e308 overflows), or the range's
/// ends when fewer than two are.
fn finite_or_ends(mut ticks: Vec<f64>, lo: f64, hi: f64) -> Vec<f64> {
    ticks.retain(|x| x.is_finite());
    if ticks.len() >= 2 {
        ticks
    } else {
        vec![lo, hi]
    }
}

/// Ticks of a log axis over `lo..=hi` (`lo > 0`): whole decades (or powers of two), every
/// so many of them (every third decade before every second: 1 ns, 1 µs, 1 ms) so that at most `max` are drawn; a decimal axis of one or two decades
/// also gets 2 and 5 between them, and a binary axis spans at least two doublings.
pub fn log(lo: f64, hi: f64, unit: Unit, max: usize) -> Vec<f64> {
    let max = max.max(MIN_MAX);
    let (lo, hi) = if lo > 0.0 && lo.is_finite() && hi.is_finite() {
        (lo, hi.max(lo))
    } else {
        (1.0, 10.0)
    };
    let (base, strides): (f64, &[i32]) = match unit {
        Unit::Decimal => (10.0, &[1, 3, 5, 10, 20, 50, 100]),
        Unit::Binary => (2.0, &[1, 2, 5, 10, 20, 50, 100]),
    };
    let e0 = (lo.log(base) + 1e-9).floor() as i32;
    let mut e1 = (hi.log(base) - 1e-9).ceil() as i32;
    if e1 <= e0 {
        e1 = e0 + 1;
    }
    if unit == Unit::Binary && e1 - e0 < 2 {
        e1 = e0 + 2;
    }
    if unit == Unit::Decimal && e1 - e0 <= 2 && 3 * ((e1 - e0) as usize) < max {
        let mut t: Vec<f64> = (e0..e1)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .collect();
        t.push(10f64.powi(e1));
        return finite_or_ends(t, lo, hi);
    }
    let fits = |s: i32| (e1.div_euclid(s) + (e1.rem_euclid(s) != 0) as i32 - e0.div_euclid(s)) + 1;
    let stride = strides
        .iter()
        .copied()
        .find(|s| fits(*s) as usize <= max)
        .unwrap_or(1000);
    let (k0, k1) = (
        e0.div_euclid(stride),
        e0.div_euclid(stride) + fits(stride) - 1,
    );
    let ticks = (k0..=k1).map(|k| base.powi(k * stride)).collect();
    finite_or_ends(ticks, lo, hi)
}

/// `lo < hi`, widening an empty or inverted range around its value.
fn widen(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        let pad = lo.abs() / 2.0;
        ((lo - pad).max(f64::MIN), (hi + pad).min(f64::MAX))
    }
}

/// A round step: `mantissa × base^exp` with mantissa 1, 2 or 5 (decimal) or 1 (binary).
#[derive(Clone, Copy, Debug)]
struct Step {
    unit: Unit,
    mantissa: i64,
    exp: i32,
}

impl Step {
    /// The largest round step at or below `x` (> 0).
    fn below(x: f64, unit: Unit) -> Step {
        let x = if x > 0.0 && x.is_finite() { x } else { 1.0 };
        match unit {
            Unit::Decimal => Step {
                unit,
                mantissa: 1,
                exp: x.log10().floor() as i32,
            },
            Unit::Binary => Step {
                unit,
                mantissa: 1,
                exp: x.log2().floor() as i32,
            },
        }
    }

    fn next(self) -> Step {
        match (self.unit, self.mantissa) {
            (Unit::Decimal, 1) => Step {
                mantissa: 2,
                ..self
            },
            (Unit::Decimal, 2) => Step {
                mantissa: 5,
                ..self
            },
            _ => Step {
                mantissa: 1,
                exp: self.exp + 1,
                ..self
            },
        }
    }

    fn value(self) -> f64 {
        self.times(1)
    }

    /// `k` steps, computed so that decimal fractions come out as their nearest double
    /// (`3 × 0.1` is `0.3`, not `0.30000000000000004`).
    fn times(self, k: i64) -> f64 {
        let m = (k * self.mantissa) as f64;
        match self.unit {
            Unit::Decimal if self.exp < 0 => m / 10f64.powi(-self.exp),
            Unit::Decimal => m * 10f64.powi(self.exp),
            Unit::Binary => m * 2f64.powi(self.exp),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `x` is m × 10^e with m in {1, 2, 5} (up to rounding).
    fn is_125(x: f64) -> bool {
        let e = x.abs().log10().floor();
        let m = x.abs() / 10f64.powf(e);
        [1.0, 2.0, 5.0, 10.0]
            .iter()
            .any(|n| (m - n).abs() < 1e-6 * n)
    }

    fn is_pow2(x: f64) -> bool {
        let e = x.log2();
        (e - e.round()).abs() < 1e-9
    }

    #[test]
    fn round_linear_ticks() {
        assert_eq!(
            linear(0.0, 7.0, Unit::Decimal, 7),
            [0.0, 2.0, 4.0, 6.0, 8.0]
        );
        assert_eq!(
            linear(0.0, 7300.0, Unit::Decimal, 7),
            [0.0, 2000.0, 4000.0, 6000.0, 8000.0]
        );
        assert_eq!(linear(0.0, 0.3, Unit::Decimal, 6), [0.0, 0.1, 0.2, 0.3]);
        assert_eq!(
            linear(0.0, 0.0, Unit::Decimal, 7),
            [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        );
        // maxrss in KiB, about 9 MiB: 2 MiB steps, not 1.95 MiB ones.
        assert_eq!(
            linear(0.0, 9270.0, Unit::Binary, 7),
            [0.0, 2048.0, 4096.0, 6144.0, 8192.0, 10240.0]
        );
    }

    #[test]
    fn round_log_ticks() {
        assert_eq!(
            log(3.0, 4000.0, Unit::Decimal, 10),
            [1.0, 10.0, 100.0, 1000.0, 10_000.0]
        );
        assert_eq!(
            log(3.0, 70.0, Unit::Decimal, 10),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert_eq!(log(1.0, 1e9, Unit::Decimal, 7), [1.0, 1e3, 1e6, 1e9]);
        // size=1,64,4K,64K: every second power of two.
        assert_eq!(
            log(1.0, 65536.0, Unit::Binary, 10),
            [
                1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0
            ]
        );
        assert_eq!(
            log(1024.0, 1024.0, Unit::Binary, 10),
            [1024.0, 2048.0, 4096.0]
        );
    }

    proptest! {
        #[test]
        fn linear_ticks_are_round_and_cover(
            lo in -1e9f64..1e9,
            span in 1e-6f64..1e9,
            binary in any::<bool>(),
            max in MIN_MAX..=10usize,
        ) {
            let hi = lo + span;
            prop_assume!(hi > lo);
            let unit = if binary { Unit::Binary } else { Unit::Decimal };
            let t = linear(lo, hi, unit, max);
            prop_assert!((3..=max).contains(&t.len()), "{t:?}");
            prop_assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
            let step = t[1] - t[0];
            prop_assert!(t[0] <= lo + step * 1e-6 && *t.last().unwrap() >= hi - step * 1e-6, "{t:?}");
            let round = if binary { is_pow2(step) } else { is_125(step) };
            prop_assert!(round, "step {step}");
            for x in &t {
                let k = x / step;
                prop_assert!((k - k.round()).abs() < 1e-6 * k.abs().max(1.0), "{x} / {step}");
            }
        }

        #[test]
        fn log_ticks_are_round_and_cover(
            lo_exp in -12f64..12.0,
            decades in 0f64..14.0,
            binary in any::<bool>(),
            max in MIN_MAX..=10usize,
        ) {
            let lo = 10f64.powf(lo_exp);
            let hi = lo * 10f64.powf(decades);
            let unit = if binary { Unit::Binary } else { Unit::Decimal };
            let t = log(lo, hi, unit, max);
            prop_assert!((3..=max.max(4)).contains(&t.len()), "{t:?}");
            prop_assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
            prop_assert!(t[0] <= lo * (1.0 + 1e-9) && *t.last().unwrap() >= hi * (1.0 - 1e-9), "{t:?}");
            for x in &t {
                prop_assert!(if binary { is_pow2(*x) } else { is_125(*x) }, "{x}");
            }
        }

        /// Any pair of numbers — huge, tiny, negative, infinite, NaN (an imported run can hold
        /// any of them) — gives a bounded set of finite ticks, at once.
        #[test]
        fn any_range_gives_few_finite_ticks(
            lo in prop_oneof![any::<f64>(), Just(1.7e308), Just(-1.7e308), Just(f64::MIN_POSITIVE), Just(0.0)],
            hi in prop_oneof![any::<f64>(), Just(1.7e308), Just(f64::INFINITY), Just(f64::NAN), Just(5e-324)],
            binary in any::<bool>(),
            max in MIN_MAX..=12usize,
        ) {
            let unit = if binary { Unit::Binary } else { Unit::Decimal };
            for t in [linear(lo, hi, unit, max), log(lo, hi, unit, max)] {
                prop_assert!(!t.is_empty() && t.len() <= 2 * max + 2, "{lo} {hi}: {t:?}");
                prop_assert!(t.iter().all(|x| x.is_finite()), "{lo} {hi}: {t:?}");
            }
        }
    }
}

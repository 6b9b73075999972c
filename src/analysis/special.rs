//! The few special functions the tests of this crate need beyond `erfc`: the log-gamma
//! function, the regularized incomplete beta function and through it the upper tail of
//! Fisher's F distribution (the p-value of an analysis of variance). After W. H. Press et al.,
//! "Numerical Recipes in C", 2nd ed., §6.1 (`gammln`, Lanczos' approximation, error below
//! 2e-10) and §6.4 (`betai`, `betacf`: the continued fraction by Lentz's method).

/// ln Γ(x) for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    const COF: [f64; 6] = [
        76.180_091_729_471_46,
        -86.505_320_329_416_77,
        24.014_098_240_830_91,
        -1.231_739_572_450_155,
        0.120_865_097_386_617_9e-2,
        -0.539_523_938_495_3e-5,
    ];
    let mut y = x;
    let tmp = x + 5.5;
    let tmp = tmp - (x + 0.5) * tmp.ln();
    let mut series = 1.000_000_000_190_015;
    for c in COF {
        y += 1.0;
        series += c / y;
    }
    -tmp + (2.506_628_274_631_000_5 * series / x).ln()
}

/// The regularized incomplete beta function I_x(a, b), a, b > 0; 0 below x = 0, 1 above 1.
pub fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if x.is_nan() || a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast on this side of the mean; the other side by
    // I_x(a, b) = 1 − I_{1−x}(b, a).
    let value = if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    };
    value.clamp(0.0, 1.0)
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const MAX_TERMS: usize = 300;
    const EPS: f64 = 3e-14;
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=MAX_TERMS {
        let m = m as f64;
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// P(F > f) for Fisher's F distribution with `d1` and `d2` degrees of freedom: the p-value
/// of an F statistic. 1 for f ≤ 0 (or NaN), 0 for an infinite f.
pub fn f_upper_tail(f: f64, d1: f64, d2: f64) -> f64 {
    if f.is_nan() || f <= 0.0 {
        return 1.0;
    }
    if f.is_infinite() {
        return 0.0;
    }
    beta_inc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::processes::t975;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        assert!((ln_gamma(1.0)).abs() < 1e-9);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-9);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-9);
        assert!((beta_inc(1.0, 1.0, 0.3) - 0.3).abs() < 1e-12);
        assert!((beta_inc(2.0, 3.0, 0.4) - 0.5248).abs() < 1e-9);
        // F tables' 5% points.
        for (f, d1, d2) in [
            (161.45, 1.0, 1.0),
            (18.513, 1.0, 2.0),
            (4.459, 2.0, 8.0),
            (3.708, 3.0, 10.0),
            (2.711, 5.0, 20.0),
        ] {
            let p = f_upper_tail(f, d1, d2);
            assert!((p - 0.05).abs() < 2e-4, "F({d1}, {d2}) at {f}: {p}");
        }
        assert_eq!(f_upper_tail(0.0, 1.0, 2.0), 1.0);
        assert_eq!(f_upper_tail(f64::INFINITY, 1.0, 2.0), 0.0);
    }

    /// F(1, d) is Student's t with d degrees of freedom squared: the t table's 97.5% points
    /// are F's two-sided 5% points.
    #[test]
    fn f_with_one_numerator_degree_is_t_squared() {
        for df in 1..=30 {
            let t = t975(df);
            let p = f_upper_tail(t * t, 1.0, df as f64);
            assert!((p - 0.05).abs() < 1e-3, "df {df}: {p}");
        }
    }

    proptest! {
        #[test]
        fn the_tail_is_a_probability_falling_with_f(
            f in 0.0f64..1e6,
            step in 0.0f64..100.0,
            d1 in 1u32..50,
            d2 in 1u32..200,
        ) {
            let (d1, d2) = (f64::from(d1), f64::from(d2));
            let here = f_upper_tail(f, d1, d2);
            let further = f_upper_tail(f + step, d1, d2);
            prop_assert!((0.0..=1.0).contains(&here));
            prop_assert!(further <= here + 1e-9, "{here} then {further}");
        }
    }
}

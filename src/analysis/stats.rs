//! Descriptive statistics of one sample set.
//!
//! Timing samples are skewed to the right (interrupts, migrations and cache misses only ever
//! add time), so the robust figures (median, percentiles, MAD) lead and the moment-based ones
//! (mean, standard deviation, CV) are kept beside them for comparison with other tools.

use serde::{Deserialize, Serialize};

/// The descriptive summary of one sample set, as stored and shown.
///
/// For finite input every field is finite, unless the data span most of `f64`'s range
/// (magnitudes near 1e300), which no measurement does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    pub min: f64,
    pub max: f64,
    /// The 50th percentile; the mean of the two middle values when `n` is even.
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1, Bessel's correction); 0 when `n == 1`.
    pub stddev: f64,
    /// 5th percentile, type 7 (see [`percentile`]).
    pub p5: f64,
    /// 95th percentile, type 7 (see [`percentile`]).
    pub p95: f64,
    /// Median absolute deviation from the median, unscaled (not multiplied by 1.4826): a
    /// spread that a few interrupted samples cannot inflate (Hampel 1974).
    pub mad: f64,
    /// Coefficient of variation, `stddev / mean`; 0 when the mean is 0.
    pub cv: f64,
}

/// The summary of `xs`, or `None` when `xs` is empty or holds a NaN or an infinity.
///
/// A non-finite sample means the measurement went wrong upstream; summarising around it would
/// hide that, so the caller gets `None` and reports it.
///
/// The variance uses the corrected two-pass algorithm (Chan, Golub & LeVeque, "Algorithms for
/// computing the sample variance", The American Statistician 37(3), 1983), which stays accurate
/// when the spread is tiny compared with the values, as with nanosecond timings of a slow
/// operation.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let nf = n as f64;

    let min = sorted[0];
    let max = sorted[n - 1];
    let median = percentile(&sorted, 50.0);
    let p5 = percentile(&sorted, 5.0);
    let p95 = percentile(&sorted, 95.0);

    let mut mean = sorted.iter().sum::<f64>() / nf;
    if !mean.is_finite() {
        // The sum overflowed; dividing first cannot.
        mean = sorted.iter().map(|x| x / nf).sum();
    }
    // Rounding can put the mean a hair outside the data when all values are equal or close.
    let mean = mean.clamp(min, max);

    let stddev = if n < 2 {
        0.0
    } else {
        let (sq, lin) = sorted.iter().fold((0.0, 0.0), |(sq, lin), x| {
            let d = x - mean;
            (sq + d * d, lin + d)
        });
        ((sq - lin * lin / nf) / (nf - 1.0)).max(0.0).sqrt()
    };

    let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    let mad = median_in_place(&mut deviations);

    let cv = if mean == 0.0 { 0.0 } else { stddev / mean };

    Some(Summary {
        n,
        min,
        max,
        median,
        mean,
        stddev,
        p5,
        p95,
        mad,
        cv,
    })
}

/// The median of `xs`, or `None` when `xs` is empty or holds a NaN or an infinity (for the
/// same reason as [`summarize`]). Input order does not matter; `xs` is not modified.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut buf = xs.to_vec();
    Some(median_in_place(&mut buf))
}

/// How far the largest of `values` lies above the smallest, as a ratio less one (0.10: 10%
/// apart); `None` with fewer than two values or a smallest one not above zero.
pub fn spread_ratio(values: &[f64]) -> Option<f64> {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (values.len() >= 2 && lo > 0.0).then(|| hi / lo - 1.0)
}

/// The median of `xs`, reordering `xs` as scratch space; NaN for an empty slice.
///
/// This is the bootstrap's inner loop, so it selects instead of sorting: one
/// `select_nth_unstable_by` (introselect, O(n)) places the upper middle value, and for an even
/// count the lower middle value is the largest of the partition below it. The result equals
/// `percentile(sorted, 50.0)` exactly. Ordering is `f64::total_cmp`, which is total, so NaNs
/// cannot make the selection panic or misbehave (they sort to the ends).
pub fn median_in_place(xs: &mut [f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    let (below, &mut upper, _) = xs.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return upper;
    }
    let lower = below
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper);
    lerp(lower, upper, 0.5)
}

/// The `p`-th percentile (`p` in `[0, 100]`) of data already sorted ascending.
///
/// Linear interpolation between the closest ranks: Hyndman & Fan's definition 7 ("Sample
/// quantiles in statistical packages", The American Statistician 50(4), 1996), the default
/// of numpy, R and Excel's PERCENTILE, so figures can be checked against those tools. The
/// rank is `h = (n − 1)·p/100` and the result is `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])`.
///
/// Never panics: `p` is clamped to `[0, 100]`; an empty slice or a NaN `p` gives NaN. Unsorted
/// input gives a meaningless value, not a panic.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return f64::NAN;
    };
    if p.is_nan() {
        return f64::NAN;
    }
    let h = last as f64 * (p.clamp(0.0, 100.0) / 100.0);
    let floor = h.floor();
    // `h` lies in [0, last], so the cast is in range; `min` keeps indexing safe regardless.
    let i = (floor as usize).min(last);
    let j = (i + 1).min(last);
    lerp(sorted[i], sorted[j], h - floor)
}

/// `a + t·(b − a)` for `a ≤ b` and `t` in `[0, 1)`, kept inside `[a, b]`.
///
/// The result is monotone in `t` (every step rounds monotonically) and clamped to `[a, b]`,
/// so percentiles never cross each other or leave the data (`min ≤ p5 ≤ median ≤ p95 ≤ max`
/// holds exactly, not just up to rounding). When `b − a` overflows, the computation is done
/// at half scale, where it cannot.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    if t <= 0.0 {
        return a;
    }
    let d = b - a;
    let r = if d.is_finite() {
        a + d * t
    } else {
        2.0 * (0.5 * a + (0.5 * b - 0.5 * a) * t)
    };
    // `max`/`min` instead of `clamp`: they do not panic on NaN or on `a > b`.
    r.max(a).min(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn summary_of_a_skewed_sample_matches_hand_computed_values() {
        let s = summarize(&[4.0, 1.0, 100.0, 3.0, 2.0]).expect("finite input");
        assert_eq!(s.n, 5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 22.0);
        // Deviations from 22: −21 −20 −19 −18 78; squares sum to 7610; 7610 / 4 = 1902.5.
        assert!(close(s.stddev, 1902.5f64.sqrt(), 1e-12));
        assert!(close(s.stddev, 43.617656975128774, 1e-12));
        // |x − 3| = 2 1 0 1 97, whose median is 1.
        assert_eq!(s.mad, 1.0);
        // Type 7: h = 4·0.05 = 0.2 → 1 + 0.2·(2 − 1); h = 4·0.95 = 3.8 → 4 + 0.8·(100 − 4).
        // numpy.percentile gives 1.2 and 80.79999999999998.
        assert!(close(s.p5, 1.2, 1e-12));
        assert!(close(s.p95, 80.8, 1e-12));
        assert!(close(s.cv, 43.617656975128774 / 22.0, 1e-12));
    }

    #[test]
    fn spread_ratio_is_the_largest_over_the_smallest_less_one() {
        assert_eq!(spread_ratio(&[200.0, 100.0, 150.0]), Some(1.0));
        assert_eq!(spread_ratio(&[100.0]), None);
        assert_eq!(spread_ratio(&[0.0, 100.0]), None);
    }

    #[test]
    fn summary_of_one_sample_has_zero_spread() {
        let s = summarize(&[7.5]).expect("finite input");
        assert_eq!(
            s,
            Summary {
                n: 1,
                min: 7.5,
                max: 7.5,
                median: 7.5,
                mean: 7.5,
                stddev: 0.0,
                p5: 7.5,
                p95: 7.5,
                mad: 0.0,
                cv: 0.0,
            }
        );
    }

    #[test]
    fn summary_cv_is_zero_when_the_mean_is_zero() {
        let s = summarize(&[-1.0, 1.0]).expect("finite input");
        assert_eq!(s.mean, 0.0);
        assert!(close(s.stddev, 2f64.sqrt(), 1e-15));
        assert_eq!(s.cv, 0.0);
    }

    #[test]
    fn summary_rejects_empty_and_non_finite_input() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[1.0, f64::NAN]), None);
        assert_eq!(summarize(&[1.0, f64::INFINITY]), None);
        assert_eq!(summarize(&[f64::NEG_INFINITY]), None);
    }

    #[test]
    fn summary_of_constant_data_is_exact() {
        let s = summarize(&[0.1; 1000]).expect("finite input");
        assert_eq!(s.mean, 0.1);
        assert_eq!(s.stddev, 0.0);
        assert_eq!(s.mad, 0.0);
        assert_eq!(s.cv, 0.0);
    }

    #[test]
    fn summary_survives_values_near_the_top_of_the_range() {
        let s = summarize(&[1e308, 1.5e308, 1.7e308]).expect("finite input");
        assert!(s.mean.is_finite());
        assert_eq!(s.median, 1.5e308);
    }

    #[test]
    fn summary_round_trips_through_json() {
        let s = summarize(&[1.0, 2.0, 3.5]).expect("finite input");
        let json = serde_json::to_string(&s).expect("serialize");
        let back: Summary = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(s, back);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[5.0]), Some(5.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn median_in_place_handles_empty_and_nan() {
        assert!(median_in_place(&mut []).is_nan());
        // No panic with NaN in the scratch buffer; the value is unspecified.
        let _ = median_in_place(&mut [f64::NAN, 1.0, 2.0, f64::NAN]);
    }

    #[test]
    fn percentile_type_7_known_values() {
        // numpy.percentile([1, 2, 3, 4], [0, 5, 25, 50, 75, 95, 100])
        // = [1, 1.15, 1.75, 2.5, 3.25, 3.85, 4]
        let xs = [1.0, 2.0, 3.0, 4.0];
        let expected = [
            (0.0, 1.0),
            (5.0, 1.15),
            (25.0, 1.75),
            (50.0, 2.5),
            (75.0, 3.25),
            (95.0, 3.85),
            (100.0, 4.0),
        ];
        for (p, want) in expected {
            let got = percentile(&xs, p);
            assert!(close(got, want, 1e-12), "p{p}: {got} != {want}");
        }
    }

    #[test]
    fn percentile_edge_cases_never_panic() {
        assert!(percentile(&[], 50.0).is_nan());
        assert!(percentile(&[1.0, 2.0], f64::NAN).is_nan());
        assert_eq!(percentile(&[9.0], 37.0), 9.0);
        assert_eq!(percentile(&[1.0, 2.0], -5.0), 1.0);
        assert_eq!(percentile(&[1.0, 2.0], 150.0), 2.0);
        assert_eq!(percentile(&[1.0, 2.0], f64::INFINITY), 2.0);
        assert_eq!(percentile(&[-f64::MAX, f64::MAX], 50.0), 0.0);
        // Unsorted input: a meaningless value, but no panic.
        let _ = percentile(&[3.0, 1.0, f64::NAN], 40.0);
    }

    #[test]
    fn median_equals_the_50th_percentile_exactly() {
        let mut xs = [0.1, 0.7, 0.3, 0.9, 0.2, 1e-3];
        let mut sorted = xs;
        sorted.sort_unstable_by(f64::total_cmp);
        assert_eq!(median_in_place(&mut xs), percentile(&sorted, 50.0));
    }

    fn samples() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(-1e6f64..1e6, 1..200)
    }

    proptest! {
        #[test]
        fn percentiles_are_ordered(xs in samples()) {
            let s = summarize(&xs).expect("finite input");
            prop_assert!(s.min <= s.p5);
            prop_assert!(s.p5 <= s.median);
            prop_assert!(s.median <= s.p95);
            prop_assert!(s.p95 <= s.max);
            prop_assert!(s.min <= s.mean && s.mean <= s.max);
            prop_assert!(s.stddev >= 0.0 && s.mad >= 0.0);
        }

        #[test]
        fn median_is_invariant_under_permutation(
            (xs, shuffled) in samples().prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
        ) {
            prop_assert_eq!(median(&xs), median(&shuffled));
            // summarize works on a sorted copy, so it is exactly invariant too.
            prop_assert_eq!(summarize(&xs), summarize(&shuffled));
        }

        #[test]
        fn shifting_moves_location_and_keeps_spread(xs in samples(), c in -1e6f64..1e6) {
            let shifted: Vec<f64> = xs.iter().map(|x| x + c).collect();
            let a = summarize(&xs).expect("finite input");
            let b = summarize(&shifted).expect("finite input");
            // Relative to the magnitude of the numbers involved: adding c rounds each sample
            // to the precision of |x + c|.
            let scale = xs.iter().fold(c.abs().max(1.0), |m, x| m.max(x.abs()));
            let tol = 1e-9 * scale;
            prop_assert!(close(b.median, a.median + c, tol), "median {} {}", b.median, a.median + c);
            prop_assert!(close(b.mean, a.mean + c, tol), "mean {} {}", b.mean, a.mean + c);
            prop_assert!(close(b.min, a.min + c, tol), "min {} {}", b.min, a.min + c);
            prop_assert!(close(b.stddev, a.stddev, tol), "stddev {} {}", b.stddev, a.stddev);
            prop_assert!(close(b.mad, a.mad, tol), "mad {} {}", b.mad, a.mad);
        }

        #[test]
        fn median_in_place_agrees_with_sorting(xs in samples()) {
            let mut sorted = xs.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let mut buf = xs;
            prop_assert_eq!(median_in_place(&mut buf), percentile(&sorted, 50.0));
        }
    }
}

//! The verdict on one figure measured in two runs: the bootstrap interval of the ratio of
//! medians B/A, a p-value at the same unit of replication (the interval's own test with
//! several processes a side, the Mann-Whitney U test over samples with one), the two-gate rule
//! that turns them into faster, slower, no change or within noise, and the smallest change
//! the runs could have called.

use serde::Serialize;

use crate::analysis::bootstrap::{grouped_two_sample_ci, two_sample_ci};
use crate::analysis::processes::{hull, kept_groups, log_interval, ratio_between_interval};
use crate::analysis::stats::median;
use crate::model::Run;

/// Significance level of the Mann-Whitney test.
pub const ALPHA: f64 = 0.05;
/// Default half-width of the noise band around a ratio of 1 (±2%).
pub const DEFAULT_NOISE: f64 = 0.02;
/// A ratio at least this far from 1 (B/A ≥ 1.5 or ≤ 1/1.5) is highlighted.
pub const HIGHLIGHT_RATIO: f64 = 1.5;
/// Bootstrap resamples for the ratio's interval, and the fixed seed that makes it repeatable.
pub const RESAMPLES: usize = 2000;
pub const SEED: u64 = 0xC0_4FA2E;

/// The outcome for one experiment and parameter set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significant, and the ratio's CI lies entirely below the noise band.
    Faster,
    /// Significant, and the ratio's CI lies entirely above the noise band.
    Slower,
    /// Not significant (p ≥ 0.05).
    NoChange,
    /// Significant, but the ratio's CI touches the noise band.
    WithinNoise,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::WithinNoise => "within noise",
        }
    }

    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }
}

/// Mann-Whitney U test of two independent samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the second sample: the number of pairs (a, b) with b > a, ties counting one half.
    pub u: f64,
    /// The standardised statistic, continuity-corrected (0 when every value is tied).
    pub z: f64,
    /// Two-sided p-value from the normal approximation.
    pub p: f64,
}

/// Mann-Whitney U test (H. B. Mann and D. R. Whitney, Ann. Math. Statist. 18, 1947), two-sided,
/// by the normal approximation with the tie correction of the variance and a continuity
/// correction of ½ (as scipy.stats.mannwhitneyu, `method="asymptotic"`, `use_continuity=True`).
///
/// Ranks need no distributional assumption, which suits skewed timing samples. The normal
/// approximation is good from about 8 values per side; oslab's samples are more.
///
/// `None` when a side is empty or holds a NaN. When every value is tied the variance is 0 and
/// there is no evidence of a difference: `p = 1`.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| x.is_nan()) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let n = na + nb;
    // (value, from b?) sorted; average ranks over runs of ties.
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, false))
        .chain(b.iter().map(|&x| (x, true)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum_b = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        // Ranks i+1 ..= j, averaged.
        let rank = (i + 1 + j) as f64 / 2.0;
        rank_sum_b += rank * all[i..j].iter().filter(|v| v.1).count() as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let u = rank_sum_b - nb * (nb + 1.0) / 2.0;
    let mean = na * nb / 2.0;
    let variance = na * nb / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    // Zero (every value tied) or NaN: no evidence of a difference.
    if variance.is_nan() || variance <= 0.0 {
        return Some(MannWhitney { u, z: 0.0, p: 1.0 });
    }
    let distance = ((u - mean).abs() - 0.5).max(0.0);
    let z = (u - mean).signum() * distance / variance.sqrt();
    let p = erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0);
    Some(MannWhitney { u, z, p })
}

/// The complementary error function, by the Chebyshev fit of W. H. Press et al., "Numerical
/// Recipes in C", 2nd ed., §6.2 (`erfcc`): fractional error below 1.2e-7 everywhere, ample for
/// a p-value compared with 0.05.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// 97.5% quantile of the standard normal distribution.
const Z975: f64 = 1.959_964;

/// The two-sided p-value of "B/A = 1" that the ratio's 95% interval `ci` implies: the log
/// ratio over the standard error given by the interval's half on the side of 1 (its log width
/// over 1.96). So p < 0.05 exactly when the interval excludes 1: the test and the interval
/// rest on one unit of replication and cannot disagree. `None` for a ratio that is not
/// positive and finite; 1 when the interval reaches 0 or infinity on the side of 1.
pub fn interval_p(ratio: f64, ci: (f64, f64)) -> Option<f64> {
    if !(ratio > 0.0 && ratio.is_finite()) {
        return None;
    }
    let log_ratio = ratio.ln();
    let end = if log_ratio >= 0.0 { ci.0 } else { ci.1 };
    if !(end > 0.0 && end.is_finite()) {
        return Some(1.0);
    }
    let half = (log_ratio - end.ln()).abs();
    if half == 0.0 {
        return Some(if log_ratio == 0.0 { 1.0 } else { 0.0 });
    }
    let z = log_ratio.abs() / (half / Z975);
    Some(erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// The smallest change the two runs could have called, as a fraction (0.08: 8%), at the
/// interval's width and the noise band: a slowdown is called when its interval's low end is
/// above 1 + noise, i.e. from B/A = (1 + noise) · ratio / low; a speedup when its high end is
/// below 1 − noise. The larger of the two. `None` when the interval reaches 0 or is not
/// finite: no change could have been called.
pub fn detectable(ratio: f64, ci: (f64, f64), noise: f64) -> Option<f64> {
    let (low, high) = ci;
    if !(low > 0.0 && high.is_finite() && ratio > 0.0 && ratio.is_finite()) {
        return None;
    }
    let slower = (1.0 + noise) * ratio / low - 1.0;
    let faster = 1.0 - (1.0 - noise) * ratio / high;
    Some(slower.max(faster).max(noise))
}

/// The two-gate verdict. `p` is `None` when the metric has no per-sample values (a count
/// taken once over untimed batches): then the point ratio alone is held against the band.
pub fn verdict(p: Option<f64>, ratio: f64, ci: Option<(f64, f64)>, noise: f64) -> Verdict {
    let (low, high) = match (p, ci) {
        (Some(p), _) if p.is_nan() || p >= ALPHA => return Verdict::NoChange,
        (_, Some(ci)) => ci,
        _ => (ratio, ratio),
    };
    if low.is_nan() || high.is_nan() {
        Verdict::NoChange
    } else if low > 1.0 + noise {
        Verdict::Slower
    } else if high < 1.0 - noise {
        Verdict::Faster
    } else {
        Verdict::WithinNoise
    }
}

/// The noise band when the user sets none: the default band, widened to the precision both
/// runs were measured to (a run sampled until its CI was within ±5% cannot tell a 3% change
/// from its own noise), with the reason.
pub fn default_noise(a: &Run, b: &Run) -> (f64, Option<String>) {
    let precision = a.settings.precision.max(b.settings.precision);
    if precision > DEFAULT_NOISE {
        (
            precision,
            Some("the runs' precision target; --noise sets the band".to_string()),
        )
    } else {
        (DEFAULT_NOISE, None)
    }
}

/// `b / a` for per-operation figures: 0/0 is "the same" (1), x/0 is infinitely more.
pub fn ratio(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 { 1.0 } else { b / a }
}

/// Whether a ratio is a difference of 1.5× or more, either way.
pub fn is_large(ratio: f64) -> bool {
    ratio >= HIGHLIGHT_RATIO || ratio <= 1.0 / HIGHLIGHT_RATIO
}

/// Which test gave a comparison's p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Mann-Whitney over the samples: one worker process on each side, whose samples are the
    /// only replication there is (and what the interval resamples).
    MannWhitney,
    /// The interval's own ([`interval_p`]): with several processes a side, or an interval
    /// floored by earlier runs, the unit of replication is the process (or the run), and
    /// a test over samples would count each sample as independent.
    Interval,
}

/// Two sample sets of one figure compared: medians, ratio B/A with its interval, the
/// p-value (from the interval's level), the verdict and the smallest change it could call.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub a: f64,
    pub b: f64,
    pub ratio: f64,
    pub ci: Option<(f64, f64)>,
    pub p: Option<f64>,
    /// What `p` comes from; `None` with no p.
    pub test: Option<Test>,
    /// The smallest change (a fraction) these runs could have called ([`detectable`]);
    /// `None` when none could have been.
    pub detectable: Option<f64>,
    pub verdict: Verdict,
    /// A change (faster/slower) of 1.5× or more.
    pub highlight: bool,
}

/// Compare two sets of per-sample values (`None` when a side is empty or not finite).
pub fn compare_samples(a: &[f64], b: &[f64], noise: f64) -> Option<Comparison> {
    compare_groups(&[a], &[b], noise)
}

/// Compare two sides made of the samples of one or more worker processes each (`run
/// --repeat`): medians of the pooled samples; the CI of the ratio from the two-stage bootstrap
/// when a side has several processes, so that the spread between processes, not only within
/// one, decides whether a change stands out of the noise, and the p-value from that interval
/// ([`interval_p`]); with one process a side, bootstrap and Mann-Whitney over its samples.
pub fn compare_groups(a: &[&[f64]], b: &[&[f64]], noise: f64) -> Option<Comparison> {
    // A cold first process is a warm-up on either side, as in every pooled figure.
    let (a, b) = (&kept_groups(a)[..], &kept_groups(b)[..]);
    let pooled = |groups: &[&[f64]]| groups.iter().flat_map(|g| g.iter().copied()).collect();
    let (pa, pb): (Vec<f64>, Vec<f64>) = (pooled(a), pooled(b));
    let (ma, mb) = (median(&pa)?, median(&pb)?);
    if !ma.is_finite() || !mb.is_finite() {
        return None;
    }
    let r = ratio(ma, mb);
    // The bootstrap combines (median of a resample of a, median of a resample of b); with
    // processes on both sides it is widened to what the spread of their medians implies.
    let ci = if a.len() == 1 && b.len() == 1 {
        two_sample_ci(&pa, &pb, ratio, 0.95, RESAMPLES, SEED)
    } else {
        let medians =
            |groups: &[&[f64]]| -> Option<Vec<f64>> { groups.iter().map(|g| median(g)).collect() };
        let between = medians(a)
            .zip(medians(b))
            .and_then(|(ma, mb)| ratio_between_interval(r, &ma, &mb));
        grouped_two_sample_ci(a, b, ratio, 0.95, RESAMPLES, SEED).map(|ci| hull(ci, between))
    };
    let (p, test) = if a.len() == 1 && b.len() == 1 {
        (mann_whitney_u(&pa, &pb).map(|t| t.p), Test::MannWhitney)
    } else {
        (ci.and_then(|ci| interval_p(r, ci)), Test::Interval)
    };
    let verdict = verdict(Some(p.unwrap_or(1.0)), r, ci, noise);
    Some(Comparison {
        a: ma,
        b: mb,
        ratio: r,
        ci,
        p,
        test: p.map(|_| test),
        detectable: ci.and_then(|ci| detectable(r, ci, noise)),
        verdict,
        highlight: verdict.is_change() && is_large(r),
    })
}

/// `c` with its ratio's interval widened, where narrower, to `ratio · e^(±half)` (the spread
/// between runs: `analysis::processes::ratio_between_runs`) and its verdict judged again.
pub fn floored(c: Comparison, half: f64, noise: f64) -> Comparison {
    let Some(ci) = c.ci else {
        return c;
    };
    // The runs are now the unit of replication: the test is the interval's.
    from_interval(
        c.a,
        c.b,
        c.ratio,
        hull(ci, Some(log_interval(c.ratio, half))),
        noise,
    )
}

/// The comparison of figures `a` and `b` whose ratio's 95% interval `ci` is all there is to
/// test: p is that interval's own ([`interval_p`]), so the two cannot disagree; the verdict,
/// the smallest change it could call and the highlight follow.
pub fn from_interval(a: f64, b: f64, ratio: f64, ci: (f64, f64), noise: f64) -> Comparison {
    let p = interval_p(ratio, ci);
    let verdict = verdict(Some(p.unwrap_or(1.0)), ratio, Some(ci), noise);
    Comparison {
        a,
        b,
        ratio,
        ci: Some(ci),
        p,
        test: p.map(|_| Test::Interval),
        detectable: detectable(ratio, ci, noise),
        verdict,
        highlight: verdict.is_change() && is_large(ratio),
    }
}

/// Compare two single per-operation figures that have no per-sample spread: the verdict is the
/// ratio held against the noise band, with no test and no interval.
pub fn compare_figures(a: f64, b: f64, noise: f64) -> Comparison {
    let r = ratio(a, b);
    let verdict = verdict(None, r, None, noise);
    Comparison {
        a,
        b,
        ratio: r,
        ci: None,
        p: None,
        test: None,
        // The point ratio alone is held against the band: any change past it is called.
        detectable: Some(noise),
        verdict,
        highlight: verdict.is_change() && is_large(r),
    }
}

//! What differs between the worker processes that measured one configuration, and the
//! interval that follows from it.
//!
//! Samples of one process share its memory layout, its CPU and a few seconds of the host's
//! state; their confidence interval says how well that one process was measured, not what a
//! rerun would give. With the medians of several processes (each with its own layout, see
//! `harness::layout`), the spread between them is measured directly:
//!
//! - **between**: the standard deviation of the process medians, relative to their median;
//! - **within**: the median of the processes' own 95% CI half-widths, relative likewise;
//! - **layout-sensitive**: between exceeds within and 1%: where a process lands matters more
//!   than how long it is measured;
//! - **a process apart**: with five processes or more, one whose median sits 5% or more from
//!   the others' median and five times their spread or more ([`apart`]) is at a level of its
//!   own — a state that process kept, as in one configuration run in nine on this AMD EPYC
//!   VM (docs/measurement.md, "a process apart"). It stays in the pooled median, which it
//!   moves little, and in the bootstrap; Student's t over the process medians, a mean's
//!   interval that would take it at full weight, rests on the others' spread ([`steady`]);
//! - **first-run effect**: with three or more processes, the first is slower than every other
//!   by more than 2% and by more than three times the others' spread — cold caches (dentry,
//!   page cache, the binary's pages) that only the first process of a run pays. Such a
//!   process is a warm-up: with four processes or more the pooled figures leave it out; with
//!   three it stays (two medians alone give an interval that says nothing); both are said.
//!
//! The interval of a pooled median covers both parts: the two-stage bootstrap (processes,
//! then their samples), widened where needed to Student's t interval over the process medians
//! on a log scale, `median · e^(±t(0.975, n−1) · s / √n)` with `s` the standard deviation of
//! their logarithms — the bootstrap alone is too narrow with as few groups as a run has (it
//! cannot see farther than the processes it drew); times are positive and spread by factors,
//! so no interval reaches zero. Processes whose medians differ by more than 2× make the
//! configuration **unstable** here ([`unstable`]): it is shown with their medians, not as an
//! interval.
//!
//! That is a confidence interval of this run's median; what a user bets on is where a rerun's
//! median falls. A rerun's median varies as much as this one, so the difference of the two
//! varies twice as much: the **rerun interval** ([`rerun_interval`]) has √2 times the half
//! widths, on a log scale (with three processes a 95% confidence interval covers a rerun's
//! median only about 90% of the time, with many about 83%). Host phases that last longer than a run's processes
//! move all of a run's processes alike, which no spread inside the run can show; where the
//! machine has measured the configuration before (with the same settings), the spread of
//! those runs' medians floors the interval ([`between_runs`]).

use super::bootstrap::median_ci;
use super::stats::{median, spread_ratio, summarize};

/// How far the first process must be above every other, relatively, to count as cold.
const FIRST_RUN_MIN: f64 = 0.02;
/// …and how many times the others' own spread.
const FIRST_RUN_SPREADS: f64 = 3.0;
/// Between-process spread above this (and above the within part) makes a configuration
/// layout-sensitive.
const LAYOUT_SENSITIVE_MIN: f64 = 0.01;
/// A cold first process is left out only when at least three others remain: with two, the
/// interval over their medians has one degree of freedom (t = 12.7) and says nothing.
const MIN_TO_DROP: usize = 4;
/// Bootstrap resamples for each process's own interval.
const RESAMPLES: usize = 400;
/// A process is apart when its median sits this far from the others' median (relatively)…
pub const APART_MIN: f64 = 0.05;
/// …and this many times the others' spread (the standard deviation of their logarithms).
pub const APART_SPREADS: f64 = 5.0;
/// Processes a configuration needs before one may be called apart: with fewer, the others'
/// spread is too rough to tell a level of its own from the tail of one spread, and one of
/// three or four moves the median of a rerun's processes.
const APART_MIN_PROCESSES: usize = 5;

/// The spread of one configuration's processes.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// Each process's median, in the order they ran.
    pub medians: Vec<f64>,
    /// Standard deviation of the medians over their median (0 with one process), a cold
    /// first process left out.
    pub between: f64,
    /// Median of the processes' 95% CI half-widths over their median's.
    pub within: f64,
    /// How much slower the first process was than the slowest other, relatively, when that
    /// makes it a cold first run.
    pub first_run: Option<f64>,
    /// The process (an index into `medians`) at a level of its own among those kept
    /// ([`apart`]): in the pooled figures, not in the spread `between` measures.
    pub apart: Option<usize>,
}

impl Spread {
    /// From each process's samples (none empty, at least one process); `None` otherwise.
    pub fn of(groups: &[&[f64]], seed: u64) -> Option<Spread> {
        if groups.is_empty() || groups.iter().any(|g| g.is_empty()) {
            return None;
        }
        let medians: Vec<f64> = groups.iter().map(|g| median(g)).collect::<Option<_>>()?;
        let halves: Vec<f64> = groups
            .iter()
            .zip(&medians)
            .filter_map(|(g, m)| {
                let (lo, hi) = median_ci(g, 0.95, RESAMPLES, seed)?;
                (*m != 0.0).then(|| (hi - lo) / 2.0 / m.abs())
            })
            .collect();
        let first_run = first_run(&medians);
        // A cold first process is a warm-up: the spread is that of the processes kept.
        let dropped = usize::from(leaves_out(first_run, medians.len()));
        let kept = &medians[dropped..];
        let center = median(kept)?;
        let apart = apart(kept);
        Some(Spread {
            between: relative_sd(&without(kept, apart), center),
            within: median(&halves).unwrap_or(0.0),
            first_run,
            apart: apart.map(|i| i + dropped),
            medians,
        })
    }

    /// Where the process a configuration lands in matters more than how long it is measured.
    pub fn layout_sensitive(&self) -> bool {
        self.medians.len() >= 2
            && self.between > self.within
            && self.between >= LAYOUT_SENSITIVE_MIN
    }

    /// Whether the pooled figures leave the first process out: it was cold, and enough others
    /// remain.
    pub fn drops_first(&self) -> bool {
        leaves_out(self.first_run, self.medians.len())
    }

    /// The medians the pooled figures use: all, or all but a cold first process.
    pub fn kept(&self) -> &[f64] {
        if self.drops_first() {
            &self.medians[1..]
        } else {
            &self.medians
        }
    }

    /// The kept medians whose spread the intervals rest on: all but a process apart.
    pub fn steady(&self) -> Vec<f64> {
        let dropped = usize::from(self.drops_first());
        without(self.kept(), self.apart.map(|i| i - dropped))
    }
}

/// The one process among `medians` (an index) at a level of its own: with
/// [`APART_MIN_PROCESSES`] or more, the one farthest from the others' median on a log scale,
/// when it sits [`APART_MIN`] or more from it and [`APART_SPREADS`] times the others' spread
/// or more. `None` otherwise, or with a median that is not positive and finite.
///
/// Such a process is not noise around the others' level but a level of its own, which the
/// pooled median (of all samples) barely feels while Student's t over the process medians,
/// a mean's interval, takes it at full weight: on 2026-12-07 one process of six at 199 ns
/// among five at 160–162 ns made `syscall.read entry=inline`'s interval ±13% around a median
/// that five runs put within 1% of each other (docs/measurement.md, "a process apart").
pub fn apart(medians: &[f64]) -> Option<usize> {
    if medians.len() < APART_MIN_PROCESSES {
        return None;
    }
    let logs: Vec<f64> = medians
        .iter()
        .map(|&m| (m > 0.0 && m.is_finite()).then(|| m.ln()))
        .collect::<Option<_>>()?;
    let mut farthest: Option<(usize, f64, f64)> = None;
    for (i, &x) in logs.iter().enumerate() {
        let others: Vec<f64> = [&logs[..i], &logs[i + 1..]].concat();
        let distance = (x - median(&others)?).abs();
        if farthest.is_none_or(|(_, d, _)| distance > d) {
            farthest = Some((i, distance, summarize(&others)?.stddev));
        }
    }
    let (i, distance, spread) = farthest?;
    (distance >= APART_MIN.ln_1p() && distance >= APART_SPREADS * spread).then_some(i)
}

/// The median of the process at a level of its own among the processes a side's figures keep
/// (`groups`: each process's samples, a cold first one left out by [`kept_groups`]), where one
/// is: what `compare` names beside a ratio whose interval rests on the others.
pub fn apart_median(groups: &[&[f64]]) -> Option<f64> {
    let medians: Vec<f64> = kept_groups(groups)
        .iter()
        .map(|g| median(g))
        .collect::<Option<_>>()?;
    apart(&medians).map(|i| medians[i])
}

/// `medians` without the process at a level of its own ([`apart`]), where one is: those whose
/// spread every interval over process medians rests on.
pub fn steady(medians: &[f64]) -> Vec<f64> {
    without(medians, apart(medians))
}

/// `medians` without the one at `apart`, if any.
fn without(medians: &[f64], apart: Option<usize>) -> Vec<f64> {
    let mut rest = medians.to_vec();
    if let Some(i) = apart {
        rest.remove(i);
    }
    rest
}

/// The processes whose samples the pooled figures use: all, or all but a cold first one
/// (see [`Spread::first_run`]). Every view and `compare` pool through this, so they agree.
pub fn kept_groups<'a>(groups: &[&'a [f64]]) -> Vec<&'a [f64]> {
    let medians: Option<Vec<f64>> = groups.iter().map(|g| median(g)).collect();
    match medians.as_deref().and_then(first_run) {
        Some(_) if groups.len() >= MIN_TO_DROP => groups[1..].to_vec(),
        _ => groups.to_vec(),
    }
}

/// The interval of the ratio `b / a` of two sides' pooled medians that the spread between
/// processes alone implies: Student's t on the logarithms of the process medians, a process
/// apart left out of each side ([`steady`]) (Welch's standard error and degrees of freedom),
/// around `ratio`.
/// `None` unless both sides have two or more processes with positive medians.
pub fn ratio_between_interval(ratio: f64, a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let logs = |xs: &[f64]| -> Option<Vec<f64>> {
        xs.iter().map(|&x| (x > 0.0).then(|| x.ln())).collect()
    };
    if ratio.is_nan() || ratio <= 0.0 {
        return None;
    }
    let half = welch_half_width(&logs(&steady(a))?, &logs(&steady(b))?)?;
    Some(log_interval(ratio, half))
}

/// The interval of the ratio `b / a` of two configurations of one run from their rounds: each
/// round ran one process of every configuration, one after the other, so the two processes of
/// a round shared the host's state of those seconds, which the ratio of their medians cancels
/// (duet benchmarking, Bulej et al. 2020, at the level of processes). `a` and `b` hold each
/// round's process median in round order (`None`: that round's process did not count);
/// Student's t on the logarithms of the ratios of the rounds both have, around their mean, a
/// round whose ratio is apart from the others' left out as a process apart is ([`steady`]):
/// one of its two processes sat at a level of its own, which no pairing cancels.
/// `None` with fewer than two such rounds or a median that is not positive.
pub fn paired_ratio_interval(a: &[Option<f64>], b: &[Option<f64>]) -> Option<(f64, f64)> {
    let ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .filter_map(|(x, y)| x.zip(*y))
        .map(|(x, y)| (x > 0.0 && y > 0.0).then(|| y / x))
        .collect::<Option<_>>()?;
    let logs: Vec<f64> = steady(&ratios).iter().map(|r| r.ln()).collect();
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let s = summarize(&logs)?;
    let half = t975(n - 1) * s.stddev / (n as f64).sqrt();
    (half.is_finite() && s.mean.is_finite()).then(|| ((s.mean - half).exp(), (s.mean + half).exp()))
}

/// The interval of the difference `(a − b) / divisor` of two sides' pooled medians that the
/// spread between processes alone implies: Welch's t interval on the process medians, a
/// process apart left out of each side ([`steady`]), around `center`. `None` unless both sides
/// have two or more processes.
pub fn difference_between_interval(
    center: f64,
    a: &[f64],
    b: &[f64],
    divisor: f64,
) -> Option<(f64, f64)> {
    if !center.is_finite() || !divisor.is_finite() || divisor == 0.0 {
        return None;
    }
    let half = welch_half_width(&steady(a), &steady(b))? / divisor.abs();
    Some((center - half, center + half))
}

/// Half the width of Welch's 95% t interval of the difference of the means of `a` and `b`:
/// the standard error of that difference times t at the Welch–Satterthwaite degrees of
/// freedom. `None` unless both have two or more values and the width is finite.
pub fn welch_half_width(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    // The squared standard error of each side's mean.
    let q = |xs: &[f64]| Some(summarize(xs)?.stddev.powi(2) / xs.len() as f64);
    let (qa, qb) = (q(a)?, q(b)?);
    if qa + qb == 0.0 {
        return Some(0.0);
    }
    let df =
        (qa + qb).powi(2) / (qa.powi(2) / (a.len() - 1) as f64 + qb.powi(2) / (b.len() - 1) as f64);
    let half = t975(df.round().max(1.0) as usize) * (qa + qb).sqrt();
    half.is_finite().then_some(half)
}

fn leaves_out(first_run: Option<f64>, processes: usize) -> bool {
    first_run.is_some() && processes >= MIN_TO_DROP
}

/// Student's t interval of the process medians' center, a process apart left out
/// ([`steady`]), around `center`, on a log scale:
/// times are positive and their spread multiplicative, so the interval is `center · e^(±h)`
/// with `h = t(0.975, n−1) · sd(ln medians) / √n` and never reaches zero. `None` with fewer
/// than two medians, or with a center or a median that is not positive and finite.
pub fn between_interval(center: f64, medians: &[f64]) -> Option<(f64, f64)> {
    let medians = steady(medians);
    let n = medians.len();
    if n < 2 || !(center > 0.0 && center.is_finite()) {
        return None;
    }
    let half = t975(n - 1) * log_sd(medians.iter().copied())? / (n as f64).sqrt();
    half.is_finite().then(|| log_interval(center, half))
}

/// Process medians further apart than this factor (the slowest over the fastest) make a
/// configuration unstable here: no interval over three or so of them says anything then.
pub const UNSTABLE_FACTOR: f64 = 2.0;

/// Whether the process medians differ by more than [`UNSTABLE_FACTOR`]: the configuration is
/// then reported with its processes' medians, as unstable here, rather than an interval.
pub fn unstable(medians: &[f64]) -> bool {
    spread_ratio(medians).is_some_and(|s| s + 1.0 > UNSTABLE_FACTOR)
}

/// An interval's low end `lo` around `center`: a positive figure (a time, a count) cannot have
/// a negative value in its interval.
fn lower_bound(center: f64, lo: f64) -> f64 {
    if center >= 0.0 { lo.max(0.0) } else { lo }
}

/// Earlier runs of a configuration needed before their spread floors its rerun interval. From
/// two on, t(0.975, 2) = 4.3 times so rough a spread floors it wider than four would, but a
/// host that moves between runs is seen two runs sooner: 15 stored runs replayed offline gave
/// coverage 96–98% at a median half-width of ±6.3% from two earlier runs on, 92–97% at ±6.0%
/// from four, and `bench/calibration.sh`'s five runs on a fresh database covered 85–86% with
/// four, the first four runs resting on their own processes alone (docs/measurement.md).
pub const MIN_EARLIER_RUNS: usize = 2;
/// Earlier runs each side of a comparison needs before their spread floors the ratio's
/// interval ([`ratio_between_runs`]): that spread is the earlier runs' alone, `k − 1` degrees of
/// freedom a side (t(0.975, 1) = 12.7 from two runs; from four a side, 3.18 where one side's
/// spread is all of it and 2.45 where the two sides' are alike).
pub const MIN_EARLIER_RUNS_COMPARED: usize = 4;
/// …and the most that count: the most recent, so that a state of the machine ages out.
pub const MAX_EARLIER_RUNS: usize = 9;

/// Where a rerun's median falls, 95%, around this run's `center`: the confidence interval `ci`
/// of the median with its half-widths times √2 when `processes` (two or more) measured it,
/// floored by the spread of the `earlier` runs' medians ([`between_runs`]). With one process
/// `ci` is only that process's and is kept as it is (it says nothing of a rerun), floored
/// likewise.
pub fn rerun_interval(
    center: f64,
    ci: (f64, f64),
    processes: usize,
    earlier: &[f64],
) -> (f64, f64) {
    let widened = if processes >= 2 && center > 0.0 && center.is_finite() && ci.0 > 0.0 {
        // √2 times each half-width on a log scale: never down to zero.
        let widen = |end: f64| center * (end / center).powf(std::f64::consts::SQRT_2);
        (widen(ci.0), widen(ci.1))
    } else if processes >= 2 && center.is_finite() {
        let lo = center - (center - ci.0) * std::f64::consts::SQRT_2;
        (
            lower_bound(center, lo),
            center + (ci.1 - center) * std::f64::consts::SQRT_2,
        )
    } else {
        ci
    };
    let (Some(s), Some(used)) = (between_runs(center, earlier), recent_earlier(earlier)) else {
        return widened;
    };
    // A rerun's median and this one's, each off by the spread of runs: √2 of it between them.
    let half = t975(used.len()) * s * std::f64::consts::SQRT_2;
    hull(widened, Some(log_interval(center, half)))
}

/// The spread between runs: the standard deviation of the logarithms of this run's median
/// `center` and the last [`MAX_EARLIER_RUNS`] of the `earlier` runs' medians (oldest first),
/// i.e. relative to the median. `None` with fewer than [`MIN_EARLIER_RUNS`] earlier runs or
/// with a median that is not positive and finite.
pub fn between_runs(center: f64, earlier: &[f64]) -> Option<f64> {
    log_sd(recent_earlier(earlier)?.iter().copied().chain([center]))
}

/// The half-width, on a log scale, that the earlier runs' spread alone gives a rerun interval:
/// `t(0.975, k) · √2 · s` as [`rerun_interval`] floors it, `s` over the last k earlier runs'
/// medians without this run's. It is what no number of this run's processes narrows: this
/// run's own median is what more processes would move (`analysis::adaptive` weighs it).
/// `None` with fewer than [`MIN_EARLIER_RUNS`].
pub fn earlier_runs_half(earlier: &[f64]) -> Option<f64> {
    let recent = recent_earlier(earlier)?;
    Some(t975(recent.len()) * log_sd(recent.iter().copied())? * std::f64::consts::SQRT_2)
}

/// The earlier runs' medians that count: the last [`MAX_EARLIER_RUNS`], or `None` with fewer
/// than [`MIN_EARLIER_RUNS`].
pub fn recent_earlier(earlier: &[f64]) -> Option<&[f64]> {
    (earlier.len() >= MIN_EARLIER_RUNS)
        .then(|| &earlier[earlier.len().saturating_sub(MAX_EARLIER_RUNS)..])
}

/// Half the width, on a log scale, of the interval that the spread between runs implies for the
/// ratio of two runs' medians `b / a` (`compare`): `t(0.975, ν) · √(s_a² + s_b²)` with `s` the
/// spread of each side's earlier runs' medians alone (the two runs compared may differ by the
/// very change `compare` looks for). ν is Welch–Satterthwaite's degrees of freedom for a sum of
/// two variances estimated apart, `(s_a² + s_b²)² / (s_a⁴/(k_a − 1) + s_b⁴/(k_b − 1))`, rounded
/// down: from `min(k) − 1`, where one side's spread is all of it, to `k_a + k_b − 2`, where
/// both are alike. A side without enough earlier runs takes the other's `s`, an estimate
/// counted twice with that side's `k − 1`. `None` when neither side has enough.
pub fn ratio_between_runs(a_earlier: &[f64], b_earlier: &[f64]) -> Option<f64> {
    let of = |earlier: &[f64]| -> Option<(f64, usize)> {
        let recent = compared_earlier(earlier)?;
        Some((log_sd(recent.iter().copied())?, recent.len()))
    };
    let (variance, df) = match (of(a_earlier), of(b_earlier)) {
        (Some(a), Some(b)) => (a.0 * a.0 + b.0 * b.0, welch_df(a, b)),
        (Some((s, k)), None) | (None, Some((s, k))) => (2.0 * s * s, k - 1),
        (None, None) => return None,
    };
    Some(t975(df) * variance.sqrt())
}

/// The earlier runs' medians a side of a comparison floors its ratio's interval with
/// ([`ratio_between_runs`]): the last [`MAX_EARLIER_RUNS`], or `None` with fewer than
/// [`MIN_EARLIER_RUNS_COMPARED`].
pub fn compared_earlier(earlier: &[f64]) -> Option<&[f64]> {
    recent_earlier(earlier).filter(|r| r.len() >= MIN_EARLIER_RUNS_COMPARED)
}

/// Welch–Satterthwaite's degrees of freedom for `s_a² + s_b²`, each side its spread and its
/// count `(s, k)`, rounded down; `min(k) − 1` when both spreads are zero.
fn welch_df((sa, ka): (f64, usize), (sb, kb): (f64, usize)) -> usize {
    let (va, vb) = (sa * sa, sb * sb);
    let fewest = ka.min(kb) - 1;
    let denominator = va * va / (ka - 1) as f64 + vb * vb / (kb - 1) as f64;
    let df = (va + vb).powi(2) / denominator;
    if df.is_finite() {
        (df.floor() as usize).clamp(fewest, ka + kb - 2)
    } else {
        fewest
    }
}

/// The standard deviation of the logarithms of `medians`: `None` unless every one is positive
/// and finite and there are two or more.
fn log_sd(medians: impl Iterator<Item = f64>) -> Option<f64> {
    let logs: Vec<f64> = medians
        .map(|m| (m > 0.0 && m.is_finite()).then(|| m.ln()))
        .collect::<Option<_>>()?;
    let s = summarize(&logs)?.stddev;
    s.is_finite().then_some(s)
}

/// `center · e^(±half)`: an interval `half` wide each way on a log scale, never reaching zero
/// for a positive `center`.
pub fn log_interval(center: f64, half: f64) -> (f64, f64) {
    (center * (-half).exp(), center * half.exp())
}

/// The hull of two intervals.
pub fn hull(a: (f64, f64), b: Option<(f64, f64)>) -> (f64, f64) {
    match b {
        Some(b) => (a.0.min(b.0), a.1.max(b.1)),
        None => a,
    }
}

/// The 97.5% quantile of Student's t distribution with `df` degrees of freedom: the published
/// table to 30, then the normal quantile's expansion, within 0.002 of the exact quantile (the
/// tests hold it against reference values). Hand-written, as `erfc` and `special` are, rather
/// than a statistics crate for three functions of a dozen lines each.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Past the table, the normal quantile plus the first term of its expansion.
        _ => 1.960 + 2.4 / df as f64,
    }
}

/// The sample standard deviation of `xs` relative to `center` (0 for fewer than two values).
fn relative_sd(xs: &[f64], center: f64) -> f64 {
    match summarize(xs) {
        Some(summary) if center != 0.0 => summary.stddev / center.abs(),
        _ => 0.0,
    }
}

/// The first median's excess over the slowest other, when it marks a cold first process.
fn first_run(medians: &[f64]) -> Option<f64> {
    let (first, others) = medians.split_first()?;
    if others.len() < 2 {
        return None;
    }
    let slowest = others.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let center = median(others)?;
    if center <= 0.0 {
        return None;
    }
    let excess = (first - slowest) / center;
    let spread = relative_sd(others, center);
    (excess > FIRST_RUN_MIN && excess > FIRST_RUN_SPREADS * spread).then_some(excess)
}

#[cfg(test)]
mod tests;

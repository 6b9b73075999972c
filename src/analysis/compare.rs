//! Comparing two runs: which experiments got faster or slower, and whether the two machines
//! (or settings) were alike enough for the comparison to be fair. Pure: runs in, records out.
//!
//! The verdict follows criterion.rs's two-gate rule (`analysis/compare.rs` and
//! `report.rs::compare_to_threshold` there): a change is reported only if it is statistically
//! significant (Mann-Whitney U, p < 0.05) **and** the bootstrap 95% confidence interval of the
//! ratio of medians B/A lies entirely outside a noise band (±2% by default). A significant
//! change whose interval touches the band is "within noise"; an insignificant one is "no
//! change".

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::bootstrap::{grouped_two_sample_ci, two_sample_ci};
use super::result::counter_per_op;
use super::stats::median;
use crate::model::{ExperimentResult, Run, Rusage, Sample};

/// Significance level of the Mann-Whitney test.
pub const ALPHA: f64 = 0.05;
/// Default half-width of the noise band around a ratio of 1 (±2%).
pub const DEFAULT_NOISE: f64 = 0.02;
/// A ratio at least this far from 1 (B/A ≥ 1.5 or ≤ 1/1.5) is highlighted.
pub const HIGHLIGHT_RATIO: f64 = 1.5;
/// Bootstrap resamples for the ratio's interval, and the fixed seed that makes it repeatable.
pub const RESAMPLES: usize = 2000;
pub const SEED: u64 = 0xC0_4FA2E;

/// Environment fields left out of the environment diff: they change from one second to the
/// next on the same machine (free memory, the CPU frequency read at that instant), so a
/// difference says nothing about whether the comparison is fair.
pub const VOLATILE_ENV_FIELDS: [&str; 2] = ["mem_available_bytes", "cpu_mhz"];
/// Settings left out of the settings diff: the command line (it always differs, if only by
/// the tag) and the file experiments' directory (a temporary path).
pub const IGNORED_SETTINGS: [&str; 2] = ["argv", "dir"];

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

/// Two sample sets of one figure compared: medians, ratio B/A with its bootstrap CI, the
/// Mann-Whitney p-value, and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub a: f64,
    pub b: f64,
    pub ratio: f64,
    pub ci: Option<(f64, f64)>,
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// A change (faster/slower) of 1.5× or more.
    pub highlight: bool,
}

/// Compare two sets of per-sample values (`None` when a side is empty or not finite).
pub fn compare_samples(a: &[f64], b: &[f64], noise: f64) -> Option<Comparison> {
    compare_groups(&[a], &[b], noise)
}

/// Compare two sides made of the samples of one or more worker processes each (`run
/// --repeat`): medians and the Mann-Whitney test over the pooled samples; the CI of the ratio
/// from the two-stage bootstrap when a side has several processes, so that the spread between
/// processes, not only within one, decides whether a change stands out of the noise.
pub fn compare_groups(a: &[&[f64]], b: &[&[f64]], noise: f64) -> Option<Comparison> {
    let pooled = |groups: &[&[f64]]| groups.iter().flat_map(|g| g.iter().copied()).collect();
    let (pa, pb): (Vec<f64>, Vec<f64>) = (pooled(a), pooled(b));
    let (ma, mb) = (median(&pa)?, median(&pb)?);
    if !ma.is_finite() || !mb.is_finite() {
        return None;
    }
    let r = ratio(ma, mb);
    // The bootstrap combines (median of a resample of a, median of a resample of b).
    let ci = if a.len() == 1 && b.len() == 1 {
        two_sample_ci(&pa, &pb, ratio, 0.95, RESAMPLES, SEED)
    } else {
        grouped_two_sample_ci(a, b, ratio, 0.95, RESAMPLES, SEED)
    };
    let p = mann_whitney_u(&pa, &pb).map(|t| t.p);
    let verdict = verdict(Some(p.unwrap_or(1.0)), r, ci, noise);
    Some(Comparison {
        a: ma,
        b: mb,
        ratio: r,
        ci,
        p,
        verdict,
        highlight: verdict.is_change() && is_large(r),
    })
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
        verdict,
        highlight: verdict.is_change() && is_large(r),
    }
}

/// What is compared: the time per operation, a getrusage field or a counter per operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metric {
    Time,
    Rusage(&'static str),
    Counter(String),
}

impl Metric {
    /// `time`, a getrusage field name, or else a counter name.
    pub fn parse(name: &str) -> Metric {
        if name == "time" {
            return Metric::Time;
        }
        match Rusage::FIELDS.iter().find(|f| **f == name) {
            Some(field) => Metric::Rusage(field),
            None => Metric::Counter(name.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Metric::Time => "time",
            Metric::Rusage(f) => f,
            Metric::Counter(c) => c,
        }
    }

    /// This metric's value per operation in each sample; `None` if some sample lacks it.
    /// `maxrss_kb` is a high-water mark, not a count: it is taken as it is.
    fn per_sample(&self, samples: &[Sample]) -> Option<Vec<f64>> {
        samples
            .iter()
            .map(|s| {
                let ops = s.ops.max(1) as f64;
                match self {
                    Metric::Time => Some(s.ns_per_op),
                    Metric::Rusage("maxrss_kb") => Some(s.rusage.maxrss_kb as f64),
                    Metric::Rusage(f) => s.rusage.get(f).map(|v| v as f64 / ops),
                    Metric::Counter(c) => s.counters.get(c)?.value.map(|v| v / ops),
                }
            })
            .collect()
    }
}

/// One experiment and parameter set present in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub experiment: String,
    pub params: BTreeMap<String, String>,
    /// The suite's name for the configuration, if any.
    pub label: Option<String>,
    /// Worker processes (repeats) on each side.
    pub processes: (usize, usize),
    pub unit: String,
    /// `None` when the metric was not measured on one side (e.g. a counter unsupported there).
    pub comparison: Option<Comparison>,
}

/// An experiment and parameter set measured in only one of the runs (or with no samples in
/// the other: `status` then says why, e.g. `unsupported`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unpaired {
    pub experiment: String,
    pub params: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `a` or `b`: the run that has samples.
    pub only_in: &'static str,
    /// The other run's status for it, if it has the experiment at all.
    pub other_status: Option<&'static str>,
}

/// One field that differs between the runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    pub field: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq)]
pub struct RunComparison {
    pub a_id: i64,
    pub b_id: i64,
    pub metric: Metric,
    pub noise: f64,
    /// Why the band is what it is, when the user did not set it.
    pub noise_reason: Option<String>,
    pub environment_diff: Vec<FieldDiff>,
    pub settings_diff: Vec<FieldDiff>,
    pub pairs: Vec<Pair>,
    pub unpaired: Vec<Unpaired>,
}

impl RunComparison {
    /// Whether any experiment got slower (for `--fail-on-regression`).
    pub fn any_slower(&self) -> bool {
        self.pairs.iter().any(|p| {
            p.comparison
                .as_ref()
                .is_some_and(|c| c.verdict == Verdict::Slower)
        })
    }
}

type Key = (String, BTreeMap<String, String>, Option<String>);

/// Results grouped by experiment, parameters and suite label, in first-seen order: the
/// repeats (`run --repeat N`) of one configuration form one group.
fn group(run: &Run) -> Vec<(Key, Vec<&ExperimentResult>)> {
    let mut groups: Vec<(Key, Vec<&ExperimentResult>)> = Vec::new();
    for r in &run.results {
        let key = (r.experiment.clone(), r.params.clone(), r.label.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
}

/// The metric over one side's results: per-sample values of each worker process that has
/// samples when every sample has them, else a single per-operation figure (a counter counted
/// over untimed probe batches).
enum Side {
    Samples(Vec<Vec<f64>>),
    Figure(f64),
}

fn side(metric: &Metric, results: &[&ExperimentResult]) -> Option<Side> {
    if let Metric::Counter(name) = metric
        && let Some(r) = results
            .iter()
            .find(|r| r.probes.iter().any(|p| p.name == *name))
    {
        return counter_per_op(name, &r.samples, &r.probes).map(Side::Figure);
    }
    let groups: Vec<Vec<f64>> = results
        .iter()
        .filter(|r| !r.samples.is_empty())
        .map(|r| metric.per_sample(&r.samples))
        .collect::<Option<_>>()?;
    let usable = !groups.is_empty() && groups.iter().flatten().all(|x| x.is_finite());
    usable.then_some(Side::Samples(groups))
}

/// Compare `b` against `a`: every experiment and parameter set with samples in both, in A's
/// order, then B's new ones; the environment and settings diffs.
pub fn compare_runs(a: &Run, b: &Run, metric: &Metric, noise: f64) -> RunComparison {
    let (ga, gb) = (group(a), group(b));
    let measured = |rs: &[&ExperimentResult]| rs.iter().any(|r| !r.samples.is_empty());
    let status = |rs: &[&ExperimentResult]| rs.first().map(|r| r.status.as_str());
    let mut pairs = Vec::new();
    let mut unpaired = Vec::new();
    for (key, ra) in &ga {
        let rb = gb.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice());
        match rb {
            Some(rb) if measured(ra) && measured(rb) => {
                let comparison = match (side(metric, ra), side(metric, rb)) {
                    (Some(Side::Samples(x)), Some(Side::Samples(y))) => {
                        let x: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
                        let y: Vec<&[f64]> = y.iter().map(Vec::as_slice).collect();
                        compare_groups(&x, &y, noise)
                    }
                    (Some(x), Some(y)) => {
                        let figure = |s: Side| match s {
                            Side::Figure(f) => f,
                            Side::Samples(v) => median(&v.concat()).unwrap_or(f64::NAN),
                        };
                        Some(compare_figures(figure(x), figure(y), noise))
                    }
                    _ => None,
                };
                let processes =
                    |rs: &[&ExperimentResult]| rs.iter().filter(|r| !r.samples.is_empty()).count();
                pairs.push(Pair {
                    experiment: key.0.clone(),
                    params: key.1.clone(),
                    label: key.2.clone(),
                    processes: (processes(ra), processes(rb)),
                    unit: ra[0].unit.clone(),
                    comparison,
                });
            }
            Some(rb) if measured(ra) => unpaired.push(Unpaired {
                experiment: key.0.clone(),
                params: key.1.clone(),
                label: key.2.clone(),
                only_in: "a",
                other_status: status(rb),
            }),
            Some(rb) if measured(rb) => unpaired.push(Unpaired {
                experiment: key.0.clone(),
                params: key.1.clone(),
                label: key.2.clone(),
                only_in: "b",
                other_status: status(ra),
            }),
            Some(_) => {} // measured in neither: nothing to say here, `show` says why
            None if measured(ra) => unpaired.push(Unpaired {
                experiment: key.0.clone(),
                params: key.1.clone(),
                label: key.2.clone(),
                only_in: "a",
                other_status: None,
            }),
            None => {}
        }
    }
    for (key, rb) in &gb {
        if !ga.iter().any(|(k, _)| k == key) && measured(rb) {
            unpaired.push(Unpaired {
                experiment: key.0.clone(),
                params: key.1.clone(),
                label: key.2.clone(),
                only_in: "b",
                other_status: None,
            });
        }
    }
    RunComparison {
        a_id: a.id,
        b_id: b.id,
        metric: metric.clone(),
        noise,
        noise_reason: None,
        environment_diff: diff_values(
            &serde_json::to_value(&a.environment).unwrap_or(Value::Null),
            &serde_json::to_value(&b.environment).unwrap_or(Value::Null),
            &VOLATILE_ENV_FIELDS,
        ),
        settings_diff: settings_diff(a, b),
        pairs,
        unpaired,
    }
}

/// The run settings plus the clock source and the recorded oslab version: what the user chose
/// or what oslab chose for them.
fn settings_diff(a: &Run, b: &Run) -> Vec<FieldDiff> {
    let doc = |r: &Run| {
        let mut v = serde_json::to_value(&r.settings).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("clock_source".into(), Value::String(r.clock.source.clone()));
        }
        v
    };
    diff_values(&doc(a), &doc(b), &IGNORED_SETTINGS)
}

/// Flatten a JSON document to dotted keys: nested objects and maps become `parent.child`,
/// arrays of objects `parent.0.child`, arrays of plain values one comma-separated value;
/// `null` fields are absent.
pub fn flatten(value: &Value) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        let key = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Null => {}
            Value::Object(m) => {
                for (k, v) in m {
                    walk(&key(k), v, out);
                }
            }
            Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
                for (i, item) in items.iter().enumerate() {
                    walk(&key(&i.to_string()), item, out);
                }
            }
            Value::Array(items) => {
                let text: Vec<String> = items.iter().map(scalar).collect();
                out.insert(prefix.to_string(), text.join(","));
            }
            other => {
                out.insert(prefix.to_string(), scalar(other));
            }
        }
    }
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    let mut out = BTreeMap::new();
    walk("", value, &mut out);
    out
}

/// Every flattened field whose value differs (or exists on one side only), sorted by name;
/// fields whose top-level name is in `skip` are left out.
pub fn diff_values(a: &Value, b: &Value, skip: &[&str]) -> Vec<FieldDiff> {
    let (fa, fb) = (flatten(a), flatten(b));
    let skipped = |k: &str| skip.contains(&k.split('.').next().unwrap_or(k));
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !skipped(k) && fa.get(*k) != fb.get(*k))
        .map(|k| FieldDiff {
            field: k.clone(),
            a: fa.get(k).cloned(),
            b: fb.get(k).cloned(),
        })
        .collect()
}

#[cfg(test)]
mod tests;

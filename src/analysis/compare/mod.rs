//! Comparing two runs: which experiments got faster or slower, and whether the two machines
//! (or settings) were alike enough for the comparison to be fair. Pure: runs in, records out.
//!
//! The verdict follows criterion.rs's two-gate rule (`analysis/compare.rs` and
//! `report.rs::compare_to_threshold` there): a change is reported only if it is statistically
//! significant (Mann-Whitney U, p < 0.05) **and** the bootstrap 95% confidence interval of the
//! ratio of medians B/A lies entirely outside a noise band (±2% by default). A significant
//! change whose interval touches the band is "within noise"; an insignificant one is "no
//! change" (`verdict`). What differs besides the figures, machine and settings, is in `fields`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::host::{KernelCanaries, PhaseBound, SlowRun, kernel_canary_of, leave_out};
use super::processes::{apart_median, compared_earlier, ratio_between_runs};
use super::result::{counter_per_op, sum_probes};
use super::stats::median;
use crate::model::{ExperimentResult, Run, Rusage, Sample, equivalence};

/// How an experiment is performed on a system (named as `Environment::os` names it), from its
/// declaration: `experiment::cell`, passed down by the caller (the declarations sit above
/// this layer).
pub type CellOf = fn(&str, &str) -> Option<equivalence::Cell>;

mod fields;
pub use fields::*;
mod verdict;
pub use verdict::*;
mod sets;
pub use sets::{compare_figure_sets, compare_run_sets};

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
    /// Worker processes (repeats) on each side; comparing sets of runs, over all of a side's
    /// runs.
    pub processes: (usize, usize),
    /// Earlier runs' medians each side's results carry (`ExperimentResult::earlier_medians`):
    /// from `analysis::processes::MIN_EARLIER_RUNS_COMPARED` on, their spread widens a time's
    /// CI. Comparing sets of runs, the first runs' (unused: the sets' own spread is the CI).
    pub earlier_runs: (usize, usize),
    pub unit: String,
    /// A side whose figure comes from a failed process that kept samples (interrupted,
    /// crashed, timed out): a partial measurement.
    pub partial: (bool, bool),
    /// `None` when the metric was not measured on one side (e.g. a counter unsupported there).
    pub comparison: Option<Comparison>,
    /// When the runs are of two operating systems: how each performs the experiment.
    pub implementations: Option<Implementations>,
    /// The kernel canaries of this configuration's samples in each run, when both read one.
    pub kernel_canaries: Option<KernelCanaries>,
    /// The median of a process at a level of its own on each side
    /// (`analysis::processes::apart`): in that side's median, not in the spread its interval
    /// rests on.
    pub apart: (Option<f64>, Option<f64>),
    /// A side that took the configuration in a slow kernel phase of its host from its first
    /// sample to its last, against its machine's earlier runs of it ([`SlowRun`], as `run`
    /// said when it measured it): its figure is likely slower for the host alone.
    pub slow_run: (Option<SlowRun>, Option<SlowRun>),
    /// The earlier runs each side's floor rests on, where it has enough
    /// (`analysis::processes::compared_earlier`).
    pub earlier_range: (Option<EarlierRange>, Option<EarlierRange>),
    /// The floor from the earlier runs' spread made the ratio's interval wider than its own
    /// processes did: what reruns gave, not this pair of runs, set what it could see.
    pub ci_from_earlier_runs: bool,
    /// Comparing sets of runs ([`compare_run_sets`]): the runs of each side that measured
    /// this configuration, each one observation; `None` for two runs.
    pub runs: Option<(usize, usize)>,
}

/// The earlier runs' medians a side of a comparison floors its ratio's interval with: how
/// many, the fastest and the slowest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EarlierRange {
    pub runs: usize,
    pub lowest: f64,
    pub highest: f64,
}

impl EarlierRange {
    fn of(earlier: &[f64]) -> Option<EarlierRange> {
        let recent = compared_earlier(earlier)?;
        Some(EarlierRange {
            runs: recent.len(),
            lowest: recent.iter().copied().reduce(f64::min)?,
            highest: recent.iter().copied().reduce(f64::max)?,
        })
    }
}

/// How each side's system performs one experiment, from its cells (`model::equivalence`):
/// the mechanisms differ or not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implementations {
    pub a: String,
    pub b: String,
    /// The mechanisms differ (a vDSO read against a system call, futex against `_umtx_op`):
    /// the two figures are not of the same operation.
    pub differs: bool,
}

/// The two runs' operating systems, when they differ (`Environment::os`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Systems {
    pub a: String,
    pub b: String,
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

/// Two runs compared.
#[derive(Debug, Clone, PartialEq)]
pub struct RunComparison {
    pub a_id: i64,
    pub b_id: i64,
    pub metric: Metric,
    pub noise: f64,
    /// Why the band is what it is, when the user did not set it.
    pub noise_reason: Option<String>,
    /// Set when the runs are of two operating systems: every pair then says how each performs
    /// its experiment.
    pub systems: Option<Systems>,
    pub environment_diff: Vec<FieldDiff>,
    pub settings_diff: Vec<FieldDiff>,
    /// The two runs' kernel canaries (`analysis::host`), when both read one: a host that made
    /// entering the kernel dearer during one run moves every kernel-bound figure of it.
    pub kernel_canaries: Option<KernelCanaries>,
    pub pairs: Vec<Pair>,
    pub unpaired: Vec<Unpaired>,
    /// Comparing sets of runs ([`compare_run_sets`]): the run ids of each side, `a_id` and
    /// `b_id` their first; `None` for two runs.
    pub run_sets: Option<(Vec<i64>, Vec<i64>)>,
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

pub(crate) type Key = (String, BTreeMap<String, String>, Option<String>);

/// Results grouped by experiment, parameters and suite label, in first-seen order: the
/// repeats (`run --repeat N`) of one configuration form one group.
pub(crate) fn group(run: &Run) -> Vec<(Key, Vec<&ExperimentResult>)> {
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
        && results
            .iter()
            .any(|r| r.probes.iter().any(|p| p.name == *name))
    {
        // Counted over untimed batches: the probes of every process summed, as the pooled
        // figure of the configuration reads them.
        return counter_per_op(name, &[], &sum_probes(results)).map(Side::Figure);
    }
    let groups: Vec<Vec<f64>> = results
        .iter()
        .filter(|r| !r.samples.is_empty())
        .map(|r| metric.per_sample(&r.samples))
        .collect::<Option<_>>()?;
    let usable = !groups.is_empty() && groups.iter().flatten().all(|x| x.is_finite());
    usable.then_some(Side::Samples(groups))
}

/// What the experiment layer declares that a comparison needs: how each system performs an
/// experiment, and which experiments' figures move with the host's kernel phases alone.
#[derive(Clone, Copy)]
pub struct Declared {
    pub cell: CellOf,
    pub phase_bound: PhaseBound,
}

/// Compare `b` against `a`: every experiment and parameter set with samples in both, in A's
/// order, then B's new ones; the environment and settings diffs. Runs of two systems say how
/// each performs every experiment, from `declared.cell`; each side's figures count its samples
/// as `show`'s do (`declared.phase_bound`: `analysis::host::leave_out`).
pub fn compare_runs(
    a: &Run,
    b: &Run,
    metric: &Metric,
    noise: f64,
    declared: Declared,
) -> RunComparison {
    let Declared { cell, phase_bound } = declared;
    let (ga, gb) = (group(a), group(b));
    let systems = (a.environment.os != b.environment.os).then(|| Systems {
        a: a.environment.os.clone(),
        b: b.environment.os.clone(),
    });
    let mut pairs = Vec::new();
    let mut unpaired = Vec::new();
    for (key, ra) in &ga {
        let rb = gb.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice());
        match rb {
            Some(rb) if measured(ra) && measured(rb) => {
                let mut p = pair(key, ra, rb, metric, noise, phase_bound);
                p.implementations = systems.as_ref().map(|s| implementations(&key.0, s, cell));
                pairs.push(p);
            }
            Some(rb) if measured(ra) => unpaired.push(lone(key, "a", status(rb))),
            Some(rb) if measured(rb) => unpaired.push(lone(key, "b", status(ra))),
            Some(_) => {} // measured in neither: nothing to say here, `show` says why
            None if measured(ra) => unpaired.push(lone(key, "a", None)),
            None => {}
        }
    }
    for (key, rb) in &gb {
        if !ga.iter().any(|(k, _)| k == key) && measured(rb) {
            unpaired.push(lone(key, "b", None));
        }
    }
    RunComparison {
        a_id: a.id,
        b_id: b.id,
        metric: metric.clone(),
        noise,
        noise_reason: None,
        systems,
        environment_diff: environment_diff(a, b),
        settings_diff: settings_diff(a, b),
        kernel_canaries: KernelCanaries::of(a, b),
        pairs,
        unpaired,
        run_sets: None,
    }
}

/// Whether some worker process of the group took samples.
fn measured(rs: &[&ExperimentResult]) -> bool {
    rs.iter().any(|r| !r.samples.is_empty())
}

/// The status of the group's first result.
fn status(rs: &[&ExperimentResult]) -> Option<&'static str> {
    rs.first().map(|r| r.status.as_str())
}

/// The results whose samples a side's figures count: `steady` (its slow kernel phases left
/// out) where `leave_out` made it, else `all`.
fn counted<'a>(
    steady: &'a Option<Vec<ExperimentResult>>,
    all: &[&'a ExperimentResult],
) -> Vec<&'a ExperimentResult> {
    steady
        .as_ref()
        .map_or_else(|| all.to_vec(), |s| s.iter().collect())
}

/// One configuration measured in both runs, compared.
fn pair(
    key: &Key,
    ra: &[&ExperimentResult],
    rb: &[&ExperimentResult],
    metric: &Metric,
    noise: f64,
    phase_bound: PhaseBound,
) -> Pair {
    // The samples each side's figures count: those of slow kernel phases left out, as
    // `analysis::pool` leaves them out of the medians `show` gives.
    let (steady_a, steady_b) = (leave_out(ra, phase_bound), leave_out(rb, phase_bound));
    let (counted_a, counted_b) = (counted(&steady_a, ra), counted(&steady_b, rb));
    // What `run` told of a side measured wholly in a slow kernel phase.
    let slow_run = |counted: &[&ExperimentResult]| {
        SlowRun::of(
            counted.first()?,
            kernel_canary_of(counted.iter().copied())?,
            phase_bound,
        )
    };
    let slow_run = (slow_run(&counted_a), slow_run(&counted_b));
    let mut apart = (None, None);
    let (ea, eb) = (&ra[0].earlier_medians, &rb[0].earlier_medians);
    let mut ci_from_earlier_runs = false;
    let comparison = match (side(metric, &counted_a), side(metric, &counted_b)) {
        (Some(Side::Samples(x)), Some(Side::Samples(y))) => {
            let x: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
            let y: Vec<&[f64]> = y.iter().map(Vec::as_slice).collect();
            if *metric == Metric::Time {
                apart = (apart_median(&x), apart_median(&y));
            }
            // Times: what reruns gave on each side's machine bounds the change too.
            compare_groups(&x, &y, noise).map(|c| match ratio_between_runs(ea, eb) {
                Some(half) if *metric == Metric::Time => {
                    let own = c.ci;
                    let c = floored(c, half, noise);
                    ci_from_earlier_runs = c.ci != own;
                    c
                }
                _ => c,
            })
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
    Pair {
        experiment: key.0.clone(),
        params: key.1.clone(),
        label: key.2.clone(),
        processes: (processes(ra), processes(rb)),
        earlier_runs: (ra[0].earlier_medians.len(), rb[0].earlier_medians.len()),
        unit: ra[0].unit.clone(),
        partial: (partial(ra), partial(rb)),
        comparison,
        implementations: None,
        kernel_canaries: KernelCanaries::of_results(
            ra,
            rb,
            (steady_a.is_some(), steady_b.is_some()),
        ),
        apart,
        slow_run,
        earlier_range: (EarlierRange::of(ea), EarlierRange::of(eb)),
        ci_from_earlier_runs,
        runs: None,
    }
}

/// How many of one configuration's results in a run are worker processes with samples.
fn processes(rs: &[&ExperimentResult]) -> usize {
    rs.iter().filter(|r| !r.samples.is_empty()).count()
}

/// Whether one of a configuration's results in a run failed with samples kept: a partial
/// measurement.
fn partial(rs: &[&ExperimentResult]) -> bool {
    rs.iter()
        .any(|r| r.status == crate::model::Status::Failed && !r.samples.is_empty())
}

/// How each system performs `experiment`, as its cells say; a system or an experiment oslab
/// does not know reads "not in oslab's equivalence table" and differs.
fn implementations(experiment: &str, systems: &Systems, cell_of: CellOf) -> Implementations {
    let cell = |os: &str| cell_of(experiment, os);
    let (ca, cb) = (cell(&systems.a), cell(&systems.b));
    let text = |c: Option<equivalence::Cell>, os: &str| {
        c.map_or(format!("{os}: not in oslab's equivalence table"), |c| {
            c.text()
        })
    };
    let how = |c: Option<equivalence::Cell>| c.and_then(|c| c.how());
    Implementations {
        a: text(ca, &systems.a),
        b: text(cb, &systems.b),
        differs: how(ca).is_none() || how(ca) != how(cb),
    }
}

/// A configuration with samples in run `only_in` alone.
fn lone(key: &Key, only_in: &'static str, other_status: Option<&'static str>) -> Unpaired {
    Unpaired {
        experiment: key.0.clone(),
        params: key.1.clone(),
        label: key.2.clone(),
        only_in,
        other_status,
    }
}

#[cfg(test)]
pub(crate) mod tests;

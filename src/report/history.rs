//! `oslab history`: one configuration's pooled median across stored runs, oldest first, each
//! with its rerun interval (`Pooled::figures`), its kernel and what changed in the machine's
//! description and the run's settings since the run before it — where a figure moved, and
//! what moved with it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::analysis::compare::{FieldDiff, environment_diff, settings_diff};
use crate::analysis::host::HostFigures;
use crate::model::{ExperimentResult, Run};
use crate::report::format::{Align, Table, rerun_cell, steal_text, time_ns};
use crate::report::names::config_name;
use crate::report::pool::pool;

/// One stored run's figure of the configuration.
#[derive(Debug, Clone)]
pub struct Point {
    pub run_id: i64,
    pub started_at: f64,
    pub tag: Option<String>,
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub status: String,
    pub processes: usize,
    pub median: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// The processes' medians when they differ by more than 2× (no interval then).
    pub unstable: Option<Vec<f64>>,
    /// What the host did during its samples (`analysis::host`): the canary's median, whose
    /// move from run to run is the CPU's speed, and the stolen time. `None` for runs stored
    /// before oslab read them.
    pub host: Option<HostFigures>,
    /// The environment and settings fields that differ from the previous point's run.
    pub changed: Vec<FieldDiff>,
}

/// One configuration over the runs that measured it.
#[derive(Debug, Clone)]
pub struct History {
    pub experiment: String,
    pub params: BTreeMap<String, String>,
    pub label: Option<String>,
    pub unit: String,
    pub points: Vec<Point>,
}

/// A configuration: its parameters and suite label.
pub type Key = (BTreeMap<String, String>, Option<String>);

/// Whether `r` measured `experiment` at `key`.
pub fn measures(r: &ExperimentResult, experiment: &str, key: &Key) -> bool {
    r.experiment == experiment && r.params == key.0 && r.label == key.1
}

/// The configurations of `experiment` that `runs` measured whose parameters include every one
/// of `given` (and whose label is `label`, when given), in the order first seen.
pub fn configurations(
    runs: &[Run],
    experiment: &str,
    given: &[(String, String)],
    label: Option<&str>,
) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    for r in runs.iter().flat_map(|run| &run.results) {
        let matches = r.experiment == experiment
            && given.iter().all(|(k, v)| r.params.get(k) == Some(v))
            && label.is_none_or(|l| r.label.as_deref() == Some(l));
        let key = (r.params.clone(), r.label.clone());
        if matches && !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// The history of `experiment` at `key` over `runs` (oldest first): one point per run that
/// measured it.
pub fn history(runs: &[Run], experiment: &str, key: &Key) -> History {
    let mut points: Vec<Point> = Vec::new();
    let mut unit = String::new();
    let mut previous: Option<&Run> = None;
    for run in runs {
        let Some(p) = pool(&run.results)
            .into_iter()
            .find(|p| measures(&p.result, experiment, key))
        else {
            continue;
        };
        let f = p.figures();
        unit.clone_from(&p.result.unit);
        let changed = previous.map_or_else(Vec::new, |before| {
            let mut diff = environment_diff(before, run);
            diff.extend(settings_diff(before, run));
            diff
        });
        points.push(Point {
            run_id: run.id,
            started_at: run.started_at,
            tag: run.tag.clone(),
            hostname: run.environment.hostname.clone(),
            kernel: run.environment.kernel_release.clone(),
            status: p.result.status.as_str().to_string(),
            processes: p.processes,
            median: f.stats.as_ref().map(|s| s.median),
            ci: f.ci,
            unstable: f.unstable.clone(),
            host: p.host(),
            changed,
        });
        previous = Some(run);
    }
    History {
        experiment: experiment.to_string(),
        params: key.0.clone(),
        label: key.1.clone(),
        unit,
        points,
    }
}

/// The changed fields in one cell: `kernel_release 6.1.0 → 6.8.0; load – → cpu`.
pub fn changed_cell(changed: &[FieldDiff]) -> String {
    const SHOWN: usize = 3;
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "–".into());
    let mut parts: Vec<String> = changed
        .iter()
        .take(SHOWN)
        .map(|d| format!("{} {} → {}", d.field, dash(&d.a), dash(&d.b)))
        .collect();
    if changed.len() > SHOWN {
        parts.push(format!("{} more", changed.len() - SHOWN));
    }
    parts.join("; ")
}

/// The history as text: one row per run, oldest first.
pub fn render(h: &History) -> String {
    let per = h.unit.strip_prefix("ns/").unwrap_or(&h.unit);
    let mut out = format!(
        "{}: {} run(s), oldest first; time per {per}, pooled median and rerun 95% interval; \
         × previous: the median against the run before; canary: a fixed loop timed after every \
         sample, whose move is the CPU's speed; null call: a call into the kernel that does no \
         work, timed after every sample, whose move is the cost of entering the kernel; slow \
         phases: the samples taken while the host made entering the kernel dearer (a null call \
         1.2× its configuration's fast level or slower), left out of the median where they \
         came in phases, with how far that moved it, or in, with how far leaving them out \
         would; stolen: \
         the time the hypervisor stole during the samples; changed: the machine's description \
         and the run's settings since the run before\n\n",
        config_name(&h.experiment, h.label.as_deref(), &h.params),
        h.points.len()
    );
    let mut table = Table::new(&[
        ("run", Align::Right),
        ("started", Align::Left),
        ("host", Align::Left),
        ("kernel", Align::Left),
        ("median", Align::Right),
        ("rerun 95%", Align::Right),
        ("× previous", Align::Right),
        ("canary", Align::Right),
        ("null call", Align::Right),
        ("slow phases", Align::Right),
        ("stolen", Align::Right),
        ("processes", Align::Right),
        ("status", Align::Left),
        ("changed", Align::Left),
    ]);
    let mut before: Option<f64> = None;
    for p in &h.points {
        let median = p.median.unwrap_or(f64::NAN);
        let vs = match (before, p.median) {
            (Some(b), Some(m)) if b > 0.0 => format!("{:.3}", m / b),
            _ => "–".into(),
        };
        let run = match &p.tag {
            Some(tag) => format!("{} [{tag}]", p.run_id),
            None => p.run_id.to_string(),
        };
        table.row(vec![
            run,
            crate::report::format::utc(p.started_at),
            p.hostname.clone().unwrap_or_else(|| "–".into()),
            p.kernel.clone().unwrap_or_else(|| "–".into()),
            p.median.map_or("–".into(), time_ns),
            rerun_cell(p.ci, p.unstable.as_deref(), median),
            vs,
            p.host
                .as_ref()
                .map_or("–".into(), |h| time_ns(h.canary_median_ns)),
            p.host
                .as_ref()
                .and_then(|h| h.kernel_canary_median_ns)
                .map_or("–".into(), time_ns),
            steady_cell(p),
            p.host
                .as_ref()
                .and_then(|h| h.steal_ns)
                .map_or("–".into(), steal_text),
            p.processes.to_string(),
            p.status.clone(),
            changed_cell(&p.changed),
        ]);
        if p.median.is_some() {
            before = p.median;
        }
    }
    out.push_str(&table.render(0));
    out
}

/// The samples taken in slow kernel phases (`analysis::host::phase`): "left out (−4.1%)" where
/// the median leaves them out, with how far that moved it; "in (−3.0% without)" where they
/// stay in and would move it; "–" when none was, or too few others remain.
fn steady_cell(p: &Point) -> String {
    let phase = p.host.as_ref().and_then(|h| h.kernel_phase);
    match phase.and_then(|k| Some((k.left_out, k.median_shift?))) {
        Some((true, s)) => format!("left out ({:+.1}%)", s * 100.0),
        Some((false, s)) => format!("in ({:+.1}% without)", s * 100.0),
        None => "–".into(),
    }
}

/// The history as one JSON document (docs/json.md, "history").
pub fn document(h: &History) -> Value {
    let finite = |x: f64| x.is_finite().then_some(x);
    let points: Vec<Value> = h
        .points
        .iter()
        .map(|p| {
            json!({
                "run_id": p.run_id,
                "started_at": p.started_at,
                "tag": p.tag,
                "hostname": p.hostname,
                "kernel_release": p.kernel,
                "status": p.status,
                "processes": p.processes,
                "median": p.median.and_then(finite),
                "ci_low": p.ci.and_then(|c| finite(c.0)),
                "ci_high": p.ci.and_then(|c| finite(c.1)),
                "unstable": p.unstable.is_some(),
                "host": p.host,
                "changed": p.changed.iter().map(|d| json!({
                    "field": d.field, "before": d.a, "after": d.b,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "experiment": h.experiment,
        "params": h.params,
        "label": h.label,
        "unit": h.unit,
        "runs": points,
    })
}

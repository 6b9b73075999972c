//! The JSON contract of `oslab run --json` and `oslab show --json`: one document per run,
//! times in nanoseconds per operation. Field names are stable; fields may be added.
//! `results` holds one entry per worker process; `configurations` one per configuration,
//! its processes pooled, with the figures `show` and the report print.

use serde_json::{Value, json};

use crate::analysis::result::{ResultFigures, figures};
use crate::model::{ExperimentResult, Run};
use crate::report::pool::{Pooled, pool};

pub fn run_document(run: &Run) -> Value {
    json!({
        "run_id": run.id,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "tag": run.tag,
        "oslab_version": run.oslab_version,
        "settings": run.settings,
        "clock": run.clock,
        "environment": run.environment,
        "results": run.results.iter().map(result_document).collect::<Vec<_>>(),
        "configurations": pool(&run.results).iter().map(configuration_document).collect::<Vec<_>>(),
    })
}

/// One configuration as every view shows it: its processes pooled (`report::pool`), with
/// what differed between them. `results` above keeps each process apart.
pub fn configuration_document(p: &Pooled) -> Value {
    let f = p.figures();
    let spread = p.spread.as_ref();
    json!({
        "experiment": p.result.experiment,
        "label": p.result.label,
        "params": p.result.params,
        "unit": p.result.unit,
        "status": p.result.status.as_str(),
        "reason": p.result.reason,
        "processes": p.processes,
        "samples": p.result.samples.len(),
        "median": f.stats.as_ref().map(|s| s.median),
        "ci_low": f.ci.map(|c| c.0),
        "ci_high": f.ci.map(|c| c.1),
        "process_medians": spread.map(|s| s.medians.clone()),
        "between_processes": spread.map(|s| s.between),
        "within_process": spread.map(|s| s.within),
        "layout_sensitive": spread.is_some_and(|s| s.layout_sensitive()),
        "first_run_excess": spread.and_then(|s| s.first_run),
    })
}

pub fn result_document(result: &ExperimentResult) -> Value {
    let f: ResultFigures = figures(result);
    let stat = |pick: fn(&crate::analysis::Summary) -> f64| f.stats.as_ref().map(pick);
    json!({
        "experiment": result.experiment,
        "label": result.label,
        "params": result.params,
        "unit": result.unit,
        "status": result.status.as_str(),
        "reason": result.reason,
        "samples": result.samples.len(),
        "ops": f.ops,
        "median": stat(|s| s.median),
        "ci_low": f.ci.map(|c| c.0),
        "ci_high": f.ci.map(|c| c.1),
        "mean": stat(|s| s.mean),
        "stddev": stat(|s| s.stddev),
        "min": stat(|s| s.min),
        "max": stat(|s| s.max),
        "p5": stat(|s| s.p5),
        "p95": stat(|s| s.p95),
        "mad": stat(|s| s.mad),
        "cv": stat(|s| s.cv),
        "outliers": f.outliers,
        "stop_reason": result.stop_reason.map(|r| r.as_str()),
        "calibration": result.calibration,
        "counters": f.counters,
        "rusage": f.rusage,
        "partner_rusage": f.partner,
        "children_rusage": f.children,
        "contamination": f.contamination,
        "validation": result.validation,
        "facts": result.facts,
        "load": result.load,
        "other_cpus_busy": result.other_cpus_busy,
        "started_at": result.started_at,
        "duration_s": result.duration_s,
    })
}

//! The JSON contract of `oslab run --json` and `oslab show --json`: one document per run,
//! times in nanoseconds per operation. Field names are stable; fields may be added.
//!
//! `results` keeps every worker process apart (one entry per process, numbered); the figure of
//! a configuration — what every other view shows — is in `configurations`, from
//! `Pooled::figures`.

use serde_json::{Value, json};

use crate::analysis::result::{ResultFigures, figures};
use crate::model::{ExperimentResult, Run};
use crate::report::pool::{Pooled, pool, process_numbers};

pub fn run_document(run: &Run) -> Value {
    let pooled = pool(&run.results);
    let mut doc = json!({
        "run_id": run.id,
        "run_uuid": run.uuid,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "tag": run.tag,
        "oslab_version": run.oslab_version,
        "settings": run.settings,
        "clock": run.clock,
        "environment": run.environment,
        "configurations": pooled
            .iter()
            .map(|p| configuration_document(p, &run.settings))
            .collect::<Vec<_>>(),
        "scaling": crate::report::scaling::document(run),
        "paired": crate::report::paired::document(&pooled),
        "unixbench": crate::report::peers::unixbench::document(&pooled),
        "results": run
            .results
            .iter()
            .zip(process_numbers(&run.results))
            .map(|(r, (k, n))| {
                let mut doc = result_document(r);
                doc["process"] = json!(k);
                doc["processes"] = json!(n);
                doc
            })
            .collect::<Vec<_>>(),
    });
    if let Some(summary) = filemicro(&pooled) {
        doc["filemicro"] = summary;
    }
    doc
}

/// The Filebench-like summary of a run with filemicro results (Unix's experiments).
#[cfg(unix)]
fn filemicro(pooled: &[Pooled]) -> Option<Value> {
    crate::report::peers::filemicro::document(pooled)
}

#[cfg(not(unix))]
fn filemicro(_: &[Pooled]) -> Option<Value> {
    None
}

/// One configuration (experiment, parameters, suite label) over the pooled samples of the
/// worker processes that measured it: the figure every view of the run shows.
pub fn configuration_document(p: &Pooled, settings: &crate::model::RunSettings) -> Value {
    let f = p.figures();
    let r = &p.result;
    let spread = p.spread.as_ref();
    json!({
        "experiment": r.experiment,
        "label": r.label,
        "params": r.params,
        "unit": r.unit,
        "status": r.status.as_str(),
        "partial": crate::report::names::is_partial(r),
        "reason": r.reason,
        "processes": p.processes,
        // Why no more processes were added (`run --max-processes`); null when fixed.
        "stopped_adding": crate::report::levels::most_processes(settings).map(|_| {
            crate::report::levels::stopped(p, settings).map_or("cut-short", |s| s.code())
        }),
        "samples": r.samples.len(),
        "median": f.stats.as_ref().map(|s| s.median),
        "ci_low": f.ci.map(|c| c.0),
        "ci_high": f.ci.map(|c| c.1),
        "unstable": f.unstable.is_some(),
        "process_medians": p.process_medians(),
        // Processes left out whole, taken wholly in a slow kernel phase (docs/measurement.md §5).
        "left_out_process_medians": p.left_out_medians,
        "process_cpus": p.process_cpus,
        "cpu_effect": p.cpu_effect().map(|e| json!({
            "p": e.p,
            "tests": e.tests,
            "p_adjusted": e.p_adjusted,
            "differ": e.differ(),
            "cpus": e.groups.iter().map(|g| json!({
                "cpu": g.cpu,
                "median": g.median,
                "processes": g.processes,
            })).collect::<Vec<_>>(),
        })),
        "between_processes": spread.map(|s| s.between),
        "within_process": spread.map(|s| s.within),
        "layout_sensitive": spread.is_some_and(|s| s.layout_sensitive()),
        "first_run_excess": spread.and_then(|s| s.first_run),
        // A process at a level of its own: in the median, not in the interval's spread.
        "apart_process": spread.and_then(|s| s.apart.map(|i| json!({
            "position": i,
            "median": s.medians[i],
        }))),
        "earlier_medians": r.earlier_medians,
        "earlier_slow_medians": r.earlier_slow_medians,
        "earlier_kernel_canaries": r.earlier_kernel_canaries,
        // This run's kernel canary over the median of those, where 1.2 or more: the host was
        // in a slow phase through the configuration (what `run` says when it ends).
        "kernel_slower_than_earlier": crate::report::host::slow_against_earlier_of(p)
            .map(|s| s.slow.ratio()),
        "between_runs": p.between_runs().map(|(spread, _)| spread),
        "machine_floor": p.machine.map(|m| json!({"half": m.half, "configurations": m.configurations})),
        "counters": f.counters,
        "rusage": f.rusage,
        "reclaim": crate::analysis::reclaim::figures(r),
        "host": p.host(),
        "validation": r.validation,
        "facts": r.facts,
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
        "partial": crate::report::names::is_partial(result),
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
        "reclaim": crate::analysis::reclaim::figures(result),
        "host": crate::analysis::host::of_result(result),
        "partner_rusage": f.partner,
        "children_rusage": f.children,
        "contamination": f.contamination,
        "validation": result.validation,
        "facts": result.facts,
        "load": result.load,
        "other_cpus_busy": result.other_cpus_busy,
        "emulation": result.emulation,
        "started_at": result.started_at,
        "duration_s": result.duration_s,
    })
}

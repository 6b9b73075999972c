//! `oslab trace`'s table and JSON: per phase, each system call with its count, errors by
//! errno, the wall time inside it (total, median) and what a well-known start-up call is for;
//! then the latency histograms of the calls that took the most time.

use serde_json::{Value, json};

use crate::analysis::trace::claims::{self, Check, Claim, MAX_UNCLAIMED, MIN_CLAIMED};
use crate::analysis::trace::{BUCKETS, CallStats, Summary, explain};
use crate::model::errno::linux_text;
use crate::report::format::{Align, Table, time_ns};

/// Histograms drawn in the text, for the calls with the most time.
const HISTOGRAMS: usize = 3;

/// What the trace was of, for the heading.
pub struct Heading<'a> {
    pub command: &'a str,
    pub status: String,
    pub wall_ns: f64,
    /// `ebpf` (counted in the kernel) or `perf_records` (a record per call).
    pub backend: &'a str,
    pub method: &'a str,
}

pub fn render(summary: &Summary, heading: &Heading) -> String {
    let total: u64 = summary.calls.iter().map(|c| c.calls).sum();
    let mut out = format!(
        "{}: {total} system calls in {} process{}, {}, {} wall\n",
        heading.command,
        summary.processes,
        if summary.processes == 1 { "" } else { "es" },
        heading.status,
        time_ns(heading.wall_ns)
    );
    out.push_str(&format!("traced with {}", heading.method));
    if summary.lost > 0 {
        out.push_str(&format!(
            "; {} records lost (a ring buffer was full): the counts are lower bounds",
            summary.lost
        ));
    }
    out.push('\n');
    let mut phases: Vec<_> = summary.calls.iter().map(|c| c.phase).collect();
    phases.dedup();
    for phase in phases {
        out.push_str(&format!("\n{}\n", phase.name()));
        let mut table = Table::new(&[
            ("syscall", Align::Left),
            ("calls", Align::Right),
            ("errors", Align::Left),
            ("total", Align::Right),
            ("median", Align::Right),
            ("what it is for", Align::Left),
        ]);
        for c in summary.calls.iter().filter(|c| c.phase == phase) {
            table.row(vec![
                c.name.clone(),
                c.calls.to_string(),
                errors_text(c),
                if c.calls > c.unfinished {
                    time_ns(c.total_ns as f64)
                } else {
                    "–".into()
                },
                c.median_ns.map_or("–".into(), |m| time_ns(m as f64)),
                explain(&c.name).unwrap_or("").to_string(),
            ]);
        }
        out.push_str(&table.render(2));
    }
    out.push_str(&histograms(summary));
    out
}

fn errors_text(c: &CallStats) -> String {
    c.errors
        .iter()
        .map(|(errno, n)| format!("{n} {}", linux_text(*errno)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The log2 histograms of the calls with the most time inside them.
fn histograms(summary: &Summary) -> String {
    let mut by_time: Vec<&CallStats> = summary.calls.iter().filter(|c| c.total_ns > 0).collect();
    by_time.sort_by_key(|c| std::cmp::Reverse(c.total_ns));
    let mut out = String::new();
    for c in by_time.into_iter().take(HISTOGRAMS) {
        let peak = c.histogram.iter().copied().max().unwrap_or(0).max(1);
        out.push_str(&format!(
            "\n{} ({}): time in the call\n",
            c.name,
            c.phase.name()
        ));
        let first = c.histogram.iter().position(|&n| n > 0).unwrap_or(0);
        let last = c.histogram.iter().rposition(|&n| n > 0).unwrap_or(0);
        for (i, &n) in c.histogram.iter().enumerate().take(last + 1).skip(first) {
            let bar = "#".repeat(((n as f64 / peak as f64) * 40.0).ceil() as usize);
            out.push_str(&format!(
                "  {:>9} – {:<9} {:>7}  {bar}\n",
                time_ns((1u64 << i) as f64),
                time_ns((1u64 << (i + 1)) as f64),
                n
            ));
        }
    }
    out
}

pub fn json(summary: &Summary, heading: &Heading, exit_code: Option<i32>) -> Value {
    let calls: Vec<Value> = summary
        .calls
        .iter()
        .map(|c| {
            let errors: serde_json::Map<String, Value> = c
                .errors
                .iter()
                .map(|(e, n)| (linux_text(*e), json!(n)))
                .collect();
            json!({
                "syscall": c.name,
                "nr": c.nr,
                "phase": c.phase,
                "calls": c.calls,
                "errors": errors,
                "unfinished": c.unfinished,
                "total_ns": c.total_ns,
                "median_ns": c.median_ns,
                "histogram_log2_ns": c.histogram,
                "explanation": explain(&c.name),
            })
        })
        .collect();
    json!({
        "command": heading.command,
        "exit_code": exit_code,
        "status": heading.status,
        "wall_ns": heading.wall_ns,
        "backend": heading.backend,
        "method": heading.method,
        "processes": summary.processes,
        "lost": summary.lost,
        "histogram_buckets": BUCKETS,
        "calls": calls,
    })
}

/// What a traced pass of an experiment was, for the heading.
pub struct CheckHeading<'a> {
    /// The experiment and its parameters ([`configuration`]).
    pub experiment: &'a str,
    pub name: &'a str,
    pub params: &'a std::collections::BTreeMap<String, String>,
    /// The experiment's pass is fixed by its parameters: `--ops` (`requested`) was replaced.
    pub fixed: bool,
    pub requested: u64,
    /// `ebpf` or `perf_records`, as [`Heading::backend`].
    pub backend: &'a str,
    pub method: &'a str,
    /// `ExperimentInfo::syscalls` at the traced parameters.
    pub claimed: &'a [Claim],
    pub lost: u64,
}

/// `name (k=v, …)` with every parameter, or the bare name without any.
pub fn configuration(name: &str, params: &std::collections::BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    let list: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{name} ({})", list.join(", "))
}

/// The operations line: how many, and why not `--ops` when the parameters fixed or bounded
/// them.
fn ops_text(check: &Check, heading: &CheckHeading) -> String {
    let why = if check.ops == heading.requested {
        String::new()
    } else if heading.fixed {
        format!(
            " (its pass is fixed by its parameters: {} ops, not the {} asked for)",
            check.ops, heading.requested
        )
    } else {
        format!(
            " (its parameters allow at most {} ops in a pass, not the {} asked for)",
            check.ops, heading.requested
        )
    };
    format!("{} ops{why}", check.ops)
}

/// The table of a traced pass: per call and side, the rate per op and whether it is claimed;
/// then the worker thread's total against the expectation and the verdict.
pub fn render_check(check: &Check, heading: &CheckHeading) -> String {
    let mut out = format!(
        "{}: one pass of {} traced in its worker; calls from {} process{} in a window of {}\n",
        heading.experiment,
        ops_text(check, heading),
        check.processes,
        if check.processes == 1 { "" } else { "es" },
        time_ns(check.window_ns as f64),
    );
    out.push_str(&format!("traced with {}\n", heading.method));
    out.push_str(&format!(
        "claimed per op: {}\n\n",
        if heading.claimed.is_empty() {
            "no system call".to_string()
        } else {
            claims::describe(heading.claimed)
        }
    ));
    let mut table = Table::new(&[
        ("syscall", Align::Left),
        ("per op", Align::Right),
        ("calls", Align::Right),
        ("claimed?", Align::Left),
        ("process", Align::Left),
    ]);
    for r in &check.rates {
        table.row(vec![
            r.syscall.clone(),
            per_op_text(r.per_op),
            r.calls.to_string(),
            if r.claimed { "yes" } else { "no" }.into(),
            r.side.name().into(),
        ]);
    }
    if check.rates.is_empty() {
        out.push_str("  no system call between the markers\n");
    } else {
        out.push_str(&table.render(2));
    }
    out.push_str(&format!(
        "\nworker thread: {:.3} calls per op{}\n",
        check.worker_per_op,
        check.total.map_or(String::new(), |b| format!(
            " (its syscalls expectation: {})",
            b.describe()
        ))
    ));
    if check.matches() {
        out.push_str(&format!(
            "verdict: matches (every claimed call at least {MIN_CLAIMED} of its claimed rate, \
             nothing else {MAX_UNCLAIMED} per op or more)\n"
        ));
    } else {
        let n = check.differences.len();
        out.push_str(&format!(
            "verdict: {n} difference{} from the claims\n",
            if n == 1 { "" } else { "s" }
        ));
        for d in &check.differences {
            out.push_str(&format!("  - {d}\n"));
        }
    }
    out
}

/// A rate per op to three decimals; a rare call is `<0.001`, not a misleading 0.000.
fn per_op_text(per_op: f64) -> String {
    if per_op > 0.0 && per_op < 0.0005 {
        "<0.001".into()
    } else {
        format!("{per_op:.3}")
    }
}

/// The JSON document of a traced pass (docs/json.md).
pub fn check_json(check: &Check, heading: &CheckHeading) -> Value {
    let calls: Vec<Value> = check
        .rates
        .iter()
        .map(|r| {
            json!({
                "syscall": r.syscall,
                "nr": r.nr,
                "process": r.side,
                "calls": r.calls,
                "per_op": r.per_op,
                "claimed": r.claimed,
            })
        })
        .collect();
    json!({
        "experiment": heading.name,
        "params": heading.params,
        "configuration": heading.experiment,
        "ops": check.ops,
        "ops_requested": heading.requested,
        "ops_fixed_by_params": heading.fixed,
        "backend": heading.backend,
        "method": heading.method,
        "processes": check.processes,
        "window_ns": check.window_ns,
        "lost": heading.lost,
        "claimed": heading.claimed.iter().map(|c| c.syscall).collect::<Vec<_>>(),
        "claimed_per_op": heading
            .claimed
            .iter()
            .map(|c| (c.syscall, c.per_op))
            .collect::<std::collections::BTreeMap<_, _>>(),
        "calls": calls,
        "worker_per_op": check.worker_per_op,
        "syscalls_expectation": check.total.map(|b| b.describe()),
        "matches": check.matches(),
        "differences": check.differences.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
    })
}

//! Scaling curves: the configurations of one experiment measured with several counts of
//! copies (`--copies`), as will-it-scale reports them: each count's throughput per copy and in
//! total, and the efficiency, total / (N × one copy's throughput), against the run's one-copy
//! point of the same curve.
//!
//! A copy's throughput is its samples' operations over their wall time (not the inverse of
//! its median, which leaves out the samples in which a copy sharing its CPU was preempted).
//! Copies in processes are the configuration's worker processes: the total is the sum of the
//! copies' throughputs (N × their mean, over `--repeat`'s rounds too). Copies in threads are
//! one worker's measured thread and its companions (`measure::companions`), whose time per
//! operation over their own `run` calls the worker stored as facts: the total is the measured
//! thread's throughput plus theirs.

use serde_json::{Value, json};

use crate::measure::companions::copy_fact_name;
use crate::model::copies::{self, Copies, Mode};
use crate::model::{ExperimentResult, Run, Status};
use crate::report::format::{Align, Table, sig3, wrap};
use crate::report::names::label_of;
use crate::report::pool::{Pooled, pool};

/// One count of copies.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub copies: u32,
    /// Operations per second of one copy (the mean over the copies).
    pub per_copy: f64,
    /// Operations per second of all the copies together.
    pub total: f64,
    /// total / (copies × one copy's throughput); `None` without a one-copy point, and when
    /// oversubscribed (see [`Point::oversubscribed`]).
    pub efficiency: Option<f64>,
    /// Context switches (voluntary + involuntary) per operation of the sampled copies: where
    /// contention shows (a copy waiting for a lock sleeps).
    pub switches_per_op: Option<f64>,
    /// More copies than the machine has CPUs. A copy's throughput comes from its samples, and
    /// a copy sharing its CPU is mostly preempted between them (measured here: 4 copies on 2
    /// CPUs spent 16–32% of their time in samples), so its figures are rates while running,
    /// not what the copies got done together: no efficiency is given.
    pub oversubscribed: bool,
    pub status: Status,
}

/// The points of one experiment's configuration that differ only in their copies.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The configuration's name without its copies.
    pub name: String,
    pub mode: Mode,
    pub points: Vec<Point>,
}

/// Every scaling curve of a run, in the order its configurations first appear.
pub fn curves(run: &Run) -> Vec<Curve> {
    // Most runs have no copies: they are not pooled again for nothing.
    if !run.results.iter().any(|r| Copies::recorded(&r.params)) {
        return Vec::new();
    }
    let cpus = run
        .environment
        .logical_cpus
        .map_or(usize::MAX, |n| n as usize);
    let pooled = pool(&run.results);
    let mut curves: Vec<(Curve, &Pooled)> = Vec::new();
    for p in pooled.iter().filter(|p| Copies::recorded(&p.result.params)) {
        let r = &p.result;
        let rest = copies::without_copies(&r.params);
        let copies = Copies::of(&r.params);
        let name = label_of(&r.experiment, &rest, r.label.as_deref());
        let processes: Vec<&ExperimentResult> = run.results.iter().filter(|r| p.is_of(r)).collect();
        let Some(point) = point(p, &processes, copies, cpus) else {
            continue;
        };
        match curves
            .iter_mut()
            .find(|(c, _)| c.name == name && c.mode == copies.mode)
        {
            Some((curve, _)) => curve.points.push(point),
            None => curves.push((
                Curve {
                    name,
                    mode: copies.mode,
                    points: vec![point],
                },
                p,
            )),
        }
    }
    curves
        .into_iter()
        .map(|(mut c, _)| {
            c.points.sort_by_key(|p| p.copies);
            let one = c.points.iter().find(|p| p.copies == 1).map(|p| p.total);
            for p in c.points.iter_mut().filter(|p| !p.oversubscribed) {
                p.efficiency = one
                    .filter(|&o| o > 0.0)
                    .map(|o| p.total / (f64::from(p.copies) * o));
            }
            c
        })
        .collect()
}

/// One configuration's point, from its worker processes' results (`processes`); `None` when
/// nothing was measured.
fn point(
    p: &Pooled,
    processes: &[&ExperimentResult],
    copies: Copies,
    cpus: usize,
) -> Option<Point> {
    let totals: Vec<f64> = match copies.mode {
        // Each process is one copy: the copies' mean throughput, times their number.
        Mode::Processes => processes
            .iter()
            .filter_map(|r| throughput(r))
            .map(|t| t * f64::from(copies.count))
            .collect(),
        // Each process is every copy: the measured thread's throughput and its companions'.
        Mode::Threads => processes
            .iter()
            .filter_map(|r| {
                let companions: f64 = (2..=copies.count as usize)
                    .filter_map(|i| fact(r, &copy_fact_name(i)))
                    .filter(|&ns| ns > 0.0)
                    .map(|ns| 1e9 / ns)
                    .sum();
                throughput(r).map(|t| t + companions)
            })
            .collect(),
    };
    if totals.is_empty() {
        return None;
    }
    let total = totals.iter().sum::<f64>() / totals.len() as f64;
    Some(Point {
        copies: copies.count,
        per_copy: total / f64::from(copies.count),
        total,
        efficiency: None,
        switches_per_op: switches_per_op(&p.result),
        oversubscribed: copies.oversubscribes(cpus),
        status: p.result.status,
    })
}

/// Operations per second of one process's samples: their operations over their wall time,
/// so the time a copy waited for its CPU counts (a median per operation would skip the samples
/// a copy sharing its CPU was preempted in, and overstate what it got done).
fn throughput(r: &ExperimentResult) -> Option<f64> {
    let ops: f64 = r.samples.iter().map(|s| s.ops as f64).sum();
    let ns: f64 = r.samples.iter().map(|s| s.elapsed_ns).sum();
    (ops > 0.0 && ns > 0.0 && ns.is_finite()).then(|| ops * 1e9 / ns)
}

fn fact(r: &ExperimentResult, name: &str) -> Option<f64> {
    r.facts
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.value)
        .filter(|v| v.is_finite())
}

fn switches_per_op(r: &ExperimentResult) -> Option<f64> {
    // In floating point: a damaged import's figures must not overflow a sum.
    let ops: f64 = r.samples.iter().map(|s| s.ops as f64).sum();
    let switches: f64 = r
        .samples
        .iter()
        .map(|s| s.rusage.nvcsw as f64 + s.rusage.nivcsw as f64)
        .sum();
    (ops > 0.0).then(|| switches / ops)
}

/// An efficiency as a percentage, `–` when there is none.
pub fn percent(efficiency: Option<f64>) -> String {
    efficiency.map_or("–".into(), |e| format!("{:.0}%", e * 100.0))
}

/// Operations per second, short: `1.23 M/s`.
pub fn rate(per_s: f64) -> String {
    let (value, unit) = match per_s {
        x if x >= 1e9 => (x / 1e9, "G/s"),
        x if x >= 1e6 => (x / 1e6, "M/s"),
        x if x >= 1e3 => (x / 1e3, "k/s"),
        x => (x, "/s"),
    };
    format!("{} {unit}", sig3(value))
}

/// The text section of `show`: a table per curve.
pub fn section(run: &Run) -> String {
    let curves = curves(run);
    if curves.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nScaling (copies at once, one per CPU: operations per second per copy and in total; \
         efficiency = total / (copies × one copy))\n",
    );
    let mut oversubscribed = false;
    for c in &curves {
        out.push_str(&format!("\n  {}, copies as {}\n", c.name, c.mode.name()));
        let mut table = Table::new(&[
            ("copies", Align::Right),
            ("per copy", Align::Right),
            ("total", Align::Right),
            ("efficiency", Align::Right),
            ("switches/op", Align::Right),
            ("status", Align::Left),
        ]);
        for p in &c.points {
            oversubscribed |= p.oversubscribed;
            table.row(vec![
                format!("{}{}", p.copies, if p.oversubscribed { "*" } else { "" }),
                rate(p.per_copy),
                rate(p.total),
                percent(p.efficiency),
                p.switches_per_op.map_or("–".into(), sig3),
                p.status.as_str().to_string(),
            ]);
        }
        out.push_str(&table.render(4));
    }
    if oversubscribed {
        let cpus = run
            .environment
            .logical_cpus
            .map_or("its".to_string(), |n| n.to_string());
        out.push('\n');
        out.push_str(&wrap(
            &format!(
                "* oversubscribed: more copies than the machine's {cpus} CPUs. A copy's figures \
                 come from its samples, and a copy sharing its CPU is mostly preempted between \
                 them: per copy and total are rates while running, not what the copies got \
                 done together, so no efficiency is given"
            ),
            96,
            "  ",
            "    ",
        ));
        out.push('\n');
    }
    out
}

/// The curves of two runs side by side (`compare`): for each curve both measured, per count
/// of copies, the two totals, B/A and the two efficiencies. Empty when they share none.
pub fn compare_section(a: &Run, b: &Run) -> String {
    let pairs = shared_curves(a, b);
    if pairs.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nScaling in both runs (total operations per second; efficiency against each run's one \
         copy)\n",
    );
    for (ca, cb) in &pairs {
        out.push_str(&format!("\n  {}, copies as {}\n", ca.name, ca.mode.name()));
        let mut table = Table::new(&[
            ("copies", Align::Right),
            ("A total", Align::Right),
            ("B total", Align::Right),
            ("B/A", Align::Right),
            ("A efficiency", Align::Right),
            ("B efficiency", Align::Right),
        ]);
        for pa in &ca.points {
            let Some(pb) = cb.points.iter().find(|p| p.copies == pa.copies) else {
                continue;
            };
            table.row(vec![
                format!(
                    "{}{}",
                    pa.copies,
                    if pa.oversubscribed || pb.oversubscribed {
                        "*"
                    } else {
                        ""
                    }
                ),
                rate(pa.total),
                rate(pb.total),
                format!("{:.2}", pb.total / pa.total),
                percent(pa.efficiency),
                percent(pb.efficiency),
            ]);
        }
        out.push_str(&table.render(4));
    }
    out
}

/// The curves (name and mode) both runs measured, A's and B's.
fn shared_curves(a: &Run, b: &Run) -> Vec<(Curve, Curve)> {
    let theirs = curves(b);
    curves(a)
        .into_iter()
        .filter_map(|ca| {
            let cb = theirs
                .iter()
                .find(|c| c.name == ca.name && c.mode == ca.mode)?
                .clone();
            Some((ca, cb))
        })
        .collect()
}

/// [`compare_section`] as JSON: each shared curve's points, A's and B's.
pub fn compare_document(a: &Run, b: &Run) -> Value {
    json!(
        shared_curves(a, b)
            .iter()
            .map(|(ca, cb)| json!({
                "name": ca.name,
                "copy_mode": ca.mode.name(),
                "a": points_document(ca),
                "b": points_document(cb),
            }))
            .collect::<Vec<_>>()
    )
}

fn points_document(c: &Curve) -> Value {
    json!(
        c.points
            .iter()
            .map(|p| json!({
                "copies": p.copies,
                "per_copy_ops_per_s": p.per_copy,
                "total_ops_per_s": p.total,
                "efficiency": p.efficiency,
                "switches_per_op": p.switches_per_op,
                "oversubscribed": p.oversubscribed,
                "status": p.status.as_str(),
            }))
            .collect::<Vec<_>>()
    )
}

/// The curves as JSON (`scaling` of the run document).
pub fn document(run: &Run) -> Value {
    json!(
        curves(run)
            .iter()
            .map(|c| json!({
                "name": c.name,
                "copy_mode": c.mode.name(),
                "points": points_document(c),
            }))
            .collect::<Vec<_>>()
    )
}

#[cfg(test)]
mod tests;

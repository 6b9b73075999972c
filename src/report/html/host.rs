//! The host: for each run, what its hypervisor stole and how its canaries ran, as timelines —
//! each worker process's typical canary and kernel canary at the time it ran, the processes
//! during which time was stolen said in their tooltips and the table — and the configurations
//! it touched (`analysis::host`, `report::host`).

use std::fmt::Write as _;

use crate::analysis::host::{HostFigures, of_result};
use crate::model::Run;
use crate::report::charts::{self, Point, Unit, XAxis, esc};
use crate::report::format::{steal_text, time_ns};
use crate::report::host::{COLUMNS, cells, of_run, slow_run_note, summary};
use crate::report::names::label;
use crate::report::pool::Pooled;

/// The section, when some run's samples carry the host's readings.
pub(super) fn section(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut body = String::new();
    for (i, (run, configurations)) in runs.iter().zip(pooled).enumerate() {
        let figures = of_run(configurations);
        let Some(line) = summary(&figures) else {
            continue;
        };
        let _ = write!(
            body,
            "<figure class=\"host\"><figcaption>run {}</figcaption><p class=\"note\">{}.</p>",
            run.id,
            esc(&capitalised(&line))
        );
        if let Some(note) = slow_run_note(configurations) {
            let _ = write!(body, "<p class=\"note slow-run\">{}</p>", esc(&note));
        }
        body.push_str(&timeline(&format!("host-{i}"), run, &CPU));
        body.push_str(&timeline(&format!("host-kernel-{i}"), run, &KERNEL));
        let notable: Vec<_> = figures.iter().filter(|(_, h)| h.notable()).collect();
        if !notable.is_empty() {
            body.push_str("<table><thead><tr><th>configuration</th>");
            for (name, _) in COLUMNS {
                let _ = write!(body, "<th>{}</th>", esc(name));
            }
            body.push_str("</tr></thead><tbody>");
            for (p, h) in notable {
                let _ = write!(body, "<tr><td>{}</td>", esc(&label(&p.result)));
                for cell in cells(h) {
                    let _ = write!(body, "<td>{}</td>", esc(&cell));
                }
                body.push_str("</tr>");
            }
            body.push_str("</tbody></table>");
        }
        body.push_str("</figure>\n");
    }
    if body.is_empty() {
        return String::new();
    }
    format!(
        "<section id=\"host\">\n<h2>Host</h2>\n<p class=\"metric-line\">After every sample \
         oslab times a canary — a fixed chain of integer work, the same on every run — and \
         reads the time the hypervisor stole from the worker's CPU (/proc/stat, in ticks of \
         10 ms). A canary slower than usual means the CPU itself ran slower then (other \
         tenants, a frequency change); samples taken then are flagged, never dropped: the \
         table says how far each median would move without them. It also times a kernel \
         canary — a call into the kernel that does no work (getppid) —, whose time moves with \
         the cost of entering the kernel, which a host can change while the CPU canary stays \
         put: a sample whose kernel canary took 20% or more above its configuration's fast \
         level (the low decile of its readings) was taken in a slow kernel phase. Where such \
         samples come in phases (a slow one followed by slow ones), leave a quarter of the \
         samples or more steady and steady processes to measure, every figure of the configuration leaves them out \
         (marked left out); scattered ones stay in, flagged, and so do all of an experiment \
         that works on files (a slow null call after a sample that leaves the kernel busy, an \
         fsync's writeback, may be the experiment's own wake rather than the host's) or \
         stays in user space (the phases do not move its figures). A \
         configuration whose median moved (or would move) 2% or more without such samples is \
         in the table (none whose processes differ 2×: more than a phase moved those). The \
         timelines show each worker process's typical canaries when it ran.</p>\n{body}\
         </section>\n"
    )
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// One of the canaries a timeline follows: its name and its typical time in a result.
struct Canary {
    name: &'static str,
    typical: fn(&HostFigures) -> Option<f64>,
}

const CPU: Canary = Canary {
    name: "canary",
    typical: |h| Some(h.canary_median_ns),
};

const KERNEL: Canary = Canary {
    name: "kernel canary (a null call)",
    typical: |h| h.kernel_canary_median_ns,
};

/// Each worker process's median of `canary` against the seconds since the run began.
fn timeline(id: &str, run: &Run, canary: &Canary) -> String {
    let start = run
        .results
        .iter()
        .map(|r| r.started_at)
        .fold(f64::INFINITY, f64::min);
    let points: Vec<Point> = run
        .results
        .iter()
        .filter_map(|r| {
            let h = of_result(r)?;
            let y = (canary.typical)(&h)?;
            let stolen = match h.steal_ns {
                Some(ns) if ns > 0.0 => format!("; {} stolen", steal_text(ns)),
                _ => String::new(),
            };
            Some(Point {
                x: r.started_at - start + r.duration_s / 2.0,
                y,
                whisker: None,
                title: format!(
                    "{}: {} {}; the canary slow after {} of {} samples{stolen}",
                    label(r),
                    canary.name,
                    time_ns(y),
                    h.slow_canaries,
                    h.samples
                ),
            })
        })
        .collect();
    if points.len() < 2 {
        return String::new();
    }
    let mut sorted = points;
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
    charts::curve(
        id,
        &format!(
            "run {}: the {}'s typical time against the run's time",
            run.id, canary.name
        ),
        &sorted,
        &[],
        &XAxis {
            name: "seconds since the run began",
            unit: Unit::Decimal,
            fmt: &|x| format!("{x}"),
            linear: true,
        },
        &time_ns,
    )
}

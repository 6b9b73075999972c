//! `oslab report`: one or more stored runs as one self-contained HTML page (inline CSS and
//! SVG, no script of its own, no network; the flame graphs of profiled runs keep their zoom
//! script inside sandboxed frames) — a summary (runs, verdicts, biggest changes, results to read
//! with care), with two or more runs the comparison of the first with each other, the cost
//! ladder, per family one chart per metric across variants, the distribution of samples,
//! curves for parameter sweeps, and last the machine table a lab write-up needs.
//!
//! Charts are hand-written SVG (see `report::charts` for why). Every chart carries
//! `data-chart="<id>"`; a metric with nothing to draw gets one line instead of an empty
//! chart — "0 for every result", or, marked `data-unsupported="<id>"`, "unsupported here:
//! <reason>" — and a family's lines form one compact list. Layout is described in
//! docs/report.md.

use std::fmt::Write as _;

use super::charts::esc;
use super::format::sig3;
use super::pool::{Pooled, pool};
use crate::analysis::result::ResultFigures;
use crate::experiment;
use crate::model::{ExperimentResult, Run};

mod comparison;
mod cost_ladder;
mod distribution;
mod environment;
mod facts;
mod family;
pub mod history;
mod host;
mod metrics;
mod profiles;
mod reclaim;
mod scaling;
mod section;
mod summary;
mod sweeps;
#[cfg(test)]
mod tests;

pub use metrics::metric_ids;

/// At most this many samples are drawn per result in a strip plot (evenly spaced in run
/// order); the box and median always use every sample.
pub const MAX_DOTS: usize = 150;

/// Width of the per-family metric charts (two to a row).
pub(super) const SMALL: f64 = 560.0;

/// A byte count in B, KiB, MiB or GiB.
pub(super) fn bytes(v: f64) -> String {
    if v.abs() < 1024.0 {
        format!("{} B", sig3(v))
    } else {
        kib(v / 1024.0)
    }
}

pub(super) fn kib(v: f64) -> String {
    if v >= 1024.0 * 1024.0 {
        format!("{} GiB", sig3(v / 1024.0 / 1024.0))
    } else if v >= 1024.0 {
        format!("{} MiB", sig3(v / 1024.0))
    } else {
        format!("{} KiB", sig3(v))
    }
}

/// A result with its figures and the run it belongs to.
struct Item<'a> {
    run_index: usize,
    run_id: i64,
    result: &'a ExperimentResult,
    figures: ResultFigures,
    /// The median of each worker process pooled into `figures` (empty for one process).
    processes: Vec<f64>,
    /// The medians of the processes `figures` leave out, taken wholly in a slow kernel phase
    /// (`Pooled::left_out_medians`).
    left_out: Vec<f64>,
    /// The place in `processes` of a process at a level of its own
    /// (`analysis::processes::apart`).
    apart: Option<usize>,
}

/// The page for `runs` (the first is the baseline of any comparison).
pub fn render(runs: &[Run]) -> String {
    // Repeats (`run --repeat`) are shown as one result per configuration over the pooled
    // samples of its processes; the comparison section compares processes.
    let pooled: Vec<Vec<Pooled>> = runs.iter().map(|run| pool(&run.results)).collect();
    let items: Vec<Vec<Item>> = runs
        .iter()
        .zip(&pooled)
        .enumerate()
        .map(|(i, (run, pooled))| {
            pooled
                .iter()
                .map(|p| Item {
                    run_index: i,
                    run_id: run.id,
                    result: &p.result,
                    figures: p.figures(),
                    processes: if p.processes > 1 {
                        p.process_medians()
                    } else {
                        Vec::new()
                    },
                    left_out: p.left_out_medians.clone(),
                    apart: p.spread.as_ref().and_then(|s| s.apart),
                })
                .collect()
        })
        .collect();
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>oslab report: run {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n",
        esc(&ids.join(", "))
    );
    let _ = write!(
        out,
        "<h1>oslab report</h1>\n<p class=\"lead\">{} — what the operating system costs a \
         program, measured by oslab {}. Times are per operation; a whisker is where a rerun's \
         median falls, 95% (docs/measurement.md). Hover a bar or a point for its exact figures.</p>\n",
        runs.iter().map(run_name).collect::<Vec<_>>().join("; "),
        esc(env!("CARGO_PKG_VERSION"))
    );
    let cmps = comparison::compare_all(runs);
    let page = section::Page {
        runs,
        pooled: &pooled,
        items: &items,
        cmps: &cmps,
    };
    let drawn: Vec<(Vec<(String, String)>, String)> = section::SECTIONS
        .iter()
        .map(|s| ((s.links)(&page), (s.html)(&page)))
        .collect();
    out.push_str(&toc(&drawn));
    for (_, html) in &drawn {
        out.push_str(html);
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn run_name(r: &Run) -> String {
    let tag = r
        .tag
        .as_deref()
        .map(|t| format!(" [{}]", esc(t)))
        .unwrap_or_default();
    format!("run {}{tag}", r.id)
}

/// The table of contents: the links of every section drawn (its HTML not empty).
fn toc(drawn: &[(Vec<(String, String)>, String)]) -> String {
    let links: Vec<String> = drawn
        .iter()
        .filter(|(_, html)| !html.is_empty())
        .flat_map(|(links, _)| links)
        .map(|(anchor, title)| format!("<a href=\"#{}\">{}</a>", esc(anchor), esc(title)))
        .collect();
    format!("<nav>{}</nav>\n", links.join(" · "))
}

/// Families in registry order (unknown ones, from imported runs, last in run order).
fn families(runs: &[Run]) -> Vec<String> {
    let mut seen: Vec<(usize, String)> = Vec::new();
    for r in runs.iter().flat_map(|r| &r.results) {
        let family = family_of(&r.experiment).to_string();
        if !seen.iter().any(|(_, f)| *f == family) {
            let pos = experiment::REGISTRY
                .iter()
                .position(|e| e.family() == family)
                .unwrap_or(usize::MAX);
            seen.push((pos, family));
        }
    }
    seen.sort_by_key(|(p, _)| *p);
    seen.into_iter().map(|(_, f)| f).collect()
}

fn family_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(f, _)| f)
}

pub(super) const CSS: &str = r#"
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg:#fff;--panel:#f6f8fb;--ok:#3a6fd8;--suspect:#d98a1c;--failed:#c23b3b;--derived:#7a4fc2}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:28px;margin:0 0 4px}
h2{font-size:21px;margin:36px 0 8px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:16px;margin:22px 0 6px}
.lead{color:var(--muted);margin:0 0 12px}
nav{font-size:14px;margin:8px 0 0;color:var(--muted)}
nav a{color:var(--ok);text-decoration:none}
table{border-collapse:collapse;font-size:13px;margin:8px 0;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
thead th{background:var(--panel);font-weight:600}
table.env tbody th{width:200px;color:var(--muted);font-weight:500}
table.env tr.differs td{background:#fff4d6}
span.other-path{color:#b35900;font-weight:600;cursor:help}
span.host-mark{color:#8a4baf;font-weight:600;cursor:help}
td{font-variant-numeric:tabular-nums}
.caption,.note,figcaption{color:var(--muted);font-size:13px}
.note.slow-run{color:var(--fg);border-left:3px solid var(--suspect);padding-left:8px}
figure{margin:0;background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:10px 12px}
figcaption{font-weight:600;color:var(--fg);margin-bottom:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:14px;margin:14px 0}
figure.distribution,figure.sweep{margin:14px 0}
div.wide{overflow-x:auto}
table.facts td,table.facts th{white-space:nowrap}
dl.facts{font-size:13px;color:var(--muted);display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0 14px}
dl.facts dt{font-family:ui-monospace,monospace}
dl.facts dd{margin:0}
svg.chart{width:100%;height:auto;display:block;font-size:11px}
svg .axis{stroke:#8a93a3}
svg .grid{stroke:#e3e7ee}
svg .tick{fill:var(--muted)}
svg .label{fill:var(--fg)}
svg .value{fill:var(--fg)}
svg .bar{fill:var(--ok)}
svg .bar.suspect{fill:var(--suspect)}
svg .bar.failed{fill:var(--failed)}
svg .bar.derived{fill:var(--derived);fill-opacity:.75}
svg .bar.s0{fill:#3a6fd8}svg .bar.s1{fill:#e07b39}svg .bar.s2{fill:#2e9e6a}svg .bar.s3{fill:#a04fc2}svg .bar.s4{fill:#c23b3b}svg .bar.s5{fill:#6b7280}
svg .process{fill:#fff;stroke:#1d2330;stroke-width:1.3}\
svg .process.left-out{fill:none;stroke:#8a93a6;stroke-dasharray:2 1.5}
svg .whisker{stroke:#1d2330;stroke-width:1.3;fill:none}
svg .box{fill:#dfe7f8;stroke:#8aa4dc}
svg .median{stroke:#1d2330;stroke-width:2}
svg .dots circle{fill:var(--ok);fill-opacity:.45}
svg .line{stroke:var(--ok);stroke-width:2;fill:none}
svg .ideal{stroke:#6b7280;stroke-width:1.5;stroke-dasharray:5 4;fill:none}
svg .point{fill:var(--ok)}
.unsupported{color:var(--muted);font-style:italic;margin:12px 0}
ul.metric-lines{list-style:none;padding:0;margin:10px 0 14px}
li.metric-line,p.metric-line{font-style:normal;font-size:13px;color:var(--muted);margin:3px 0}
.metric-line b{color:var(--fg);font-weight:600}
.empty{color:var(--muted)}
.status{font-weight:600}
.status.suspect{color:var(--suspect)}.status.failed{color:var(--failed)}.status.unsupported{color:var(--muted)}
.warning{color:#8a4b00;font-size:12px}
tr.slower td{background:#fde8e8}tr.faster td{background:#e6f6ec}
.key{display:inline-block;width:10px;height:10px;border-radius:2px;margin-left:8px}
.key.s0{background:#3a6fd8}.key.s1{background:#e07b39}.key.s2{background:#2e9e6a}.key.s3{background:#a04fc2}.key.s4{background:#c23b3b}.key.s5{background:#6b7280}
details{margin:6px 0;font-size:13px}
details.same>summary{color:var(--muted);cursor:pointer}
ul.summary{margin:8px 0;padding-left:20px}
ul.summary li{margin:4px 0}
ul.not-ok{font-size:13px;margin:4px 0;padding-left:20px}
.verdict.slower{color:var(--failed);font-weight:600}.verdict.faster{color:#1f7a4d;font-weight:600}
code{font-size:13px}
"#;

/// The operation a result's unit counts (`ns/call` → `call`), for captions.
pub(super) fn op(r: &ExperimentResult) -> &str {
    r.unit.strip_prefix("ns/").unwrap_or(&r.unit)
}

//! One section per family: the results table, the metric charts, the distribution, the
//! sweeps and the other figures.

use std::fmt::Write as _;

use super::distribution::distribution;
use super::facts::facts_and_loads;
use super::metrics::{Figure, Line, METRICS, metric_chart};
use super::sweeps::sweeps;
use super::{Item, families, family_of, op};
use crate::experiment;
use crate::model::{Run, Status};
use crate::report::charts::esc;
use crate::report::format::{rerun_cell, time_ns};
use crate::report::ladder::label;

pub(super) fn sections(runs: &[Run], items: &[Vec<Item>]) -> String {
    let multi = runs.len() > 1;
    let mut s = String::new();
    for family in families(runs) {
        let members: Vec<&Item> = items
            .iter()
            .flatten()
            .filter(|i| family_of(&i.result.experiment) == family)
            .collect();
        // Variants in registry order, then run order; one row per run within a variant.
        let mut ordered = members.clone();
        ordered.sort_by_key(|i| {
            (
                experiment::REGISTRY
                    .iter()
                    .position(|e| e.name == i.result.experiment)
                    .unwrap_or(usize::MAX),
                label(i.result),
                i.run_index,
            )
        });
        let name = |i: &Item| {
            if multi {
                format!("{} (run {})", label(i.result), i.run_id)
            } else {
                label(i.result)
            }
        };
        let _ = write!(
            s,
            "<section class=\"family\" id=\"family-{f}\" data-family=\"{f}\">\n<h2>{f}</h2>\n",
            f = esc(&family)
        );
        s.push_str(&results_table(&ordered, &name));
        s.push_str(&metric_figures(&family, &ordered, &name));
        s.push_str(&distribution(&family, &ordered, &name));
        s.push_str(&sweeps(&family, &ordered, multi));
        s.push_str(&facts_and_loads(&ordered, &name));
        s.push_str("</section>\n");
    }
    s
}

pub(super) fn results_table(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = String::from(
        "<table class=\"results\"><thead><tr><th>experiment</th><th>median</th><th title=\"where a rerun's median falls, 95%\">rerun 95%</th>\
         <th>samples</th><th>status</th><th>warnings</th></tr></thead><tbody>\n",
    );
    for i in items {
        let r = i.result;
        let median = i.figures.stats.as_ref().map(|st| st.median);
        let mut warnings: Vec<String> = Vec::new();
        if r.status != Status::Ok {
            warnings.push(format!(
                "{}: {}",
                r.status.as_str(),
                r.reason.as_deref().unwrap_or("no reason recorded")
            ));
        }
        for c in r.validation.iter().filter(|c| !c.ok) {
            warnings.push(format!("check failed: {} — {}", c.check, c.detail));
        }
        let _ = writeln!(
            s,
            "<tr class=\"{}\" data-result=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td><span class=\"status {}\">{}</span></td><td>{}</td></tr>",
            r.status.as_str(),
            esc(&label(r)),
            esc(&name(i)),
            median.map_or("–".into(), |m| format!("{} / {}", time_ns(m), esc(op(r)))),
            median.map_or("–".into(), |m| rerun_cell(
                i.figures.ci,
                i.figures.unstable.as_deref(),
                m
            )),
            samples_cell(i),
            r.status.as_str(),
            crate::report::names::status_text(r),
            warnings
                .iter()
                .map(|w| format!("<div class=\"warning\">{}</div>", esc(w)))
                .collect::<String>()
        );
    }
    s.push_str("</tbody></table>\n");
    s
}

/// The metric charts two to a row, then one compact list of the metrics with nothing to
/// draw (all zero or unsupported), in page order: a line each instead of an empty card, and
/// one line for all the metrics unsupported for the same reason.
fn metric_figures(family: &str, items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut charts = String::new();
    let mut lines: Vec<Line> = Vec::new();
    for m in METRICS {
        match metric_chart(family, m, items, name) {
            Figure::Chart(c) => charts.push_str(&c),
            Figure::Line(l) => lines.push(l),
        }
    }
    let mut s = String::new();
    if !charts.is_empty() {
        let _ = write!(s, "<div class=\"grid\">\n{charts}</div>\n");
    }
    let lines = fold(lines);
    match lines.as_slice() {
        [] => {}
        [(attributes, html)] => {
            let _ = writeln!(s, "<p {attributes}>{html}</p>");
        }
        many => {
            s.push_str("<ul class=\"metric-lines\">\n");
            for (attributes, html) in many {
                let _ = writeln!(s, "<li {attributes}>{html}</li>");
            }
            s.push_str("</ul>\n");
        }
    }
    s
}

/// The lines as (attributes, HTML), those unsupported for one shared reason folded into one
/// line where the first of them stood: "<b>L1D…</b>, <b>dTLB…</b>: unsupported here:
/// L1-dcache-load-misses, dTLB-load-misses: no hardware PMU…".
fn fold(lines: Vec<Line>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut done = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        if done[i] {
            continue;
        }
        let Some((_, reason)) = &line.unsupported else {
            out.push((line.attributes.clone(), line.html.clone()));
            continue;
        };
        let same: Vec<usize> = (i..lines.len())
            .filter(|&j| {
                !done[j]
                    && lines[j]
                        .unsupported
                        .as_ref()
                        .is_some_and(|(_, r)| r == reason)
            })
            .collect();
        if same.len() < 2 {
            out.push((line.attributes.clone(), line.html.clone()));
            continue;
        }
        let mut counters: Vec<&str> = Vec::new();
        for &j in &same {
            done[j] = true;
            for c in lines[j].unsupported.iter().flat_map(|(c, _)| c) {
                if !counters.contains(&c.as_str()) {
                    counters.push(c);
                }
            }
        }
        let titles: Vec<&str> = same
            .iter()
            .map(|&j| lines[j].marked_title.as_str())
            .collect();
        out.push((
            "class=\"metric-line unsupported folded\"".into(),
            format!(
                "{}: unsupported here: {}: {}",
                titles.join(", "),
                esc(&counters.join(", ")),
                esc(reason)
            ),
        ));
    }
    out
}

/// How many samples `i`'s figures count, and from how many processes with their medians (a
/// process at a level of its own marked); the medians of processes left out, taken wholly in
/// a slow kernel phase, after them.
fn samples_cell(i: &Item) -> String {
    let r = i.result;
    let each: Vec<String> = i
        .processes
        .iter()
        .enumerate()
        .map(|(k, &m)| match i.apart == Some(k) {
            true => format!("{} (apart)", time_ns(m)),
            false => time_ns(m),
        })
        .collect();
    let left_out = if i.left_out.is_empty() {
        String::new()
    } else {
        let slow: Vec<String> = i.left_out.iter().map(|&m| time_ns(m)).collect();
        format!(
            "; left out, wholly in a slow kernel phase: {}",
            slow.join(", ")
        )
    };
    match i.processes.len() {
        n if n > 1 => format!(
            "{} from {n} processes (medians {}{left_out})",
            r.samples.len(),
            each.join(", ")
        ),
        _ => r.samples.len().to_string(),
    }
}

//! `oslab history --html`: one configuration across the stored runs as a self-contained page —
//! its pooled median run after run with the rerun interval as a whisker, each point's tooltip
//! the run, its kernel and what changed since the run before — and the same table the
//! terminal shows (`report::history`).

use std::fmt::Write as _;

use super::CSS;
use crate::report::charts::{self, Point, Unit, XAxis, esc};
use crate::report::format::{time_ns, utc};
use crate::report::history::{History, changed_cell};
use crate::report::names::config_name;

/// The page for `h`.
pub fn page(h: &History) -> String {
    let name = config_name(&h.experiment, h.label.as_deref(), &h.params);
    let per = h.unit.strip_prefix("ns/").unwrap_or(&h.unit);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>oslab history: {n}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n\
         <h1>{n}</h1>\n<p class=\"lead\">{} stored run(s), oldest first: the time per {} \
         (the pooled median of each run's worker processes) and, as a whisker, where a rerun's \
         median falls, 95% (docs/measurement.md). A run whose processes differed by more than \
         2× has no whisker. Hover a point for its run, kernel and what changed since the run \
         before.</p>\n",
        h.points.len(),
        esc(per),
        n = esc(&name),
    );
    out.push_str("<section id=\"history\">\n<figure class=\"history\">");
    out.push_str(&chart(h, &name));
    out.push_str(&table(h));
    out.push_str("</figure>\n</section>\n</main>\n</body>\n</html>\n");
    out
}

/// The medians against the runs' order (runs a minute apart and a month apart alike).
fn chart(h: &History, name: &str) -> String {
    let points: Vec<Point> = h
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let median = p.median?;
            let changed = changed_cell(&p.changed);
            Some(Point {
                x: (i + 1) as f64,
                y: median,
                whisker: p.ci,
                title: format!(
                    "run {}{}, {}: {}{}{}",
                    p.run_id,
                    p.tag
                        .as_ref()
                        .map(|t| format!(" [{t}]"))
                        .unwrap_or_default(),
                    utc(p.started_at),
                    time_ns(median),
                    p.kernel
                        .as_ref()
                        .map(|k| format!("; kernel {k}"))
                        .unwrap_or_default(),
                    if changed.is_empty() {
                        String::new()
                    } else {
                        format!("; changed: {changed}")
                    }
                ),
            })
        })
        .collect();
    if points.is_empty() {
        return "<p class=\"note\">No run has a figure for it.</p>".into();
    }
    let ids: Vec<i64> = h.points.iter().map(|p| p.run_id).collect();
    let label = move |x: f64| {
        let i = x.round() as usize;
        if (x - x.round()).abs() > 1e-9 || i == 0 {
            return String::new();
        }
        ids.get(i - 1)
            .map(|id| format!("run {id}"))
            .unwrap_or_default()
    };
    charts::curve(
        "history",
        &format!("{name}: the median per stored run, oldest first"),
        &points,
        &[],
        &XAxis {
            name: "stored runs, oldest first",
            unit: Unit::Decimal,
            fmt: &label,
            linear: true,
        },
        &time_ns,
    )
}

fn table(h: &History) -> String {
    let mut s = String::from(
        "<table><thead><tr><th>run</th><th>started</th><th>host</th><th>kernel</th>\
         <th>median</th><th>rerun 95%</th><th>processes</th><th>status</th><th>changed</th>\
         </tr></thead><tbody>",
    );
    let dash = |v: &Option<String>| esc(v.as_deref().unwrap_or("–"));
    for p in &h.points {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            p.run_id,
            esc(&utc(p.started_at)),
            dash(&p.hostname),
            dash(&p.kernel),
            p.median.map_or("–".into(), time_ns),
            esc(&crate::report::format::rerun_cell(
                p.ci,
                p.unstable.as_deref(),
                p.median.unwrap_or(f64::NAN)
            )),
            p.processes,
            esc(&p.status),
            esc(&changed_cell(&p.changed)),
        );
    }
    s.push_str("</tbody></table>");
    s
}

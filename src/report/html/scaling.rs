//! Scaling: each curve of copies (`--copies`) as a table and a chart of the total throughput
//! against the copies, with the ideal line (N × one copy) to read it against.

use std::fmt::Write as _;

use crate::model::Run;
use crate::report::charts::{self, Point, Unit, XAxis, esc};
use crate::report::format::sig3;
use crate::report::scaling::{Curve, curves, percent, rate};

/// The section, when a run has scaling curves.
pub(super) fn section(runs: &[Run]) -> String {
    let all: Vec<(&Run, Curve)> = runs
        .iter()
        .flat_map(|run| curves(run).into_iter().map(move |c| (run, c)))
        .collect();
    if all.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<section id=\"scaling\">\n<h2>Scaling</h2>\n<p class=\"metric-line\">Copies at once, one \
         per CPU (<code>--copies</code>): operations per second per copy and in total; \
         efficiency = total / (copies × one copy). The dashed line is the ideal: every copy as \
         fast as one alone. <b>*</b> oversubscribed: more copies than CPUs, so the figures are \
         rates while running and no efficiency is given.</p>\n",
    );
    for (i, (run, c)) in all.iter().enumerate() {
        let run_name = if runs.len() > 1 {
            format!(" (run {})", run.id)
        } else {
            String::new()
        };
        let title = format!("{}, copies as {}{run_name}", c.name, c.mode.name());
        let _ = write!(
            s,
            "<figure class=\"scaling\" data-metric=\"scaling\"><figcaption>{}</figcaption>",
            esc(&title)
        );
        s.push_str(&chart(&format!("scaling-{i}"), &title, c));
        s.push_str(&table(c));
        s.push_str("</figure>\n");
    }
    s.push_str("</section>\n");
    s
}

fn chart(id: &str, title: &str, c: &Curve) -> String {
    let points: Vec<Point> = c
        .points
        .iter()
        .map(|p| Point {
            x: f64::from(p.copies),
            y: p.total,
            whisker: None,
            title: format!("{} copies: {} in total", p.copies, rate(p.total)),
        })
        .collect();
    let one = c.points.iter().find(|p| p.copies == 1).map(|p| p.total);
    let ideal: Vec<(f64, f64)> = match one {
        Some(one) => c
            .points
            .iter()
            .map(|p| (f64::from(p.copies), one * f64::from(p.copies)))
            .collect(),
        None => Vec::new(),
    };
    charts::curve(
        id,
        &format!("{title}: total operations per second against copies"),
        &points,
        &ideal,
        &XAxis {
            name: "copies",
            unit: Unit::Decimal,
            fmt: &|x| format!("{x}"),
            linear: false,
        },
        &rate,
    )
}

fn table(c: &Curve) -> String {
    let mut s = String::from(
        "<table><thead><tr><th>copies</th><th>per copy</th><th>total</th><th>efficiency</th>\
         <th>switches/op</th><th>status</th></tr></thead><tbody>",
    );
    for p in &c.points {
        let _ = write!(
            s,
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"status {st}\">{st}</td></tr>",
            p.copies,
            if p.oversubscribed { "*" } else { "" },
            rate(p.per_copy),
            rate(p.total),
            percent(p.efficiency),
            p.switches_per_op.map_or("–".into(), sig3),
            st = p.status.as_str(),
        );
    }
    s.push_str("</tbody></table>");
    s
}

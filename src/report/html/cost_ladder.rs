//! The cost ladder section: the headline experiments as bars on a log scale.

use std::fmt::Write as _;

use super::run_name;
use crate::model::Run;
use crate::report::charts::{self, Bar, Dot, Scale, Unit, esc};
use crate::report::format::{time_ns, time_range_ns, times};
use crate::report::ladder::{self, Rung};

pub(super) fn section(run: &Run, multi: bool) -> String {
    let l = ladder::ladder(run);
    let mut s = format!(
        "<section id=\"{}\">\n<h2>Cost ladder{}</h2>\n",
        if multi {
            format!("ladder-{}", run.id)
        } else {
            "ladder".into()
        },
        if multi {
            format!(": {}", run_name(run))
        } else {
            String::new()
        }
    );
    if l.rungs.is_empty() {
        s.push_str(
            "<p class=\"empty\">No headline result was measured in this run.</p>\n</section>\n",
        );
        return s;
    }
    let _ = writeln!(
        s,
        "<p class=\"caption\">Time per operation, log scale, cheapest first; whiskers: 95% CI \
         of the median{}{}. Derived rungs (purple) are computed from two results.</p>",
        if l.rungs.iter().any(|r| r.processes.len() > 1) {
            "; bars pool the worker processes of a configuration, dots mark each process's \
             median"
        } else {
            ""
        },
        if l.baseline.is_some() {
            "; labels give each figure as a multiple of a plain function call \
             (syscall.function_call)"
        } else {
            ""
        }
    );
    let bars: Vec<Bar> = l.rungs.iter().map(|r| rung_bar(r, l.baseline)).collect();
    s.push_str(&charts::hbars(
        &format!("ladder-run{}", run.id),
        "cost ladder: time per operation on a log scale",
        &bars,
        Scale::Log,
        Unit::Decimal,
        &time_ns,
        charts::WIDTH,
    ));
    for (label, explain) in &l.explanations {
        let _ = write!(
            s,
            "\n<p class=\"note\"><b>{}</b>: {}</p>",
            esc(label),
            esc(explain)
        );
    }
    s.push_str("\n</section>\n");
    s
}

/// The bar of one rung, labelled with its multiple of `baseline` (a function call) if known.
fn rung_bar(r: &Rung, baseline: Option<f64>) -> Bar {
    let multiple = baseline
        .filter(|b| *b > 0.0)
        .map(|b| format!(" · {} call", times(r.median / b)))
        .unwrap_or_default();
    let class = if r.status.starts_with("derived") {
        if r.status.contains("suspect") {
            "derived suspect"
        } else {
            "derived"
        }
    } else {
        r.status.as_str()
    };
    Bar {
        label: format!("{} (per {})", r.label, r.per),
        value: (r.median > 0.0).then_some(r.median),
        whisker: r.ci,
        text: if r.median > 0.0 {
            format!("{}{multiple}", time_ns(r.median))
        } else {
            format!("{} (≤ 0: not drawn on a log scale)", time_ns(r.median))
        },
        title: format!(
            "{}: median {} per {}, 95% CI {}, {} samples, {}",
            r.label,
            time_ns(r.median),
            r.per,
            r.ci.map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, r.median)),
            r.samples,
            r.status
        ),
        class: class.into(),
        dots: process_dots(&r.label, &r.processes),
    }
}

/// The medians of the worker processes a pooled figure is made of, as labelled dots (none for
/// a single process).
pub(super) fn process_dots(label: &str, medians: &[f64]) -> Vec<Dot> {
    if medians.len() < 2 {
        return Vec::new();
    }
    medians
        .iter()
        .enumerate()
        .map(|(k, &m)| Dot {
            value: m,
            title: format!(
                "{label}: process {} of {}, median {}",
                k + 1,
                medians.len(),
                time_ns(m)
            ),
        })
        .collect()
}

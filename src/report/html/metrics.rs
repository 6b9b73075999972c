//! The twelve per-family metric charts (time, PMU miss rates, getrusage figures): what
//! each shows, how its value is read from a result, and the chart of one metric.
use std::fmt::Write as _;

use super::{Item, SMALL, kib};
use crate::analysis::result::ResultFigures;
use crate::model::ExperimentResult;
use crate::report::charts::{self, Bar, Scale, Unit, esc};
use crate::report::format::{per_op, sig3, time_ns};

/// One metric of the per-family charts.
pub(super) struct MetricDef {
    id: &'static str,
    title: &'static str,
    kind: Kind,
}

pub(super) enum Kind {
    Time,
    /// `misses / loads` from two counters, as a percentage.
    Rate(&'static str, &'static str),
    /// A getrusage field per operation, multiplied by the factor (µs → ns for CPU times).
    Rusage(&'static str, f64),
    /// The largest `maxrss_kb` seen.
    MaxRss,
}

/// The twelve metric charts of every family (the thirteenth figure is the distribution).
pub(super) const METRICS: &[MetricDef] = &[
    MetricDef {
        id: "time",
        title: "Time per operation (median, whisker: where a rerun's median falls, 95%)",
        kind: Kind::Time,
    },
    MetricDef {
        id: "l1d_miss_rate",
        title: "L1D load miss rate (% of L1D loads)",
        kind: Kind::Rate("L1-dcache-load-misses", "L1-dcache-loads"),
    },
    MetricDef {
        id: "dtlb_miss_rate",
        title: "dTLB load miss rate (% of dTLB loads)",
        kind: Kind::Rate("dTLB-load-misses", "dTLB-loads"),
    },
    MetricDef {
        id: "utime",
        title: "User CPU time per operation (getrusage)",
        kind: Kind::Rusage("utime_us", 1000.0),
    },
    MetricDef {
        id: "stime",
        title: "System CPU time per operation (getrusage)",
        kind: Kind::Rusage("stime_us", 1000.0),
    },
    MetricDef {
        id: "minflt",
        title: "Minor page faults per operation",
        kind: Kind::Rusage("minflt", 1.0),
    },
    MetricDef {
        id: "majflt",
        title: "Major page faults per operation",
        kind: Kind::Rusage("majflt", 1.0),
    },
    MetricDef {
        id: "maxrss",
        title: "Maximum resident set size (largest seen)",
        kind: Kind::MaxRss,
    },
    MetricDef {
        id: "inblock",
        title: "Blocks read from storage per operation (inblock, 512 B each)",
        kind: Kind::Rusage("inblock", 1.0),
    },
    MetricDef {
        id: "oublock",
        title: "Blocks written to storage per operation (oublock, 512 B each)",
        kind: Kind::Rusage("oublock", 1.0),
    },
    MetricDef {
        id: "nvcsw",
        title: "Voluntary context switches per operation",
        kind: Kind::Rusage("nvcsw", 1.0),
    },
    MetricDef {
        id: "nivcsw",
        title: "Involuntary context switches per operation",
        kind: Kind::Rusage("nivcsw", 1.0),
    },
];

/// The ids of the per-family metric charts, in page order.
pub fn metric_ids() -> Vec<&'static str> {
    METRICS.iter().map(|m| m.id).collect()
}

/// A metric's value for one result: `Err` says why it could not be measured.
pub(super) fn metric_value(
    m: &MetricDef,
    r: &ExperimentResult,
    f: &ResultFigures,
) -> Result<Option<f64>, String> {
    match m.kind {
        Kind::Time => Ok(f.stats.as_ref().map(|s| s.median)),
        Kind::Rate(misses, loads) => {
            let get = |name: &str| match f.counters.get(name) {
                Some(c) if c.status == "ok" => Ok(c.per_op),
                Some(c) if c.status == "unsupported" => Err(format!(
                    "{name}: {}",
                    c.reason.as_deref().unwrap_or("could not be opened")
                )),
                Some(c) => Err(format!(
                    "{name}: {}",
                    c.reason.as_deref().unwrap_or("not counted")
                )),
                None if r.samples.is_empty() => Ok(None),
                None => Err(format!("{name}: not counted in this experiment")),
            };
            let (m, l) = (get(misses)?, get(loads)?);
            Ok(match (m, l) {
                (Some(m), Some(l)) if l > 0.0 => Some(100.0 * m / l),
                _ => None,
            })
        }
        Kind::Rusage(field, factor) => Ok(f.rusage.get(field).map(|v| v * factor)),
        Kind::MaxRss => Ok(f.rusage.get("maxrss_kb").copied()),
    }
}

pub(super) fn metric_fmt(m: &MetricDef) -> fn(f64) -> String {
    match m.kind {
        Kind::Time | Kind::Rusage(_, 1000.0) => time_ns,
        Kind::Rate(..) => |v| format!("{}%", sig3(v)),
        Kind::MaxRss => kib,
        Kind::Rusage(..) => per_op,
    }
}

/// What a family shows for one metric: a chart, or one line when a chart would be empty.
pub(super) enum Figure {
    Chart(String),
    /// A line: the page gathers a family's lines into one compact list.
    Line(Line),
}

/// One line instead of a chart: the attributes of its element and its HTML content.
pub(super) struct Line {
    pub attributes: String,
    pub html: String,
    /// For a metric unsupported for every result for one reason: the counters and that
    /// reason, so that lines sharing it fold into one.
    pub unsupported: Option<(Vec<String>, String)>,
    /// The metric's own part of a folded line: its title, marked with its `data-*` attributes.
    pub marked_title: String,
}

/// The figure of metric `m` across `items`: a bar chart when some result has a value other
/// than zero, else a line saying there is nothing to draw (every value 0, or unsupported
/// here and why).
pub(super) fn metric_chart(
    family: &str,
    m: &MetricDef,
    items: &[&Item],
    name: &dyn Fn(&Item) -> String,
) -> Figure {
    let mut figures: Vec<(&Item, Result<Option<f64>, String>)> = items
        .iter()
        .map(|i| (*i, metric_value(m, i.result, &i.figures)))
        .collect();
    // Results without samples (failed, unsupported) have nothing to show in any chart.
    figures.retain(|(i, _)| !i.result.samples.is_empty());
    if let Some(line) = nothing_to_draw(family, m, &figures) {
        return Figure::Line(line);
    }
    Figure::Chart(bar_chart(family, m, &figures, name))
}

/// The line replacing the chart of `m` when no result has a value other than zero.
fn nothing_to_draw(
    family: &str,
    m: &MetricDef,
    figures: &[(&Item, Result<Option<f64>, String>)],
) -> Option<Line> {
    if figures
        .iter()
        .any(|(_, v)| matches!(v, Ok(Some(x)) if *x != 0.0))
    {
        return None;
    }
    let mut reasons: Vec<String> = Vec::new();
    for (_, v) in figures {
        if let Err(e) = v
            && !reasons.contains(e)
        {
            reasons.push(e.clone());
        }
    }
    let zero = figures.iter().any(|(_, v)| matches!(v, Ok(Some(_))));
    let all_unsupported = !figures.is_empty() && figures.iter().all(|(_, v)| v.is_err());
    let what = match (
        figures.is_empty(),
        all_unsupported,
        zero,
        reasons.is_empty(),
    ) {
        (true, ..) => "nothing measured".to_string(),
        (_, true, ..) => format!("unsupported here: {}", reasons.join("; ")),
        (_, _, true, true) => "0 for every result".to_string(),
        (_, _, true, false) => format!(
            "0 where measured; unsupported here for the others: {}",
            reasons.join("; ")
        ),
        _ => "no figure for any result".to_string(),
    };
    let attributes = format!(
        "class=\"metric-line{}\" data-metric=\"{}\" data-family=\"{}\"{}",
        if all_unsupported { " unsupported" } else { "" },
        m.id,
        esc(family),
        if all_unsupported {
            format!(" data-unsupported=\"{}-{}\"", esc(family), m.id)
        } else {
            String::new()
        },
    );
    Some(Line {
        html: format!("<b>{}</b>: {}", esc(m.title), esc(&what)),
        unsupported: if all_unsupported {
            one_reason(&reasons)
        } else {
            None
        },
        marked_title: format!(
            "<span {}><b>{}</b></span>",
            attributes.replacen("class=\"metric-line unsupported\" ", "", 1),
            esc(m.title)
        ),
        attributes,
    })
}

/// `counter: reason` texts that all give one reason: the counters and that reason.
fn one_reason(reasons: &[String]) -> Option<(Vec<String>, String)> {
    let mut counters = Vec::new();
    let mut shared: Option<&str> = None;
    for r in reasons {
        let (counter, why) = r.split_once(": ")?;
        if shared.is_some_and(|s| s != why) {
            return None;
        }
        shared = Some(why);
        counters.push(counter.to_string());
    }
    shared.map(|why| (counters, why.to_string()))
}

/// The bar chart of `m`, one bar per result.
fn bar_chart(
    family: &str,
    m: &MetricDef,
    figures: &[(&Item, Result<Option<f64>, String>)],
    name: &dyn Fn(&Item) -> String,
) -> String {
    let id = format!("{family}-{}", m.id);
    let fmt = metric_fmt(m);
    let mut s = format!(
        "<figure class=\"metric\" data-metric=\"{}\" data-family=\"{}\"><figcaption>{}</figcaption>",
        m.id,
        esc(family),
        esc(m.title)
    );
    let bars: Vec<Bar> = figures
        .iter()
        .map(|(i, v)| {
            let whisker = match m.kind {
                Kind::Time => i.figures.ci,
                _ => None,
            };
            let (value, text) = match v {
                Ok(Some(x)) => (Some(*x), fmt(*x)),
                Ok(None) => (None, "–".into()),
                Err(e) => (None, format!("unsupported here: {e}")),
            };
            Bar {
                label: name(i),
                value,
                whisker,
                text: truncate_text(&text, 60),
                title: format!("{}: {}", name(i), text),
                class: i.result.status.as_str().into(),
                dots: match m.kind {
                    Kind::Time => {
                        super::cost_ladder::process_dots(&name(i), &i.processes, &i.left_out)
                    }
                    _ => Vec::new(),
                },
            }
        })
        .collect();
    let scale = match m.kind {
        Kind::Time => Scale::suited(bars.iter().filter_map(|b| b.value)),
        _ => Scale::Linear,
    };
    // maxrss is in KiB: its axis steps are powers of two (2 MiB, not 1.95 MiB).
    let unit = match m.kind {
        Kind::MaxRss => Unit::Binary,
        _ => Unit::Decimal,
    };
    s.push_str(&charts::hbars(
        &id,
        &format!("{family}: {}", m.title),
        &bars,
        scale,
        unit,
        &fmt,
        SMALL,
    ));
    let mut notes: Vec<String> = Vec::new();
    if scale == Scale::Log {
        notes.push("log scale".into());
    }
    if bars.iter().any(|b| !b.dots.is_empty()) {
        let left_out = bars.iter().flat_map(|b| b.dots.iter().map(|d| d.left_out));
        notes.push(format!(
            "bars pool the worker processes of a configuration; dots: each process's median{}",
            super::cost_ladder::left_out_caption(left_out)
        ));
    }
    if !notes.is_empty() {
        let _ = write!(s, "<p class=\"note\">{}</p>", notes.join("; "));
    }
    s.push_str("</figure>\n");
    s
}

pub(super) fn truncate_text(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

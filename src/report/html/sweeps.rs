//! Sweeps: results that differ in one numeric parameter, drawn as a curve against it.

use std::fmt::Write as _;

use super::{Item, bytes, kib, op};
use crate::experiment::{self, ParamKind, ParamSpec, params::parse_size};
use crate::report::charts::{self, Point, Unit, XAxis, esc};
use crate::report::format::{sig3, time_ns};

/// Results of one experiment in one run that differ in exactly one numeric parameter, with at
/// least three values: drawn as a curve of the median against that parameter.
pub(super) fn sweeps(family: &str, items: &[&Item], multi: bool) -> String {
    let mut s = String::new();
    let mut groups: Vec<((usize, &str), Vec<&Item>)> = Vec::new();
    for i in items.iter().filter(|i| i.figures.stats.is_some()) {
        let key = (i.run_index, i.result.experiment.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    for ((_, experiment), members) in groups {
        for curve in sweep_curves(&members) {
            let mut points = curve.points;
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            let run = if multi {
                format!(" (run {})", members[0].run_id)
            } else {
                String::new()
            };
            let series = if curve.series.is_empty() {
                String::new()
            } else {
                format!(", {}", curve.series)
            };
            let id = format!(
                "{family}-sweep-{experiment}-{}{}{}",
                curve.param,
                if curve.series.is_empty() {
                    String::new()
                } else {
                    format!("-{}", curve.series.replace([' ', '='], "-"))
                },
                members[0].run_id
            );
            let _ = write!(
                s,
                "<figure class=\"sweep\" data-metric=\"sweep\" data-family=\"{}\"><figcaption>{} \
                 against {}{}{}: median time per {} (whisker: where a rerun's median falls, 95%)</figcaption>",
                esc(family),
                esc(experiment),
                esc(&curve.param),
                esc(&series),
                esc(&run),
                esc(op(members[0].result))
            );
            s.push_str(&charts::curve(
                &id,
                &format!(
                    "{experiment}{series}: time per operation against {}",
                    curve.param
                ),
                &points,
                &[],
                &XAxis {
                    name: &curve.param,
                    unit: curve.unit,
                    fmt: &curve.fmt,
                    linear: false,
                },
                &time_ns,
            ));
            s.push_str("</figure>\n");
        }
    }
    s
}

/// One curve of a sweep: the numeric parameter on the x axis, and the values of the other
/// parameters that differ (`order=random`), empty when none does.
pub(super) struct Curve {
    param: String,
    series: String,
    points: Vec<Point>,
    /// Round values of the x axis: powers of two for a byte size.
    unit: Unit,
    /// Labels of the x axis.
    fmt: fn(f64) -> String,
}

/// A parameter's value as a number: a size (`4K`) in bytes, else the number written.
fn number(spec: Option<&ParamSpec>, v: &str) -> Option<f64> {
    match spec.map(|p| p.kind) {
        Some(ParamKind::Size { .. }) => parse_size(v.trim()).map(|b| b as f64),
        _ => v.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
    }
}

/// How a parameter's axis is ticked and labelled: sizes in bytes and `*_kb` parameters in
/// KiB on powers of two, anything else on 1, 2, 5 × 10^n.
fn x_axis(spec: Option<&ParamSpec>, name: &str) -> (Unit, fn(f64) -> String) {
    match spec.map(|p| p.kind) {
        Some(ParamKind::Size { .. }) => (Unit::Binary, bytes),
        _ if name.ends_with("_kb") => (Unit::Binary, kib),
        _ => (Unit::Decimal, sig3),
    }
}

/// The curves among the results of one experiment in one run: exactly one differing parameter
/// must be numeric with at least three values; every combination of the other differing
/// parameters (prefault_sweep's `order`) is a curve of its own.
pub(super) fn sweep_curves(members: &[&Item]) -> Vec<Curve> {
    if members.len() < 3 {
        return Vec::new();
    }
    // A parameter missing from a result (an older run) takes its default.
    let info = experiment::find(&members[0].result.experiment);
    let value = |m: &Item, k: &str| -> Option<String> {
        m.result
            .params
            .get(k)
            .cloned()
            .or_else(|| info.and_then(|i| i.param(k)).map(|p| p.default.to_string()))
    };
    let keys: std::collections::BTreeSet<&String> = members
        .iter()
        .flat_map(|m| m.result.params.keys())
        .collect();
    let differing: Vec<&String> = keys
        .into_iter()
        .filter(|k| members.iter().any(|m| value(m, k) != value(members[0], k)))
        .collect();
    let spec = |k: &str| info.and_then(|i| i.param(k));
    let numeric = |k: &str| {
        members
            .iter()
            .all(|m| value(m, k).and_then(|v| number(spec(k), &v)).is_some())
    };
    let numeric_keys: Vec<&&String> = differing.iter().filter(|k| numeric(k)).collect();
    let [param] = numeric_keys.as_slice() else {
        return Vec::new();
    };
    let others: Vec<&String> = differing.iter().copied().filter(|k| k != *param).collect();
    let mut curves: Vec<Curve> = Vec::new();
    for m in members {
        let series = others
            .iter()
            .map(|k| format!("{k}={}", value(m, k).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(" ");
        let Some(text) = value(m, param) else {
            continue;
        };
        let (Some(x), Some(stats)) = (number(spec(param), &text), m.figures.stats.as_ref()) else {
            continue;
        };
        let point = Point {
            x,
            y: stats.median,
            whisker: m.figures.ci,
            title: format!("{param}={}: {}", text.trim(), time_ns(stats.median)),
        };
        match curves.iter_mut().find(|c| c.series == series) {
            Some(c) => c.points.push(point),
            None => {
                let (unit, fmt) = x_axis(spec(param), param);
                curves.push(Curve {
                    param: (**param).clone(),
                    series,
                    points: vec![point],
                    unit,
                    fmt,
                })
            }
        }
    }
    curves.retain(|c| {
        let mut xs: Vec<f64> = c.points.iter().map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs.len() >= 3
    });
    curves
}

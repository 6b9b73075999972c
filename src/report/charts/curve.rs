//! Curves: a sweep's median against its parameter, with whiskers.

use std::fmt::Write as _;

use super::{Axis, Scale, TOP, Unit, WIDTH, esc, f1, open_svg, tidy, x_axis};

/// A point of a curve.
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub whisker: Option<(f64, f64)>,
    pub title: String,
}

/// A curve's x axis: its name, the unit its round ticks are counted in, how a tick is
/// labelled, and whether it stays linear (a time line) or turns logarithmic when the values
/// span more than 20× (a sweep of sizes).
pub struct XAxis<'a> {
    pub name: &'a str,
    pub unit: Unit,
    pub fmt: &'a dyn Fn(f64) -> String,
    pub linear: bool,
}

/// A line through points (sorted by x), y from 0, with whiskers, over the x axis `x`.
/// `reference`: a dashed line to read the points against (a scaling curve's ideal), empty for
/// none.
pub fn curve(
    id: &str,
    aria: &str,
    points: &[Point],
    reference: &[(f64, f64)],
    x: &XAxis,
    y_fmt: &dyn Fn(f64) -> String,
) -> String {
    let height = 260.0;
    let (left, bottom) = (70.0, height - 40.0);
    let xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    let x_scale = if x.linear {
        Scale::Linear
    } else {
        Scale::suited(xs.iter().copied())
    };
    let x_axis_ = Axis::covering(&xs, x_scale, x.unit, left, WIDTH - 30.0);
    let mut ys: Vec<f64> = points.iter().map(|p| p.y).collect();
    ys.extend(
        points
            .iter()
            .filter_map(|p| p.whisker)
            .flat_map(|(a, b)| [a, b]),
    );
    ys.extend(reference.iter().map(|&(_, y)| y));
    ys.push(0.0);
    // The y axis is an Axis laid out vertically: pixel = bottom - (px - 0).
    let y_axis = Axis::covering(&ys, Scale::Linear, Unit::Decimal, 0.0, bottom - TOP - 6.0);
    let py = |v: f64| bottom - y_axis.px(v);
    let mut out = String::new();
    open_svg(&mut out, id, WIDTH, height, aria);
    x_axis(&mut out, &x_axis_, bottom, TOP, x.fmt);
    y_ticks(&mut out, &y_axis.ticks, (left, WIDTH - 30.0), &py, y_fmt);
    let _ = write!(
        out,
        r#"<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        f1((left + WIDTH - 30.0) / 2.0),
        f1(height - 6.0),
        esc(x.name)
    );
    let path = |xy: &mut dyn Iterator<Item = (f64, f64)>| {
        xy.enumerate()
            .map(|(i, (x, y))| {
                let step = if i == 0 { "M" } else { "L" };
                format!("{step}{} {}", f1(x_axis_.px(x)), f1(py(y)))
            })
            .collect::<String>()
    };
    if !reference.is_empty() {
        let d = path(&mut reference.iter().copied());
        let _ = write!(out, r#"<path class="ideal" d="{d}"/>"#);
    }
    let d = path(&mut points.iter().map(|p| (p.x, p.y)));
    let _ = write!(out, r#"<path class="line" d="{d}"/>"#);
    for p in points {
        let x = f1(x_axis_.px(p.x));
        if let Some((lo, hi)) = p.whisker {
            let _ = write!(
                out,
                r#"<path class="whisker" d="M{x} {}V{}"/>"#,
                f1(py(lo)),
                f1(py(hi))
            );
        }
        let _ = write!(
            out,
            r#"<circle class="point" cx="{x}" cy="{}" r="3.5"><title>{}</title></circle>"#,
            f1(py(p.y)),
            esc(&p.title)
        );
    }
    out.push_str("</svg>");
    out
}

/// The y axis' grid lines and labels, from `left` to `right`.
fn y_ticks(
    out: &mut String,
    ticks: &[f64],
    (left, right): (f64, f64),
    py: &dyn Fn(f64) -> f64,
    y_fmt: &dyn Fn(f64) -> String,
) {
    for &t in ticks {
        let _ = write!(
            out,
            r#"<line class="grid" x1="{}" y1="{y}" x2="{}" y2="{y}"/><text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            f1(left),
            f1(right),
            f1(left - 6.0),
            f1(py(t) + 4.0),
            esc(&tidy(&y_fmt(t))),
            y = f1(py(t)),
        );
    }
}

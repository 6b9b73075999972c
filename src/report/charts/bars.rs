//! Horizontal bars with whiskers: the ladder, the metric charts, the side-by-side comparison.

use std::fmt::Write as _;

use super::{
    AXIS, Axis, RIGHT, ROW, Scale, TOP, Unit, esc, f1, label_width, open_svg, truncate, x_axis,
};

/// One bar of a horizontal bar chart.
pub struct Bar {
    /// Shown left of the bar (empty: a further bar of the same group).
    pub label: String,
    pub value: Option<f64>,
    /// A whisker (a confidence interval), drawn over the bar.
    pub whisker: Option<(f64, f64)>,
    /// The figure printed right of the bar, or why there is none.
    pub text: String,
    /// The tooltip.
    pub title: String,
    /// CSS class of the bar: `ok`, `suspect`, `derived`, `failed`, or `s0`…`s5` for series.
    pub class: String,
    /// Values drawn as labelled dots on the bar: the median of each worker process a pooled
    /// figure is made of (empty for a single process).
    pub dots: Vec<Dot>,
}

/// A value marked on a bar, with its tooltip.
pub struct Dot {
    pub value: f64,
    pub title: String,
    /// Drawn hollow and dashed (`class="process left-out"`): a process the figure leaves out
    /// (taken wholly in a slow kernel phase of the host).
    pub left_out: bool,
}

/// Horizontal bars, one row each, with optional whiskers and their figure printed after them;
/// the axis ticks are round values of `unit`, labelled by `fmt`.
pub fn hbars(
    id: &str,
    aria: &str,
    bars: &[Bar],
    scale: Scale,
    unit: Unit,
    fmt: &dyn Fn(f64) -> String,
    width: f64,
) -> String {
    let left = label_width(bars.iter().map(|b| b.label.chars().count()));
    let height = TOP + ROW * bars.len() as f64 + AXIS;
    let mut values: Vec<f64> = bars.iter().filter_map(|b| b.value).collect();
    values.extend(bars.iter().flat_map(|b| b.dots.iter().map(|d| d.value)));
    values.extend(
        bars.iter()
            .filter_map(|b| b.whisker)
            .flat_map(|(a, b)| [a, b]),
    );
    // Room right of the axis for the longest figure printed after a drawn bar (a bar without
    // a value prints its text from the axis start, inside the plot).
    let longest = bars
        .iter()
        .filter(|b| b.value.is_some())
        .map(|b| b.text.chars().count())
        .max()
        .unwrap_or(0);
    let right = (longest as f64 * 6.3 + 10.0).clamp(RIGHT, width / 3.0);
    let axis = Axis::covering(&values, scale, unit, left, width - right);
    let mut out = String::new();
    open_svg(&mut out, id, width, height, aria);
    let base_y = TOP + ROW * bars.len() as f64;
    x_axis(&mut out, &axis, base_y, TOP, fmt);
    let chars = ((left - 12.0) / 6.4) as usize;
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let mid = y + ROW / 2.0;
        if !b.label.is_empty() {
            let _ = write!(
                out,
                r#"<text class="label" x="{}" y="{}" text-anchor="end">{}</text>"#,
                f1(left - 6.0),
                f1(mid + 4.0),
                esc(&truncate(&b.label, chars))
            );
        }
        let end = draw_bar(&mut out, &axis, scale, b, y);
        let mut right = end;
        if let Some((lo, hi)) = b.whisker {
            let (a, c) = (axis.px(lo), axis.px(hi));
            let _ = write!(
                out,
                r#"<path class="whisker" d="M{a} {t}V{u}M{a} {m}H{c}M{c} {t}V{u}"/>"#,
                a = f1(a),
                c = f1(c),
                t = f1(mid - 4.0),
                u = f1(mid + 4.0),
                m = f1(mid)
            );
            right = right.max(c);
        }
        right = right.max(draw_dots(&mut out, &axis, scale, &b.dots, mid));
        let _ = write!(
            out,
            r#"<text class="value" x="{}" y="{}">{}</text>"#,
            f1(right + 5.0),
            f1(mid + 4.0),
            esc(&b.text)
        );
    }
    out.push_str("</svg>");
    out
}

/// The dots of one bar on its middle line (`class="process"`, and `left-out` for one the
/// figure leaves out); returns the rightmost x.
fn draw_dots(out: &mut String, axis: &Axis, scale: Scale, dots: &[Dot], mid: f64) -> f64 {
    let mut right = axis.x0;
    out.push_str(if dots.is_empty() {
        ""
    } else {
        "<g class=\"processes\">"
    });
    for d in dots
        .iter()
        .filter(|d| d.value.is_finite() && (scale == Scale::Linear || d.value > 0.0))
    {
        let x = axis.px(d.value);
        right = right.max(x + 3.0);
        let _ = write!(
            out,
            r#"<circle class="process{}" cx="{}" cy="{}" r="3"><title>{}</title></circle>"#,
            if d.left_out { " left-out" } else { "" },
            f1(x),
            f1(mid),
            esc(&d.title)
        );
    }
    out.push_str(if dots.is_empty() { "" } else { "</g>" });
    right
}

/// The bar of `b` in the row at `y` (none without a drawable value); returns where it ends.
fn draw_bar(out: &mut String, axis: &Axis, scale: Scale, b: &Bar, y: f64) -> f64 {
    match b.value {
        Some(v) if v.is_finite() && (scale == Scale::Linear || v > 0.0) => {
            let (x0, x1) = (axis.px(axis.lo.max(0.0).min(v)), axis.px(v));
            let x0 = if scale == Scale::Log { axis.x0 } else { x0 };
            let _ = write!(
                out,
                r#"<rect class="bar {}" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>"#,
                esc(&b.class),
                f1(x0.min(x1)),
                f1(y + 3.0),
                f1((x1 - x0).abs().max(0.5)),
                f1(ROW - 6.0),
                esc(&b.title)
            );
            x1
        }
        _ => axis.x0,
    }
}

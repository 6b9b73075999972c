//! Strip plots: every sample as a dot over its quartile box.

use std::fmt::Write as _;

use super::{
    AXIS, Axis, Scale, TOP, Unit, WIDTH, esc, f1, label_width, open_svg, truncate, x_axis,
};

/// One row of a strip plot: the samples of one result.
pub struct Strip {
    pub label: String,
    /// The values drawn (possibly a subsample).
    pub shown: Vec<f64>,
    /// All values' quartiles and median: the box.
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub title: String,
}

/// Samples as dots (jittered vertically, deterministically) over a box from the first to the
/// third quartile with the median marked.
pub fn strips(
    id: &str,
    aria: &str,
    rows: &[Strip],
    scale: Scale,
    fmt: &dyn Fn(f64) -> String,
) -> String {
    let row = 28.0;
    let left = label_width(rows.iter().map(|r| r.label.chars().count()));
    let height = TOP + row * rows.len() as f64 + AXIS;
    let values: Vec<f64> = rows.iter().flat_map(|r| r.shown.iter().copied()).collect();
    let axis = Axis::covering(&values, scale, Unit::Decimal, left, WIDTH - 20.0);
    let mut out = String::new();
    open_svg(&mut out, id, WIDTH, height, aria);
    let base_y = TOP + row * rows.len() as f64;
    x_axis(&mut out, &axis, base_y, TOP, fmt);
    let chars = ((left - 12.0) / 6.4) as usize;
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + row * i as f64;
        let mid = y + row / 2.0;
        let _ = write!(
            out,
            r#"<g><title>{}</title><text class="label" x="{}" y="{}" text-anchor="end">{}</text><rect class="box" x="{}" y="{}" width="{}" height="{}"/><line class="median" x1="{m}" x2="{m}" y1="{}" y2="{}"/><g class="dots">"#,
            esc(&r.title),
            f1(left - 6.0),
            f1(mid + 4.0),
            esc(&truncate(&r.label, chars)),
            f1(axis.px(r.q1)),
            f1(y + 4.0),
            f1((axis.px(r.q3) - axis.px(r.q1)).max(1.0)),
            f1(row - 8.0),
            f1(y + 2.0),
            f1(y + row - 2.0),
            m = f1(axis.px(r.median)),
        );
        for (k, &v) in r.shown.iter().enumerate() {
            // A fixed low-discrepancy jitter: the same page for the same run.
            let jitter = ((k as f64 * 0.618_034) % 1.0 - 0.5) * (row - 12.0);
            let _ = write!(
                out,
                r#"<circle cx="{}" cy="{}" r="1.8"/>"#,
                f1(axis.px(v)),
                f1(mid + jitter)
            );
        }
        out.push_str("</g></g>");
    }
    out.push_str("</svg>");
    out
}

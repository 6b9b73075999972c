//! Charts as inline SVG, written by hand.
//!
//! Why not a chart crate: plotters (default features off, SVG backend) would work without
//! fontconfig, but its output is positioned text and paths with no structure a test or a
//! screen reader can use, and every chart here is one of four simple shapes (horizontal bars
//! with whiskers, grouped bars, a strip plot with a box, a line with whiskers). Writing them
//! directly costs a few hundred lines, adds no dependency, keeps the file small (one element
//! per mark, coordinates rounded to 0.1 px), styles everything from the page's CSS, and gives
//! every mark a `<title>` (a tooltip with the exact figure) and every chart a `role="img"`
//! with an `aria-label`.

use std::fmt::Write as _;

/// Width of every chart, px (the viewBox; the page scales it to its column).
pub const WIDTH: f64 = 820.0;
const ROW: f64 = 20.0;
const TOP: f64 = 8.0;
const AXIS: f64 = 30.0;
const RIGHT: f64 = 90.0;

/// Escape text for HTML and SVG.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scale {
    Linear,
    Log,
}

impl Scale {
    /// Log when the positive values span more than 20×, else linear from 0.
    pub fn suited(values: impl Iterator<Item = f64>) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi > 0.0 && hi / lo > 20.0 {
            Scale::Log
        } else {
            Scale::Linear
        }
    }
}

/// A mapping from values to x pixels.
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    x0: f64,
    x1: f64,
}

impl Axis {
    /// An axis covering `values` (non-finite ones ignored; on a log axis, non-positive ones).
    fn covering(values: &[f64], scale: Scale, x0: f64, x1: f64) -> Axis {
        let usable = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0));
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in usable {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let (lo, hi) = match scale {
            Scale::Log if lo.is_finite() => {
                let lo = 10f64.powf(lo.log10().floor());
                let mut hi = 10f64.powf(hi.log10().ceil());
                if hi <= lo {
                    hi = lo * 10.0;
                }
                (lo, hi)
            }
            Scale::Log => (1.0, 10.0),
            Scale::Linear if hi.is_finite() => {
                let lo = lo.min(0.0);
                let hi = if hi > 0.0 { nice_ceil(hi) } else { 1.0 };
                (lo, hi.max(lo + f64::EPSILON))
            }
            Scale::Linear => (0.0, 1.0),
        };
        Axis {
            scale,
            lo,
            hi,
            x0,
            x1,
        }
    }

    /// Pixel of `v`, clamped to the axis.
    fn px(&self, v: f64) -> f64 {
        let t = match self.scale {
            Scale::Log => {
                if v <= 0.0 {
                    0.0
                } else {
                    (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
                }
            }
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
        };
        self.x0 + t.clamp(0.0, 1.0) * (self.x1 - self.x0)
    }

    fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Log => {
                let mut t = Vec::new();
                let mut v = self.lo;
                while v <= self.hi * 1.0001 {
                    t.push(v);
                    v *= 10.0;
                }
                t
            }
            Scale::Linear => {
                let step = nice_ceil((self.hi - self.lo) / 5.0);
                let mut t = Vec::new();
                let mut v = (self.lo / step).ceil() * step;
                while v <= self.hi + step * 1e-9 {
                    t.push(v);
                    v += step;
                }
                t
            }
        }
    }
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `x` (x > 0).
fn nice_ceil(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= x * 0.999_999 {
            return m * p;
        }
    }
    10.0 * p
}

fn f1(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

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
}

fn label_width(labels: impl Iterator<Item = usize>) -> f64 {
    let longest = labels.max().unwrap_or(4) as f64;
    (longest * 6.4 + 12.0).clamp(60.0, 330.0)
}

fn truncate(s: &str, chars: usize) -> String {
    if s.chars().count() <= chars {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(chars.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn open_svg(out: &mut String, id: &str, width: f64, height: f64, aria: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart" id="{}" data-chart="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">"#,
        esc(id),
        esc(id),
        f1(width),
        f1(height),
        esc(aria)
    );
}

fn x_axis(out: &mut String, axis: &Axis, y: f64, top: f64, fmt: &dyn Fn(f64) -> String) {
    let _ = write!(
        out,
        r#"<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
        f1(axis.x0),
        f1(y),
        f1(axis.x1),
        f1(y)
    );
    for t in axis.ticks() {
        let x = axis.px(t);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x}" y1="{}" x2="{x}" y2="{}"/><text class="tick" x="{x}" y="{}" text-anchor="middle">{}</text>"#,
            f1(top),
            f1(y),
            f1(y + 14.0),
            esc(&fmt(t)),
            x = f1(x),
        );
    }
}

/// Horizontal bars, one row each, with optional whiskers; `fmt` labels the axis ticks.
pub fn hbars(
    id: &str,
    aria: &str,
    bars: &[Bar],
    scale: Scale,
    fmt: &dyn Fn(f64) -> String,
    width: f64,
) -> String {
    let left = label_width(bars.iter().map(|b| b.label.chars().count()));
    let height = TOP + ROW * bars.len() as f64 + AXIS;
    let mut values: Vec<f64> = bars.iter().filter_map(|b| b.value).collect();
    values.extend(
        bars.iter()
            .filter_map(|b| b.whisker)
            .flat_map(|(a, b)| [a, b]),
    );
    let axis = Axis::covering(&values, scale, left, width - RIGHT);
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
        let end = match b.value {
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
        };
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
    let axis = Axis::covering(&values, scale, left, WIDTH - 20.0);
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

/// A point of a curve.
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub whisker: Option<(f64, f64)>,
    pub title: String,
}

/// A line through points (sorted by x), y from 0, with whiskers.
pub fn curve(
    id: &str,
    aria: &str,
    points: &[Point],
    x_name: &str,
    y_fmt: &dyn Fn(f64) -> String,
) -> String {
    let height = 260.0;
    let (left, bottom) = (70.0, height - 40.0);
    let xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    let x_scale = Scale::suited(xs.iter().copied());
    let x_axis_ = Axis::covering(&xs, x_scale, left, WIDTH - 30.0);
    let mut ys: Vec<f64> = points.iter().map(|p| p.y).collect();
    ys.extend(
        points
            .iter()
            .filter_map(|p| p.whisker)
            .flat_map(|(a, b)| [a, b]),
    );
    ys.push(0.0);
    // The y axis is an Axis laid out vertically: pixel = bottom - (px - 0).
    let y_axis = Axis::covering(&ys, Scale::Linear, 0.0, bottom - TOP - 6.0);
    let py = |v: f64| bottom - y_axis.px(v);
    let mut out = String::new();
    open_svg(&mut out, id, WIDTH, height, aria);
    x_axis(&mut out, &x_axis_, bottom, TOP, &|v| f1_or_sig(v));
    for t in y_axis.ticks() {
        let _ = write!(
            out,
            r#"<line class="grid" x1="{}" y1="{y}" x2="{}" y2="{y}"/><text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            f1(left),
            f1(WIDTH - 30.0),
            f1(left - 6.0),
            f1(py(t) + 4.0),
            esc(&y_fmt(t)),
            y = f1(py(t)),
        );
    }
    let _ = write!(
        out,
        r#"<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        f1((left + WIDTH - 30.0) / 2.0),
        f1(height - 6.0),
        esc(x_name)
    );
    let d: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "{}{} {}",
                if i == 0 { "M" } else { "L" },
                f1(x_axis_.px(p.x)),
                f1(py(p.y))
            )
        })
        .collect();
    let _ = write!(out, r#"<path class="line" d="{}"/>"#, d.join(""));
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

fn f1_or_sig(v: f64) -> String {
    super::format::sig3(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_are_nice() {
        assert_eq!(nice_ceil(7.3), 10.0);
        assert_eq!(nice_ceil(2.2), 2.5);
        let a = Axis::covering(&[3.0, 4000.0], Scale::Log, 0.0, 100.0);
        assert_eq!((a.lo, a.hi), (1.0, 10_000.0));
        assert_eq!(a.ticks().len(), 5);
        assert_eq!(a.px(100.0), 50.0);
        let l = Axis::covering(&[0.3, 7.0], Scale::Linear, 0.0, 100.0);
        assert_eq!((l.lo, l.hi), (0.0, 10.0));
        assert_eq!(Scale::suited([1.0, 100.0].into_iter()), Scale::Log);
        assert_eq!(Scale::suited([1.0, 3.0].into_iter()), Scale::Linear);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let svg = hbars(
            "t",
            "t",
            &[Bar {
                label: "x<y".into(),
                value: Some(2.0),
                whisker: Some((1.5, 2.5)),
                text: "2".into(),
                title: "two".into(),
                class: "ok".into(),
            }],
            Scale::Linear,
            &|v| format!("{v}"),
            WIDTH,
        );
        assert!(svg.contains("x&lt;y") && svg.ends_with("</svg>"));
    }
}

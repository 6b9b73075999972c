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

mod bars;
mod curve;
mod strips;
#[cfg(test)]
mod tests;
pub mod ticks;

pub use bars::{Bar, Dot, hbars};
pub use curve::{Point, XAxis, curve};
pub use strips::{Strip, strips};
pub use ticks::Unit;

/// Width of every chart, px (the viewBox; the page scales it to its column).
pub const WIDTH: f64 = 820.0;
const ROW: f64 = 20.0;
const TOP: f64 = 8.0;
const AXIS: f64 = 30.0;
/// The least room right of a bar chart's axis, for the figure printed after a bar.
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

/// A mapping from values to x pixels, with its ticks (the first and last are its ends).
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    x0: f64,
    x1: f64,
}

impl Axis {
    /// An axis covering `values` (non-finite ones ignored; on a log axis, non-positive ones),
    /// ending at round values of `unit`, with about one tick per 60 px.
    fn covering(values: &[f64], scale: Scale, unit: Unit, x0: f64, x1: f64) -> Axis {
        let usable = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0));
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in usable {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let max = (((x1 - x0).abs() / 60.0) as usize).clamp(ticks::MIN_MAX, 10);
        let ticks = match scale {
            Scale::Log if lo.is_finite() => ticks::log(lo, hi, unit, max),
            Scale::Log => ticks::log(1.0, 10.0, unit, max),
            Scale::Linear if hi.is_finite() && hi > 0.0 => {
                ticks::linear(lo.min(0.0), hi, unit, max)
            }
            Scale::Linear if hi.is_finite() => ticks::linear(lo.min(0.0), 0.0, unit, max),
            Scale::Linear => ticks::linear(0.0, 1.0, unit, max),
        };
        Axis {
            scale,
            lo: ticks[0],
            hi: ticks[ticks.len() - 1],
            ticks,
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
}

fn f1(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// A tick label without the zeros a fixed number of significant digits leaves on a round
/// value: `50.0 ns` → `50 ns`, `2.50 µs` → `2.5 µs`, `2.0e-6` → `2e-6`.
fn tidy(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    let mut chars = label.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '.' && out.ends_with(|d: char| d.is_ascii_digit()) {
            let mut frac = String::new();
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                frac.push(d);
                chars.next();
            }
            let frac = frac.trim_end_matches('0');
            if !frac.is_empty() {
                out.push('.');
                out.push_str(frac);
            }
        } else {
            out.push(c);
        }
    }
    out
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
    let labels: Vec<String> = axis.ticks.iter().map(|&t| tidy(&fmt(t))).collect();
    let every = label_stride(axis, &labels);
    for (i, (&t, label)) in axis.ticks.iter().zip(&labels).enumerate() {
        let x = f1(axis.px(t));
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x}" y1="{}" x2="{x}" y2="{}"/>"#,
            f1(top),
            f1(y),
        );
        if i % every == 0 {
            let _ = write!(
                out,
                r#"<text class="tick" x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                f1(y + 14.0),
                esc(label),
            );
        }
    }
}

/// Label every how many ticks so that no two labels overlap (about 6.5 px a character at the
/// charts' 11 px): 1 when they all fit, 2 on a narrow axis with long labels (`128 MiB`).
fn label_stride(axis: &Axis, labels: &[String]) -> usize {
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * 6.5 + 8.0;
    let xs: Vec<f64> = axis.ticks.iter().map(|&t| axis.px(t)).collect();
    (1..xs.len().max(2))
        .find(|&k| xs.windows(k + 1).all(|w| (w[k] - w[0]).abs() >= widest))
        .unwrap_or(xs.len().max(1))
}

//! The fleet view (`oslab report --store URL --by KEY`): each configuration's figure across
//! the fleet's machines, by group, with the machines outside the fleet's noise band
//! (`analysis::fleet`), as a self-contained HTML page or one JSON document.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::charts::esc;
use super::format::sig3;
use crate::analysis::fleet::{Config, MIN_BAND, MIN_MACHINES};

/// What the page's lead says of the fleet.
pub struct Fleet<'a> {
    pub store: &'a str,
    /// kernel, host, os or cpu.
    pub by: &'a str,
    pub runs: usize,
    pub machines: usize,
    pub configs: &'a [Config],
}

pub fn document(f: &Fleet<'_>) -> Value {
    json!({
        "store": f.store,
        "by": f.by,
        "runs": f.runs,
        "machines": f.machines,
        "band_rule": {"min": MIN_BAND, "mads": 3.0, "min_machines": MIN_MACHINES},
        "configurations": f.configs.iter().map(config_json).collect::<Vec<_>>(),
    })
}

fn config_json(c: &Config) -> Value {
    json!({
        "config": c.config,
        "name": c.name,
        "unit": c.unit,
        "runs": c.runs,
        "machines": c.machines,
        "center": c.center,
        "band": c.band,
        "groups": c.groups.iter().map(|g| json!({
            "key": g.key, "runs": g.runs, "machines": g.machines, "median": g.median,
            "min": g.min, "max": g.max, "ratio": g.ratio, "machine_figures": g.values,
        })).collect::<Vec<_>>(),
        "outliers": c.outliers.iter().map(|o| json!({
            "machine": o.machine, "host": o.host, "group": o.group, "runs": o.runs,
            "value": o.value, "ratio": o.ratio,
        })).collect::<Vec<_>>(),
    })
}

/// The page: a lead, then one card per configuration (a strip of machine figures per group
/// over the fleet's band, and a table), flagged machines in red.
pub fn html(f: &Fleet<'_>) -> String {
    let flagged: usize = f.configs.iter().map(|c| c.outliers.len()).sum();
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>oslab fleet report by {by}</title>\n<style>{css}</style>\n</head>\n<body>\n<main>\n\
         <h1>oslab fleet report</h1>\n<p class=\"lead\">{runs} runs from {machines} machines in \
         {store}, grouped by {by}. A machine's figure is the median of its runs' medians; the \
         band is the fleet's median ±max({min:.0}%, 3 robust standard deviations), and a \
         machine outside it is flagged (with {min_machines} machines or more): {flagged} \
         flagged.</p>\n",
        by = esc(f.by),
        css = super::html::CSS,
        runs = f.runs,
        machines = f.machines,
        store = esc(f.store),
        min = MIN_BAND * 100.0,
        min_machines = MIN_MACHINES,
    );
    if f.configs.is_empty() {
        out.push_str("<p>No figures in this store yet: `oslab push` sends runs to it.</p>\n");
    }
    out.push_str("<section id=\"fleet\">\n");
    for c in f.configs {
        card(&mut out, c);
    }
    out.push_str("</section>\n</main>\n</body>\n</html>\n");
    out
}

fn card(out: &mut String, c: &Config) {
    let _ = write!(
        out,
        "<div class=\"card\" data-config=\"{}\">\n<h3>{} <span class=\"muted\">({}; {} machines, \
         {} runs; fleet median {} {}, band ±{:.1}%)</span></h3>\n",
        esc(&c.config),
        esc(&c.name),
        esc(&c.unit),
        c.machines,
        c.runs,
        sig3(c.center),
        esc(&c.unit),
        c.band * 100.0
    );
    out.push_str(&strip(c));
    out.push_str(
        "<table><thead><tr><th>group</th><th>machines</th><th>runs</th><th>median</th>\
         <th>min – max</th><th>vs fleet</th></tr></thead><tbody>\n",
    );
    for g in &c.groups {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} – {}</td><td>{:.3}×</td></tr>",
            esc(&g.key),
            g.machines,
            g.runs,
            sig3(g.median),
            sig3(g.min),
            sig3(g.max),
            g.ratio
        );
    }
    out.push_str("</tbody></table>\n");
    for o in &c.outliers {
        let _ = writeln!(
            out,
            "<p class=\"flag\" data-outlier=\"{}\">⚑ {} ({}; {} runs): {} {}, {:.2}× the fleet</p>",
            esc(&o.machine),
            esc(&o.host),
            esc(&o.group),
            o.runs,
            sig3(o.value),
            esc(&c.unit),
            o.ratio
        );
    }
    out.push_str("</div>\n");
}

/// One row per group, a dot per machine's figure (red: flagged), on a common axis with the band shaded.
fn strip(c: &Config) -> String {
    const W: f64 = 640.0;
    const LEFT: f64 = 150.0;
    const ROW: f64 = 22.0;
    let lo_band = c.center * (1.0 - c.band);
    let hi_band = c.center * (1.0 + c.band);
    let (mut lo, mut hi) = (lo_band, hi_band);
    for g in &c.groups {
        lo = lo.min(g.min);
        hi = hi.max(g.max);
    }
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let x = |v: f64| LEFT + (v - lo) / span * (W - LEFT - 20.0);
    let h = ROW * c.groups.len() as f64 + 24.0;
    let mut s = format!(
        "<svg class=\"chart\" data-chart=\"fleet\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" \
         height=\"{h}\" role=\"img\">\n<rect x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"{:.1}\" \
         fill=\"#e8eefb\"><title>fleet band {} – {}</title></rect>\n",
        x(lo_band),
        (x(hi_band) - x(lo_band)).max(1.0),
        h - 20.0,
        sig3(lo_band),
        sig3(hi_band)
    );
    for (i, g) in c.groups.iter().enumerate() {
        let y = ROW * i as f64 + 14.0;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
            LEFT - 8.0,
            y + 4.0,
            esc(&g.key)
        );
        for &v in &g.values {
            let flagged = c.outliers.iter().any(|o| o.group == g.key && o.value == v);
            let fill = if flagged { "#c23b3b" } else { "#3a6fd8" };
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"{}\" fill=\"{fill}\"><title>{} {}</title></circle>",
                x(v),
                if flagged { 5 } else { 4 },
                sig3(v),
                esc(&c.unit)
            );
        }
    }
    let _ = writeln!(
        s,
        "<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"11\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" \
         font-size=\"11\" text-anchor=\"end\">{} {}</text>\n</svg>",
        h - 4.0,
        sig3(lo),
        W - 20.0,
        h - 4.0,
        sig3(hi),
        esc(&c.unit)
    );
    s
}

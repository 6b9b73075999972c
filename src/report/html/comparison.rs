//! The comparison section: the first run against each other one, as `oslab compare` does,
//! and every result's median per run side by side.

use std::fmt::Write as _;

use super::cost_ladder::process_dots;
use super::run_name;
use crate::analysis::compare::{
    DEFAULT_NOISE, Metric, Pair, RunComparison, compare_runs, default_noise,
};
use crate::model::Run;
use crate::report::charts::{self, Bar, Scale, Unit, esc};
use crate::report::format::{sig3, time_ns};
use crate::report::ladder::label;
use crate::report::pool::Pooled;

/// The first run against each other one, as `oslab compare` does (time per operation, the
/// default noise band).
pub(super) fn compare_all(runs: &[Run]) -> Vec<RunComparison> {
    runs.iter()
        .skip(1)
        .map(|b| {
            let (noise, _) = default_noise(&runs[0], b);
            compare_runs(
                &runs[0],
                b,
                &Metric::Time,
                noise,
                crate::experiment::DECLARED,
            )
        })
        .collect()
}

pub(super) fn section(runs: &[Run], pooled: &[Vec<Pooled>], cmps: &[RunComparison]) -> String {
    let mut s = String::from("<section id=\"comparison\">\n<h2>Comparison</h2>\n");
    let _ = writeln!(
        s,
        "<p class=\"caption\">A = {} against each other run; B/A above 1 means B costs more. \
         A and B are the medians over each run's pooled worker processes. \
         A change is claimed when p &lt; 0.05 and the 95% CI of B/A lies \
         outside the noise band: ±{}%, or the runs' precision target when larger (as \
         <code>oslab compare</code>); p is the CI's own test where the runs have several \
         processes, Mann-Whitney over the samples with one. <em>could see</em>: the smallest \
         change the two runs could have called; \"no change\" says only that any change is \
         smaller. <b>†</b>: the host may have moved the row (its kernel canary moved with the \
         change, or a side took it wholly in a slow kernel phase of its host); hover over it \
         for the figures.</p>",
        run_name(&runs[0]),
        sig3(DEFAULT_NOISE * 100.0)
    );
    for (b, cmp) in runs[1..].iter().zip(cmps) {
        s.push_str(&comparison_table(&runs[0], b, cmp));
    }
    s.push_str(&grouped_bars(runs, pooled));
    s.push_str("</section>\n");
    s
}

pub(super) fn comparison_table(a: &Run, b: &Run, cmp: &RunComparison) -> String {
    let mut s = format!("<h3>{} vs {}</h3>\n", run_name(a), run_name(b));
    let systems = crate::report::compare::systems_line(cmp);
    if !systems.is_empty() {
        let _ = writeln!(s, "<p class=\"note systems\">{}</p>", esc(systems.trim()));
    }
    if cmp.environment_diff.is_empty() && cmp.settings_diff.is_empty() {
        s.push_str("<p class=\"note\">Same environment and settings.</p>\n");
    } else {
        s.push_str("<details><summary>What differs between the machines and settings (");
        let _ = write!(
            s,
            "{} fields)</summary>\n<table class=\"diff\"><thead><tr><th>field</th><th>A</th>\
             <th>B</th></tr></thead><tbody>\n",
            cmp.environment_diff.len() + cmp.settings_diff.len()
        );
        for d in cmp.environment_diff.iter().chain(&cmp.settings_diff) {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&d.field),
                esc(d.a.as_deref().unwrap_or("–")),
                esc(d.b.as_deref().unwrap_or("–"))
            );
        }
        s.push_str("</tbody></table></details>\n");
    }
    let _ = writeln!(
        s,
        "<table class=\"cmp\" data-table=\"comparison-{}-{}\"><thead><tr><th>experiment</th>\
         <th>A</th><th>B</th><th>B/A</th><th>95% CI</th><th>p</th><th>could see</th><th>verdict</th></tr>\
         </thead><tbody>",
        a.id, b.id
    );
    for p in &cmp.pairs {
        s.push_str(&pair_row(p, cmp));
    }
    s.push_str("</tbody></table>\n");
    if !cmp.unpaired.is_empty() {
        s.push_str("<ul class=\"unpaired\">");
        for u in &cmp.unpaired {
            let _ = write!(
                s,
                "<li>{} measured only in {}{}</li>",
                esc(&crate::report::names::config_name(
                    &u.experiment,
                    u.label.as_deref(),
                    &u.params
                )),
                if u.only_in == "a" { "A" } else { "B" },
                u.other_status
                    .map(|st| format!(" (the other run: {st})"))
                    .unwrap_or_default()
            );
        }
        s.push_str("</ul>\n");
    }
    s
}

/// Time per operation of every configuration, one bar per run side by side: each bar is the
/// pooled figure of the run's worker processes (`Pooled::figures`, as everywhere on the page),
/// with each process's median as a labelled dot on it.
pub(super) fn grouped_bars(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut keys: Vec<&Pooled> = Vec::new();
    for p in pooled.iter().flatten() {
        if !keys.iter().any(|k| k.is_of(&p.result)) {
            keys.push(p);
        }
    }
    let mut bars = Vec::new();
    for key in &keys {
        let name = label(&key.result);
        for (i, (run, pooled)) in runs.iter().zip(pooled).enumerate() {
            let found = pooled.iter().find(|p| p.is_of(&key.result));
            bars.push(side_bar(&name, i, run, found));
        }
    }
    let mut s = String::from(
        "<h3>Time per operation, side by side</h3>\n<p class=\"caption\">Median per run \
         (log scale), whisker: where a rerun's median falls, 95%",
    );
    if bars.iter().any(|b| !b.dots.is_empty()) {
        s.push_str(
            "; a run measured with --repeat pools its worker processes, and the dots on its bar \
             mark each process's median (hover for which)",
        );
        s.push_str(super::cost_ladder::left_out_caption(
            bars.iter().flat_map(|b| b.dots.iter().map(|d| d.left_out)),
        ));
    }
    s.push_str(". ");
    for (i, run) in runs.iter().enumerate() {
        let _ = write!(
            s,
            "<span class=\"key s{}\"></span> {} ",
            i % 6,
            run_name(run)
        );
    }
    s.push_str("</p>\n");
    s.push_str(&charts::hbars(
        "compare-grouped",
        "time per operation per run, side by side",
        &bars,
        Scale::Log,
        Unit::Decimal,
        &time_ns,
        charts::WIDTH,
    ));
    s.push('\n');
    s
}

/// The bar of run number `i` for one configuration (`found`: its pooled result, if measured).
fn side_bar(name: &str, i: usize, run: &Run, found: Option<&Pooled>) -> Bar {
    let f = found.map(Pooled::figures);
    let median = f.as_ref().and_then(|f| f.stats.as_ref()).map(|s| s.median);
    let medians = found
        .filter(|p| p.processes > 1)
        .map(Pooled::process_medians)
        .unwrap_or_default();
    let spread = match (
        medians.iter().copied().reduce(f64::min),
        medians.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) if medians.len() > 1 => {
            format!(
                " · {} processes {} – {}",
                medians.len(),
                time_ns(lo),
                time_ns(hi)
            )
        }
        _ => String::new(),
    };
    Bar {
        label: if i == 0 {
            name.to_string()
        } else {
            String::new()
        },
        value: median.filter(|m| *m > 0.0),
        whisker: f.as_ref().and_then(|f| f.ci),
        text: match (found, median) {
            (_, Some(m)) => format!("{} · run {}{spread}", time_ns(m), run.id),
            (Some(p), None) => format!("{} in run {}", p.result.status.as_str(), run.id),
            (None, None) => format!("not in run {}", run.id),
        },
        title: format!(
            "{name}, {}: {}{spread}",
            run_name(run),
            median.map_or("no samples".into(), time_ns)
        ),
        class: format!("s{}", i % 6),
        dots: process_dots(
            &format!("{name}, {}", run_name(run)),
            &medians,
            found.map_or(&[][..], |p| &p.left_out_medians),
        ),
    }
}

/// One row of the comparison table: A, B, B/A with its CI, p and the verdict.
/// ` ≠` with how each system performs the experiment on hover, for a pair the two runs'
/// systems perform differently; empty otherwise.
fn differs_mark(p: &Pair, cmp: &RunComparison) -> String {
    let (Some(i), Some(systems)) = (&p.implementations, &cmp.systems) else {
        return String::new();
    };
    if !i.differs {
        return String::new();
    }
    let title = format!(
        "A ({}): {}; B ({}): {}",
        crate::report::compare::os_title(&systems.a),
        i.a,
        crate::report::compare::os_title(&systems.b),
        i.b
    );
    format!(
        " <span class=\"other-path\" title=\"{}\">≠</span>",
        esc(&title)
    )
}

fn pair_row(p: &Pair, cmp: &RunComparison) -> String {
    let ratio = |x: f64| {
        if x.is_finite() {
            format!("{x:.3}")
        } else {
            "–".into()
        }
    };
    let mut name = p.experiment.clone();
    for (k, v) in &p.params {
        let _ = write!(name, " {k}={v}");
    }
    let name = format!("{}{}", esc(&name), differs_mark(p, cmp));
    let Some(c) = &p.comparison else {
        return format!(
            "<tr><td>{name}</td><td colspan=\"7\">not measured on one side</td></tr>\n"
        );
    };
    let class = match c.verdict.as_str() {
        "faster" => "faster",
        "slower" => "slower",
        _ => "same",
    };
    format!(
        "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}{}</td></tr>\n",
        name,
        time_ns(c.a),
        time_ns(c.b),
        ratio(c.ratio),
        c.ci.map_or("–".into(), |(lo, hi)| format!(
            "{} – {}",
            ratio(lo),
            ratio(hi)
        )),
        c.p.map_or("–".into(), |p| if p < 1e-4 {
            format!("{p:.1e}")
        } else {
            format!("{p:.4}")
        }),
        c.detectable
            .map_or("–".into(), crate::report::compare::detectable),
        c.verdict.as_str(),
        marks(p, cmp, c.highlight)
    )
}

/// What follows the verdict: ` !!` for a change of 1.5× or more, ` †` for a row the kernel
/// canary marks, with what it says on hover (`report::compare_host`).
fn marks(p: &Pair, cmp: &RunComparison, highlight: bool) -> String {
    let mut out = String::from(if highlight { " !!" } else { "" });
    let notes = crate::report::compare_host::pair_notes(cmp, p);
    if !notes.is_empty() {
        let _ = write!(
            out,
            " <span class=\"host-mark\" title=\"{}\">†</span>",
            esc(&notes.join(" "))
        );
    }
    out
}

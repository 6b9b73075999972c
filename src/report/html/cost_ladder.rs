//! The cost ladder section: the headline experiments as bars on a log scale.

use std::fmt::Write as _;

use super::run_name;
use crate::model::Run;
use crate::report::charts::{self, Bar, Dot, Scale, Unit, esc};
use crate::report::format::{time_ns, time_range_ns, times};
use crate::report::ladder::{self, Ladder, Rung};

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
        "<p class=\"caption\">Time per operation, log scale, cheapest first; whiskers: where a \
         rerun's median falls, 95%{}{}. Derived rungs (purple) are computed from two results.</p>",
        if l.rungs.iter().any(|r| r.processes.len() > 1) {
            format!(
                "; bars pool the worker processes of a configuration, dots mark each process's \
                 median{}",
                left_out_caption(l.rungs.iter().map(|r| !r.left_out.is_empty()))
            )
        } else {
            String::new()
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
    s.push_str(&paths_table(&l));
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

/// The path into the kernel, per rung measured on more than one: the called path (the bar
/// above), the inline floor, the gap between them, libc's wrapper where measured, and the
/// CPU mitigations that make the gap.
fn paths_table(l: &Ladder) -> String {
    if !l.has_gap() && !l.has_libc() {
        return String::new();
    }
    let mut s = String::from(
        "\n<h3>Path into the kernel</h3>\n<p class=\"caption\">call: the system call made from a \
         function, as programs make it (the bars above); inline: the trap instruction inline in \
         the measuring loop, the floor; call − inline: what entering the kernel from inside a \
         call costs here, with its 95% interval (from the rounds' pairs where the processes ran \
         in rounds, else over one process's samples), and as a share of the floor; libc: the C library's wrapper, where measured. See docs/syscall-path.md.</p>\n\
         <table class=\"results\" data-table=\"paths\"><thead><tr><th>experiment</th><th>call</th>\
         <th>inline</th><th>call − inline</th><th>95% CI</th><th>libc</th></tr></thead><tbody>\n",
    );
    let cell = |v: Option<f64>| v.map_or("–".into(), time_ns);
    for r in l.rungs.iter().filter(|r| r.paths != Default::default()) {
        let gap = r.paths.gap.as_ref();
        let _ = writeln!(
            s,
            "<tr data-rung=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            esc(&r.label),
            esc(&r.label),
            time_ns(r.median),
            cell(r.paths.inline),
            esc(&gap.map_or("–".into(), |g| g.text())),
            gap.and_then(|g| g.ci.map(|(lo, hi)| time_range_ns(lo, hi, g.ns)))
                .unwrap_or_else(|| "–".into()),
            cell(r.paths.libc),
        );
    }
    s.push_str("</tbody></table>\n");
    if l.has_gap() && !l.mitigations.is_empty() {
        s.push_str(
            "<p class=\"note\">The CPU mitigations that tax a return or an indirect call, and so \
             the called path, as the kernel reports them:</p>\n<table class=\"env\"><tbody>",
        );
        for (name, state) in &l.mitigations {
            let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(name), esc(state));
        }
        s.push_str("</tbody></table>\n");
    }
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
    } else if r.status.contains("failed") {
        // A partial path on the rung (`ok; inline failed (partial)`) colours it failed.
        "failed"
    } else {
        r.status.as_str()
    };
    let inline = match (&r.paths.inline, &r.paths.gap) {
        (Some(i), Some(g)) => format!(" · inline {} ({})", time_ns(*i), g.text()),
        _ => String::new(),
    };
    Bar {
        label: format!("{} (per {})", r.label, r.per),
        value: (r.median > 0.0).then_some(r.median),
        whisker: r.ci,
        text: if r.median > 0.0 {
            format!("{}{multiple}{inline}", time_ns(r.median))
        } else {
            format!("{} (≤ 0: not drawn on a log scale)", time_ns(r.median))
        },
        title: format!(
            "{}: median {} per {}, a rerun within {} (95%), {} samples, {}",
            r.label,
            time_ns(r.median),
            r.per,
            r.ci.map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, r.median)),
            r.samples,
            r.status
        ),
        class: class.into(),
        dots: process_dots(&r.label, &r.processes, &r.left_out),
    }
}

/// What a caption adds where `dots` include a process left out.
pub(super) fn left_out_caption(dots: impl IntoIterator<Item = bool>) -> &'static str {
    if dots.into_iter().any(|left_out| left_out) {
        " (dashed: a process left out, taken wholly in a slow kernel phase of the host)"
    } else {
        ""
    }
}

/// The medians of the worker processes a pooled figure is made of, as labelled dots, and of
/// those it leaves out (`left_out`, taken wholly in a slow kernel phase), as dashed ones (none
/// for a single process).
pub(super) fn process_dots(label: &str, medians: &[f64], left_out: &[f64]) -> Vec<Dot> {
    if medians.len() + left_out.len() < 2 {
        return Vec::new();
    }
    let standing = medians.iter().enumerate().map(|(k, &m)| Dot {
        value: m,
        title: format!(
            "{label}: process {} of {}, median {}",
            k + 1,
            medians.len(),
            time_ns(m)
        ),
        left_out: false,
    });
    let apart = left_out.iter().map(|&m| Dot {
        value: m,
        title: format!(
            "{label}: a process left out, taken wholly in a slow kernel phase of the host, \
             median {}",
            time_ns(m)
        ),
        left_out: true,
    });
    standing.chain(apart).collect()
}

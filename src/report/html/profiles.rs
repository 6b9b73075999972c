//! The profiles of the runs shown (`oslab profile`): per run, the table of where each
//! configuration's time goes, and each flame graph embedded in a sandboxed frame
//! (`iframe srcdoc`), so the graph keeps its click-to-zoom and search script, its element ids
//! cannot clash with the page's or another graph's, and the page stays one file.

use std::fmt::Write as _;

use super::esc;
use crate::analysis::profile::Bucket;
use crate::model::Run;
use crate::report::flame;
use crate::report::names::label;
use crate::report::profile::profiled;

/// The width of an embedded flame graph, pixels: the page's column.
const GRAPH_WIDTH: usize = 1100;

/// The section, or nothing when no run shown has a profile.
pub(super) fn section(runs: &[Run]) -> String {
    let mut out = String::new();
    for run in runs {
        let profiled = profiled(run);
        if profiled.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push_str(
                "<h2 id=\"profiles\">Where the time goes</h2>\n<p class=\"caption\">Share of \
                 stack samples (cpu-clock) by the function each was in, taken after the timed \
                 samples (docs/profile.md). Click a frame of a flame graph to zoom into it.</p>\n",
            );
        }
        let _ = write!(
            out,
            "<h3>Run {}</h3>\n<table><thead><tr><th>configuration</th><th>cost</th>",
            run.id
        );
        for b in Bucket::ALL {
            let _ = write!(out, "<th>{}</th>", esc(b.name()));
        }
        out.push_str("<th>samples</th></tr></thead><tbody>\n");
        for p in &profiled {
            out.push_str("<tr>");
            for cell in p.parts_row() {
                let _ = write!(out, "<td>{}</td>", esc(&cell));
            }
            let _ = writeln!(out, "<td>{}</td></tr>", p.profile.samples());
        }
        out.push_str("</tbody></table>\n");
        for p in &profiled {
            let name = label(p.result);
            let subtitle = format!("run {} · {} samples", run.id, p.profile.samples());
            // A fixed width: the page's column, less the frame's own margins.
            let Ok(svg) = flame::svg(p.profile, &name, &subtitle, Some(GRAPH_WIDTH)) else {
                continue;
            };
            let _ = writeln!(
                out,
                "<details data-flame-graph=\"{}\"><summary>{}</summary>\
                 <iframe sandbox=\"allow-scripts\" title=\"flame graph of {}\" \
                 style=\"width:100%;height:{}px;border:0\" srcdoc=\"{}\"></iframe></details>",
                esc(&name),
                esc(&name),
                esc(&name),
                svg_height(&svg) + 8,
                esc(&format!("<style>body{{margin:0}}</style>{svg}"))
            );
        }
    }
    out
}

/// The height an SVG's root asks for, in pixels (600 if it says none).
fn svg_height(svg: &str) -> usize {
    svg.find("<svg")
        .and_then(|at| {
            let rest = &svg[at..];
            let h = rest.find(" height=\"")? + " height=\"".len();
            rest[h..]
                .split('"')
                .next()?
                .trim_end_matches("px")
                .parse()
                .ok()
        })
        .unwrap_or(600)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::{FoldedStack, Profile};

    #[test]
    fn a_profiled_run_gets_its_table_and_graphs_and_others_nothing() {
        let mut run = crate::store::tests::run(
            None,
            1.0,
            vec![crate::model::ExperimentResult::from_values(
                "syscall.getppid",
                &[],
                &[150.0, 151.0, 149.0],
                1000,
            )],
        );
        assert_eq!(section(std::slice::from_ref(&run)), "");
        run.results[0].profile = Some(Profile {
            event: "cpu-clock".into(),
            frequency_hz: 4000,
            stacks: vec![FoldedStack {
                stack: "main;entry_SYSCALL_64_[k];__x64_sys_getppid_[k]".into(),
                count: 40,
            }],
            lost: 0,
            batch_ns_per_op: vec![160.0],
            problem: None,
        });
        let html = section(&[run]);
        assert!(html.contains("id=\"profiles\""));
        assert!(html.contains("<iframe sandbox=\"allow-scripts\""));
        assert!(html.contains("__x64_sys_getppid"));
        assert!(
            html.contains("<td>100.0%</td>"),
            "all in the syscall body: {html}"
        );
        assert!(!html.contains("srcdoc=\"<"), "the SVG is escaped");
    }

    #[test]
    fn heights_are_read_from_the_root() {
        assert_eq!(
            svg_height("<?xml?><svg version=\"1.1\" width=\"1200\" height=\"342\">"),
            342
        );
        assert_eq!(svg_height("<svg>"), 600);
    }
}

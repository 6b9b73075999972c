//! The summary the page opens with: which runs, how many results each holds and how many
//! processes measured them, the verdicts of each comparison with its biggest changes, and
//! every result that is not plainly `ok` (suspect, failed, unsupported) with its reason, and
//! what the worker processes showed (a cold first process, a layout-sensitive configuration).

use std::fmt::Write as _;

use super::run_name;
use crate::analysis::compare::{RunComparison, Verdict};
use crate::model::{Run, Status};
use crate::report::charts::esc;
use crate::report::format::time_ns;
use crate::report::ladder::label;
use crate::report::pool::Pooled;

/// The biggest changes listed per comparison.
const BIGGEST: usize = 3;

pub(super) fn section(runs: &[Run], pooled: &[Vec<Pooled>], cmps: &[RunComparison]) -> String {
    let mut s =
        String::from("<section id=\"summary\">\n<h2>Summary</h2>\n<ul class=\"summary\">\n");
    for (run, pooled) in runs.iter().zip(pooled) {
        let _ = writeln!(s, "<li>{}</li>", run_line(run, pooled));
    }
    for cmp in cmps {
        let _ = writeln!(
            s,
            "<li data-summary=\"comparison-{}-{}\">{}</li>",
            cmp.a_id,
            cmp.b_id,
            verdicts(cmp)
        );
    }
    s.push_str("</ul>\n");
    s.push_str(&not_ok(runs, pooled));
    s.push_str(&process_notes(runs, pooled));
    s.push_str("</section>\n");
    s
}

/// `run 2 [r2]: 4 results (3 processes each), 2026-11-25 06:49 UTC, ok`.
fn run_line(run: &Run, pooled: &[Pooled]) -> String {
    let most = pooled.iter().map(|p| p.processes).max().unwrap_or(1);
    let fewest = pooled.iter().map(|p| p.processes).min().unwrap_or(1);
    let processes = match (fewest, most) {
        (_, 1) => String::new(),
        (a, b) if a == b => format!(" ({b} worker processes each, pooled)"),
        (a, b) => format!(" ({a}–{b} worker processes each, pooled)"),
    };
    let count = |st: Status| pooled.iter().filter(|p| p.result.status == st).count();
    let mut statuses = vec![format!("{} ok", count(Status::Ok))];
    for st in [Status::Suspect, Status::Failed, Status::Unsupported] {
        if count(st) > 0 {
            statuses.push(format!(
                "<span class=\"status {}\">{} {}</span>",
                st.as_str(),
                count(st),
                st.as_str()
            ));
        }
    }
    format!(
        "<b>{}</b>: {} result{}{processes}, {}; measured {}",
        run_name(run),
        pooled.len(),
        if pooled.len() == 1 { "" } else { "s" },
        statuses.join(", "),
        super::environment::utc(run.started_at)
    )
}

/// The verdict counts of one comparison and its biggest changes.
fn verdicts(cmp: &RunComparison) -> String {
    let count = |v: Verdict| {
        cmp.pairs
            .iter()
            .filter(|p| p.comparison.as_ref().is_some_and(|c| c.verdict == v))
            .count()
    };
    let marked = |v: Verdict, class: &str| match count(v) {
        0 => format!("0 {}", v.as_str()),
        n => format!("<span class=\"verdict {class}\">{n} {}</span>", v.as_str()),
    };
    let mut s = format!(
        "<b>run {} vs run {}</b> ({} compared): {}, {}, {} no change, {} within noise",
        cmp.a_id,
        cmp.b_id,
        cmp.pairs.len(),
        marked(Verdict::Slower, "slower"),
        marked(Verdict::Faster, "faster"),
        count(Verdict::NoChange),
        count(Verdict::WithinNoise),
    );
    let mut changes: Vec<_> = cmp
        .pairs
        .iter()
        .filter_map(|p| p.comparison.as_ref().map(|c| (p, c)))
        .filter(|(_, c)| c.verdict.is_change() && c.ratio.is_finite() && c.ratio > 0.0)
        .collect();
    changes.sort_by(|x, y| y.1.ratio.ln().abs().total_cmp(&x.1.ratio.ln().abs()));
    if changes.is_empty() {
        s.push_str("; no change stands out of the noise");
    } else {
        s.push_str("; biggest: ");
        let list: Vec<String> = changes
            .iter()
            .take(BIGGEST)
            .map(|(p, c)| {
                let mut name = p.experiment.clone();
                if let Some(l) = &p.label {
                    let _ = write!(name, " ({l})");
                }
                for (k, v) in &p.params {
                    let _ = write!(name, " {k}={v}");
                }
                format!(
                    "{} {} → {} (×{:.2}, {})",
                    esc(&name),
                    time_ns(c.a),
                    time_ns(c.b),
                    c.ratio,
                    c.verdict.as_str()
                )
            })
            .collect();
        s.push_str(&list.join("; "));
    }
    if !cmp.environment_diff.is_empty() {
        let _ = write!(
            s,
            "; the machines differ in {} environment field{} (see Environment)",
            cmp.environment_diff.len(),
            if cmp.environment_diff.len() == 1 {
                ""
            } else {
                "s"
            }
        );
    }
    s
}

/// Every result that is not `ok`, with the run and the reason; nothing when all are.
fn not_ok(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut rows = String::new();
    for (run, pooled) in runs.iter().zip(pooled) {
        for p in pooled.iter().filter(|p| p.result.status != Status::Ok) {
            let r = &p.result;
            let _ = writeln!(
                rows,
                "<li><span class=\"status {st}\">{st}</span> {} in {}: {}</li>",
                esc(&label(r)),
                run_name(run),
                esc(r.reason.as_deref().unwrap_or("no reason recorded")),
                st = r.status.as_str(),
            );
        }
    }
    if rows.is_empty() {
        return "<p class=\"note\">Every result is ok: measured, and its checks passed.</p>\n"
            .into();
    }
    format!("<p>Results to read with care:</p>\n<ul class=\"not-ok\">\n{rows}</ul>\n")
}

/// What the worker processes showed beyond the figures: a cold first process left out, a
/// configuration whose processes differ more than each is uncertain (`Pooled::process_notes`).
fn process_notes(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut rows = String::new();
    for (run, pooled) in runs.iter().zip(pooled) {
        for p in pooled {
            for note in p.process_notes() {
                let _ = writeln!(
                    rows,
                    "<li data-process-note>{} in {}: {}</li>",
                    esc(&label(&p.result)),
                    run_name(run),
                    esc(&note)
                );
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<p>Between the worker processes (each with its own memory layout):</p>\n\
         <ul class=\"process-notes\">\n{rows}</ul>\n"
    )
}

//! The summary the page opens with: which runs, how many results each holds and how many
//! processes measured them, the verdicts of each comparison with its biggest changes, and
//! every result that is not plainly `ok` (suspect, failed, unsupported) with its reason, and
//! one table per run of where each interval's width comes from (`report::levels`) and of the
//! configurations paired round by round (`report::paired`).

use std::fmt::Write as _;

use super::run_name;
use crate::analysis::compare::{RunComparison, Verdict};
use crate::model::{Run, RunSettings, Status};
use crate::report::charts::esc;
use crate::report::format::{sig3, time_ns};
use crate::report::ladder::label;
use crate::report::levels::{self, Level, Levels};
use crate::report::paired;
use crate::report::pool::{Pooled, process_notes};

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
    s.push_str(&levels_tables(runs, pooled));
    s.push_str(&pairs_tables(runs, pooled));
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

/// Where each interval's width comes from, one table per run (`report::levels`): per
/// configuration measured by several processes, the half-width each level alone gives its
/// rerun interval, the widest named, and what the processes showed (a cold first process, a
/// layout- or run-sensitive or unstable configuration).
fn levels_tables(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut s = String::new();
    for (run, pooled) in runs.iter().zip(pooled) {
        let rows: String = pooled
            .iter()
            .filter_map(|p| level_row(p, &run.settings))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "<p>Where the intervals of {} get their width: the half-width each level alone \
             gives the rerun interval (within a process: more samples narrow it; between \
             processes: more processes; between runs: only a quieter machine).</p>\n\
             <table class=\"levels\" data-table=\"levels-run{}\"><thead><tr>\
             <th>configuration</th><th>processes</th><th>within a process</th>\
             <th>between processes</th><th>between runs</th><th>widest</th><th>note</th>\
             </tr></thead><tbody>\n{rows}</tbody></table>",
            run_name(run),
            run.id
        );
    }
    s
}

/// One configuration's row of the levels table; `None` with a single process. In a run that
/// added processes as it went, the note says why this configuration got no more.
fn level_row(p: &Pooled, settings: &RunSettings) -> Option<String> {
    let levels = Levels::of(p)?;
    let pct = Levels::percent;
    let runs = levels.runs.map_or("–".to_string(), |(r, from)| {
        format!("{} ({})", pct(r), from.describe())
    });
    let mut notes = Vec::new();
    if let Some(excess) = levels.cold_first {
        let fate = if levels.kept < levels.processes {
            "left out"
        } else {
            "kept"
        };
        notes.push(format!(
            "first process cold (+{}%), {fate}",
            sig3(excess * 100.0)
        ));
    }
    if levels.unstable {
        let medians: Vec<String> = p.kept().iter().map(|&m| time_ns(m)).collect();
        notes.push(format!("unstable: medians {}", medians.join(" / ")));
    } else {
        notes.extend(
            process_notes(p)
                .into_iter()
                .filter_map(|n| n.split_once(':').map(|(head, _)| head.to_string()))
                .filter(|head| head != "first-run effect"),
        );
    }
    if levels::most_processes(settings).is_some() {
        notes.push(match levels::stopped(p, settings) {
            Some(stop) => format!("no more processes: {}", stop.explain()),
            None => "cut short before its processes were done".into(),
        });
    }
    let widest = levels.widest();
    let cell = |level: Level, text: String| {
        if level == widest {
            format!("<td><strong>{text}</strong></td>")
        } else {
            format!("<td>{text}</td>")
        }
    };
    Some(format!(
        "<tr data-level-row><td>{}</td><td>{}</td>{}{}{}<td>{}</td><td>{}</td></tr>\n",
        esc(&label(&p.result)),
        if levels.kept < levels.processes {
            format!("{} of {}", levels.kept, levels.processes)
        } else {
            levels.processes.to_string()
        },
        cell(Level::Within, pct(levels.within)),
        cell(Level::Processes, pct(levels.between)),
        cell(Level::Runs, runs),
        widest.as_str(),
        esc(&notes.join("; "))
    ))
}

/// The configurations of each run paired round by round (`report::paired`), one table per run
/// that has pairs measured in two rounds or more: the ratio, its interval from the rounds'
/// pairs and the unpaired one the same medians give.
fn pairs_tables(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut s = String::new();
    for (run, pooled) in runs.iter().zip(pooled) {
        let rows: String = paired::pairs(pooled)
            .iter()
            .filter(|p| p.paired.is_some())
            .map(|p| {
                format!(
                    "<tr data-pair-row><td>{}</td><td>{}={} / {}</td><td>{}</td><td>{}</td>\
                     <td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    esc(&p.configuration),
                    p.parameter,
                    p.b,
                    p.a,
                    sig3(p.ratio),
                    paired::range(p.paired),
                    paired::range(p.unpaired),
                    p.rounds,
                    p.in_one_process
                )
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "<p>Paired within {}: each round measured both configurations, in one process \
             taking their samples in turn or in two processes one after the other, so the \
             ratio of their medians round by round cancels what the host did in that round; \
             unpaired, the same medians as two independent sets.</p>\n\
             <table class=\"levels\" data-table=\"paired-run{}\"><thead><tr>\
             <th>configuration</th><th>b / a</th><th>ratio</th><th>paired 95%</th>\
             <th>unpaired 95%</th><th>rounds</th><th>in one process</th></tr></thead><tbody>\n{rows}</tbody></table>",
            run_name(run),
            run.id
        );
    }
    s
}

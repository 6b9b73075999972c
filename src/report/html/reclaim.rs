//! Reclaim: for each configuration that ran beside a memory load (`--suite reclaim`), what
//! page replacement did at each pressure level — bars of the pages scanned, stolen, activated,
//! refaulted and swapped out per sample — and a table with the time per access beside every
//! headline figure (`analysis::reclaim`).

use std::fmt::Write as _;

use crate::analysis::reclaim::{self, ReclaimFigures};
use crate::model::reclaim::HEADLINE;
use crate::model::{ExperimentResult, Run};
use crate::report::charts::{self, Bar, Scale, Unit, esc};
use crate::report::format::time_ns;
use crate::report::names::label;
use crate::report::pool::Pooled;
use crate::report::reclaim::{count, mark};

/// The figures drawn as bars, one series each.
const DRAWN: [&str; 5] = ["scanned", "stolen", "activated", "refaulted", "swapped out"];

/// One configuration at one pressure level.
struct Level<'a> {
    name: String,
    pooled: &'a Pooled,
    figures: ReclaimFigures,
}

/// The section, when a run counted reclaim.
pub(super) fn section(runs: &[Run], pooled: &[Vec<Pooled>]) -> String {
    let mut groups: Vec<(String, Vec<Level>)> = Vec::new();
    for (run, configurations) in runs.iter().zip(pooled) {
        for p in configurations {
            let Some(figures) = reclaim::figures(&p.result) else {
                continue;
            };
            let (base, level) = split(&p.result);
            let base = if runs.len() > 1 {
                format!("{base} (run {})", run.id)
            } else {
                base
            };
            let level = Level {
                name: level,
                pooled: p,
                figures,
            };
            match groups.iter_mut().find(|(b, _)| *b == base) {
                Some((_, levels)) => levels.push(level),
                None => groups.push((base, vec![level])),
            }
        }
    }
    if groups.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<section id=\"reclaim\">\n<h2>Reclaim</h2>\n<p class=\"metric-line\">What the \
         kernel's page replacement did beside a competitor for memory, per sample (one pass): \
         pages scanned, stolen (reclaimed), activated (found referenced and kept), refaulted \
         (evicted and needed again soon after: the sign of a wrong eviction) and swapped out, \
         from the experiment's memory cgroup where it counts them, else reclaim's own \
         tracepoints (<b>†</b> in the table: every reclaim on the machine, which beside a memory \
         load is the cgroup's), else the whole machine's /proc/vmstat (<b>*</b>). A bar at 0 is \
         not drawn.</p>\n<p>",
    );
    for (i, name) in DRAWN.iter().enumerate() {
        let _ = write!(s, "<span class=\"key s{i}\"></span> {name} ");
    }
    s.push_str("</p>\n");
    for (i, (base, levels)) in groups.iter().enumerate() {
        let _ = write!(
            s,
            "<figure class=\"reclaim\" data-metric=\"reclaim\"><figcaption>{}</figcaption>",
            esc(base)
        );
        s.push_str(&chart(&format!("reclaim-{i}"), base, levels));
        s.push_str(&table(levels));
        s.push_str("</figure>\n");
    }
    s.push_str("</section>\n");
    s
}

/// A suite configuration's name and its pressure level (`anonymous`, `headroom 0%, no swap`),
/// or the result's name and its load.
fn split(r: &ExperimentResult) -> (String, String) {
    if let Some((base, level)) = r.label.as_deref().and_then(|l| l.split_once(", headroom")) {
        return (
            format!("{} ({base})", r.experiment),
            format!("headroom{level}"),
        );
    }
    let load = r.load.as_ref().map_or("no load".into(), |l| l.kind.clone());
    (label(r), load)
}

fn chart(id: &str, title: &str, levels: &[Level]) -> String {
    let mut bars = Vec::new();
    for level in levels {
        for (k, name) in DRAWN.iter().enumerate() {
            let headline = level.figures.headline.iter().find(|h| h.name == *name);
            let value = headline.map(|h| h.per_sample).filter(|v| *v > 0.0);
            let text = headline.map_or("not counted".into(), |h| count(h.per_sample));
            bars.push(Bar {
                label: if k == 0 {
                    level.name.clone()
                } else {
                    String::new()
                },
                value,
                whisker: None,
                title: format!("{}: {name} {text} pages per sample", level.name),
                text,
                class: format!("s{k}"),
                dots: Vec::new(),
            });
        }
    }
    charts::hbars(
        id,
        &format!("{title}: reclaim per pressure level"),
        &bars,
        Scale::Log,
        Unit::Decimal,
        &count,
        charts::WIDTH,
    )
}

fn table(levels: &[Level]) -> String {
    let mut s = String::from("<table><thead><tr><th>pressure</th><th>time per access</th>");
    for (name, _) in HEADLINE {
        let _ = write!(s, "<th>{}</th>", esc(name));
    }
    s.push_str("<th>status</th></tr></thead><tbody>");
    for level in levels {
        let median = level.pooled.median().map_or("–".into(), time_ns);
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td>",
            esc(&level.name),
            esc(&median)
        );
        for (name, _) in HEADLINE {
            let cell = level
                .figures
                .headline
                .iter()
                .find(|h| h.name == *name)
                .map_or("–".into(), |h| {
                    format!("{}{}", count(h.per_sample), mark(h.from))
                });
            let _ = write!(s, "<td>{}</td>", esc(&cell));
        }
        let status = level.pooled.result.status.as_str();
        let _ = write!(s, "<td class=\"status {status}\">{status}</td></tr>");
    }
    s.push_str("</tbody></table>");
    s
}

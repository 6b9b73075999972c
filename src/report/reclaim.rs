//! The reclaim section of `show`: per configuration that ran in a memory cgroup, the time per
//! operation, and what the kernel's page replacement did over one sample — pages scanned,
//! stolen, activated, deactivated, refaulted, swapped out and in, major faults, OOM kills and
//! the time tasks stalled on memory (`analysis::reclaim`).

use serde_json::Value;

use crate::analysis::reclaim::{self, Change, ReclaimFigures};
use crate::model::Run;
use crate::report::format::{Align, Table, sig3, time_ns, wrap};
use crate::report::names::label;
use crate::report::pool::Pooled;

/// A count of pages or events, compact: `0`, `512`, `65.0k`, `1.25M`.
pub fn count(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        "–".into()
    } else if a >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// How a headline figure is marked by its source: none for the cgroup's, † for reclaim's
/// tracepoints, * for the machine's /proc/vmstat and PSI.
pub fn mark(from: &str) -> &'static str {
    if from.starts_with("vmscan.") {
        "†"
    } else if from.starts_with("vm.") {
        "*"
    } else {
        ""
    }
}

/// A headline figure's column header: short, so the table fits a terminal.
fn short(name: &str) -> &str {
    match name {
        "activated" => "activ.",
        "deactivated" => "deact.",
        "refaulted" => "refault",
        "swapped out" => "swap out",
        "swapped in" => "swap in",
        "major faults" => "majflt",
        "OOM kills" => "OOM",
        other => other,
    }
}

/// The text section; empty when no configuration counted reclaim.
pub fn section(pooled: &[Pooled]) -> String {
    let figured: Vec<(&Pooled, ReclaimFigures)> = pooled
        .iter()
        .filter_map(|p| reclaim::figures(&p.result).map(|f| (p, f)))
        .collect();
    if figured.is_empty() {
        return String::new();
    }
    let columns: Vec<&str> = crate::model::reclaim::HEADLINE
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| {
            figured
                .iter()
                .any(|(_, f)| f.headline.iter().any(|h| h.name == *name))
        })
        .collect();
    let mut header = vec![("configuration", Align::Left), ("median", Align::Right)];
    header.extend(columns.iter().map(|c| (short(c), Align::Right)));
    let mut table = Table::new(&header);
    let (mut machine_wide, mut traced) = (false, false);
    for (p, f) in &figured {
        let median = p.median().map_or("–".into(), time_ns);
        let mut row = vec![label(&p.result), median];
        for column in &columns {
            row.push(match f.headline.iter().find(|h| h.name == *column) {
                Some(h) => {
                    let mark = mark(h.from);
                    if mark == "*" {
                        machine_wide = true;
                    } else if !mark.is_empty() {
                        traced = true;
                    }
                    format!("{}{mark}", count(h.per_sample))
                }
                None => "–".into(),
            });
        }
        table.row(row);
    }
    let mut out = String::from("\nReclaim (what page replacement did, per sample)\n\n");
    let caption = format!(
        "Pages (stall: µs) per sample — one batch of operations, one pass of mmap.access — \
         over the timed samples, from the memory cgroup the experiment ran in (memory.stat){}{}. \
         Refaulted pages are evicted pages needed again soon after: the sign of a wrong \
         eviction. Activated pages were found referenced and kept; deactivated ones were moved \
         towards eviction.",
        if traced {
            "; † from reclaim's own tracepoints (vmscan: every reclaim on the machine, which \
             beside a memory load is the cgroup's)"
        } else {
            ""
        },
        if machine_wide {
            "; * the whole machine's (/proc/vmstat), where neither counts it"
        } else {
            ""
        }
    );
    out.push_str(&wrap(&caption, 96, "", ""));
    out.push_str("\n\n");
    out.push_str(&table.render(2));
    let mut said: Vec<String> = load_notes(&figured);
    for (_, f) in &figured {
        for (names, why) in &f.not_counted {
            let line = format!("not counted here: {}: {why}", names.join(", "));
            if !said.contains(&line) {
                said.push(line);
            }
        }
    }
    for line in said {
        out.push('\n');
        out.push_str(&wrap(&line, 96, "  ", "    "));
        out.push('\n');
    }
    out
}

/// The reclaim counters of two runs, B against A: for the patch workflow (a stock and a
/// patched kernel, `--suite reclaim` on each), what page replacement did differently. The
/// kernels are named first. Empty when the runs share no configuration with reclaim counters.
pub fn compare_section(a: &Run, b: &Run, noise: f64) -> String {
    let changes = reclaim::compare(a, b, noise, &|r| label(r));
    if changes.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\nReclaim (B against A: mean count per sample, Mann-Whitney p)\n\n");
    let kernel = |r: &Run| {
        r.environment
            .kernel_release
            .clone()
            .unwrap_or_else(|| "unknown".into())
    };
    let (ka, kb) = (kernel(a), kernel(b));
    out.push_str(&if ka == kb {
        format!("  same kernel in both: {ka}\n\n")
    } else {
        format!("  kernel A {ka}\n  kernel B {kb}\n\n")
    });
    let mut table = Table::new(&[
        ("configuration", Align::Left),
        ("counter", Align::Left),
        ("A", Align::Right),
        ("B", Align::Right),
        ("B/A", Align::Right),
        ("p", Align::Right),
        ("verdict", Align::Left),
    ]);
    let mut last = String::new();
    for c in &changes {
        let name = if c.configuration == last {
            String::new()
        } else {
            c.configuration.clone()
        };
        last = c.configuration.clone();
        table.row(vec![
            name,
            c.counter.clone(),
            count(c.a),
            count(c.b),
            c.ratio.map_or("from 0".into(), |r| format!("{}×", sig3(r))),
            c.p.map_or("–".into(), |p| format!("{p:.3}")),
            c.verdict.to_string(),
        ]);
    }
    out.push_str(&table.render(2));
    out.push_str(&wrap(
        "more/fewer: p under 0.05 and the means apart by more than the noise band. Counters \
         that were 0 in both runs are left out. A patch that reclaims referenced pages (the \
         PAGEREF_ACTIVATE case) shows as fewer activated, more stolen and more refaulted \
         pages: docs/reclaim.md.",
        96,
        "\n",
        "",
    ));
    out.push('\n');
    out
}

/// The same as JSON: one object per configuration and counter (`compare --json`'s `reclaim`).
pub fn compare_document(a: &Run, b: &Run, noise: f64) -> Value {
    let changes: Vec<Change> = reclaim::compare(a, b, noise, &|r| label(r));
    serde_json::to_value(changes).unwrap_or(Value::Null)
}

/// What the memory loads' records say that changes how a row reads: a competitor the OOM
/// killer took (the samples after that ran without its pressure), and no swap.
fn load_notes(figured: &[(&Pooled, ReclaimFigures)]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut without_swap = false;
    for (p, _) in figured {
        let Some(load) = &p.result.load else {
            continue;
        };
        let detail = |name: &str| {
            load.details
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        without_swap |=
            detail("swap").is_some_and(|s| s.starts_with("none") || s.contains("swap=off"));
        if let Some(end) = detail("competitor at the end").filter(|e| e.starts_with("OOM-killed")) {
            let when = end.split(':').next().unwrap_or(end);
            notes.push(format!(
                "{}: the competitor was {when}, so the samples after it ran without its \
                 pressure; the OOM killer fired inside the cgroup (Background load)",
                label(&p.result)
            ));
        }
    }
    if without_swap {
        notes.insert(
            0,
            "without swap (none on the machine, or swap=off) anonymous pages cannot be \
             reclaimed: only file pages are, an anonymous experiment's major faults stay 0, and \
             where it does not fit the OOM killer takes the competitor; --swap SIZE adds swap \
             for a run"
                .to_string(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_compact() {
        assert_eq!(count(0.0), "0");
        assert_eq!(count(512.0), "512");
        assert_eq!(count(2.5), "2.5");
        assert_eq!(count(65024.0), "65.0k");
        assert_eq!(count(1_250_000.0), "1.25M");
        assert_eq!(count(f64::NAN), "–");
    }
}

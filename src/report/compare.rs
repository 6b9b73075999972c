//! `oslab compare`: two runs side by side, as a table for people or a JSON document for
//! scripts (field names stable, see docs/compare.md). The figures come from
//! `analysis::compare`; this file only lays them out.

use serde_json::{Value, json};

use super::format::{Align, Table, per_op, time_ns};
use super::names::config_name;
use crate::analysis::compare::{Comparison, FieldDiff, Metric, Pair, RunComparison, Test, Verdict};

/// The comparison as text: what is compared, the environment and settings that differ (so the
/// reader sees first whether the comparison is fair), one row per experiment, the experiments
/// in one run only, and a count of the verdicts.
pub fn render(cmp: &RunComparison) -> String {
    // Two systems are said first: every row below reads differently then.
    let mut out = systems_line(cmp);
    out += &format!(
        "{}: {} per operation, {}, p at the CI's unit of replication, the smallest change it \
         could see; noise band ±{}%{}\n",
        sides(cmp),
        cmp.metric.name(),
        match cmp.run_sets {
            Some(_) =>
                "the geometric mean of each side's runs' medians, B/A with its 95% CI over the runs",
            None => "median of each, B/A with its 95% bootstrap CI",
        },
        (cmp.noise * 100.0 * 1e4).round() / 1e4,
        cmp.noise_reason
            .as_ref()
            .map_or(String::new(), |why| format!(" ({why})"))
    );
    out.push_str(&emulation_warning(cmp));
    out.push_str(&super::compare_host::kernel_canary_line(cmp));
    out.push('\n');
    out.push_str(&diff_section("Environment", &cmp.environment_diff));
    out.push('\n');
    out.push_str(&diff_section("Settings", &cmp.settings_diff));
    out.push('\n');

    out.push_str(&results_table(cmp));
    out.push_str(&unpaired(cmp));
    out.push_str(&footnotes(cmp));
    out.push_str(&summary_line(cmp));
    out.push('\n');
    out
}

/// What A and B are: a run each, or a set of runs each.
fn sides(cmp: &RunComparison) -> String {
    let list = |ids: &[i64]| {
        let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
        format!("runs {} ({})", ids.join(", "), ids.len())
    };
    match &cmp.run_sets {
        Some((a, b)) => format!("A = {}, B = {}", list(a), list(b)),
        None => format!("A = run {}, B = run {}", cmp.a_id, cmp.b_id),
    }
}

/// One line when one run was measured under user-mode emulation and the other was not: its
/// times are the emulator's, so a ratio of times compares an emulator with a CPU.
fn emulation_warning(cmp: &RunComparison) -> String {
    let Some(d) = cmp.environment_diff.iter().find(|d| d.field == "emulation") else {
        return String::new();
    };
    let (emulated, native) = match (&d.a, &d.b) {
        (Some(_), None) => (cmp.a_id, cmp.b_id),
        (None, Some(_)) => (cmp.b_id, cmp.a_id),
        _ => return String::new(),
    };
    format!(
        "warning: run {emulated} ran under user-mode emulation and run {native} natively: \
         run {emulated}'s times are the emulator's, not a CPU's, so B/A of time compares the two; \
         counts (--metric syscalls, minflt, …) still compare\n"
    )
}

/// One line when the runs are of two operating systems: which, and what ≠ marks.
pub(crate) fn systems_line(cmp: &RunComparison) -> String {
    let Some(systems) = &cmp.systems else {
        return String::new();
    };
    format!(
        "A ran on {}, B on {}: ≠ marks the experiments the two systems perform differently \
         (oslab's equivalence table, docs/os-support.md): their B/A compares two operations, \
         not two systems at one\n",
        os_title(&systems.a),
        os_title(&systems.b)
    )
}

/// `Linux`, `FreeBSD`… for an `Environment::os` name; an unknown name as it is.
pub(crate) fn os_title(name: &str) -> String {
    crate::model::Os::from_name(name).map_or_else(|| name.to_string(), |os| os.title().to_string())
}

/// The last column of a row: `!!` for a change of 1.5× or more, `≠` for an experiment the two
/// systems perform differently, `†` for a change the kernel canary made too or a side taken
/// wholly in a slow kernel phase of its host.
fn marks(pair: &Pair) -> String {
    let big = pair.comparison.as_ref().is_some_and(|c| c.highlight);
    let differs = pair.implementations.as_ref().is_some_and(|i| i.differs);
    let mut marks: Vec<&str> = Vec::new();
    if big {
        marks.push("!!");
    }
    if differs {
        marks.push("≠");
    }
    if super::compare_host::marked(pair) {
        marks.push("†");
    }
    match pair.partial {
        (true, true) => marks.push("A, B failed (partial)"),
        (true, false) => marks.push("A failed (partial)"),
        (false, true) => marks.push("B failed (partial)"),
        (false, false) => {}
    }
    marks.join(" ")
}

/// One row per configuration measured in both runs: A, B, B/A, its CI, p, the verdict.
fn results_table(cmp: &RunComparison) -> String {
    let mut out = String::new();
    let mut table = Table::new(&[
        ("experiment", Align::Left),
        ("A", Align::Right),
        ("B", Align::Right),
        ("B/A", Align::Right),
        ("95% CI", Align::Left),
        ("p", Align::Right),
        ("could see", Align::Right),
        ("verdict", Align::Left),
        ("", Align::Left),
    ]);
    for pair in &cmp.pairs {
        let name = config_name(&pair.experiment, pair.label.as_deref(), &pair.params);
        let row = match &pair.comparison {
            Some(c) => vec![
                name,
                value(&cmp.metric, c.a),
                value(&cmp.metric, c.b),
                ratio(c.ratio),
                c.ci.map_or("–".into(), |(lo, hi)| {
                    format!("{} – {}", ratio(lo), ratio(hi))
                }),
                c.p.map_or("–".into(), p_value),
                c.detectable.map_or("–".into(), detectable),
                c.verdict.as_str().into(),
                marks(pair),
            ],
            None => vec![
                name,
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                format!("{} not measured", cmp.metric.name()),
                marks(pair),
            ],
        };
        table.row(row);
    }
    if cmp.pairs.is_empty() {
        out.push_str("No experiment was measured in both runs.\n");
    } else {
        out.push_str(&table.render(0));
    }

    out
}

/// The configurations measured in one run only.
fn unpaired(cmp: &RunComparison) -> String {
    let mut out = String::new();
    for (side, label) in [("a", "A"), ("b", "B")] {
        let only: Vec<String> = cmp
            .unpaired
            .iter()
            .filter(|u| u.only_in == side)
            .map(|u| {
                let name = config_name(&u.experiment, u.label.as_deref(), &u.params);
                match u.other_status {
                    Some(status) => format!("{name} ({status} in the other)"),
                    None => name,
                }
            })
            .collect();
        if !only.is_empty() {
            out.push_str(&format!("\nOnly in {label}:\n"));
            for name in only {
                out.push_str(&format!("  {name}\n"));
            }
        }
    }

    out
}

/// What the p column and the CI rest on.
fn footnotes(cmp: &RunComparison) -> String {
    let mut out = String::new();
    let ratio_only = cmp
        .pairs
        .iter()
        .filter_map(|p| p.comparison.as_ref())
        .any(|c| c.p.is_none());
    out.push('\n');
    out.push_str(&implementation_notes(cmp));
    out.push_str(&super::compare_host::notes(cmp));
    if ratio_only {
        out.push_str(
            "p –: the metric was counted once over untimed batches, with no per-sample spread; \
             the verdict is the ratio against the noise band alone.\n",
        );
    }
    let several = cmp
        .pairs
        .iter()
        .any(|p| p.processes.0 > 1 || p.processes.1 > 1);
    if cmp.run_sets.is_some() {
        out.push_str(
            "Each side is a set of runs and each run's median one observation: B/A is the ratio \
             of the geometric means, its CI Welch's t over the logarithms of the runs' medians, \
             so a change must stand out of the spread between runs, the host's phases included; \
             p is that CI's own test (p < 0.05 exactly when it excludes 1). Configurations are \
             those the first run of each side measured.\n",
        );
        out.push_str(&tests_note(cmp));
        return out;
    }
    if several {
        out.push_str(
            "Where a run has several worker processes (--repeat; 3 by default), the CI resamples \
             them and then their samples, widened to Student's t over the process medians, so \
             the spread between processes counts.\n",
        );
    } else if !cmp.pairs.is_empty() {
        out.push_str(
            "Each side is one worker process: the CI shows the spread within it, not between \
             runs; runs measured with several processes (`oslab run`'s default of 3) make the \
             comparison robust to run-to-run noise.\n",
        );
    }
    out.push_str(&apart_note(cmp));
    out.push_str(&tests_note(cmp));
    out.push_str(&super::compare_floor::floor_note(cmp));
    out
}

/// The configurations with a process at a level of its own on a side
/// (`analysis::processes::apart`), which the CI's spread between processes leaves out.
fn apart_note(cmp: &RunComparison) -> String {
    let named: Vec<String> = cmp
        .pairs
        .iter()
        .flat_map(|p| {
            let name = config_name(&p.experiment, p.label.as_deref(), &p.params);
            [("A", p.apart.0), ("B", p.apart.1)]
                .into_iter()
                .filter_map(move |(side, m)| Some(format!("{name} in {side} ({})", time_ns(m?))))
        })
        .collect();
    if named.is_empty() {
        return String::new();
    }
    format!(
        "A process apart, at a level of its own among five or more (docs/measurement.md), counts \
         in its side's median but not in the spread between processes its CI rests on: {}.\n",
        named.join(", ")
    )
}

/// What the p column and the "could see" column rest on.
fn tests_note(cmp: &RunComparison) -> String {
    let tests: Vec<Test> = cmp
        .pairs
        .iter()
        .filter_map(|p| p.comparison.as_ref()?.test)
        .collect();
    let mut out = String::new();
    if tests.contains(&Test::Interval) && cmp.run_sets.is_none() {
        out.push_str(
            "p is the CI's own test where the processes (or earlier runs) are the unit of \
             replication: the log ratio over the CI's standard error, so p < 0.05 exactly when \
             the CI excludes 1; with one process a side, Mann-Whitney over its samples.\n",
        );
    }
    if cmp.pairs.iter().any(|p| p.comparison.is_some()) {
        out.push_str(
            "could see: the smallest change these runs could have called at the CI's width \
             and the noise band; \"no change\" says only that any change is smaller.\n",
        );
    }
    out
}

/// For each row marked ≠, how each system performs it.
fn implementation_notes(cmp: &RunComparison) -> String {
    let Some(systems) = &cmp.systems else {
        return String::new();
    };
    let mut out = String::new();
    for pair in &cmp.pairs {
        let Some(i) = pair.implementations.as_ref().filter(|i| i.differs) else {
            continue;
        };
        let name = config_name(&pair.experiment, pair.label.as_deref(), &pair.params);
        out.push_str(&format!(
            "≠ {name}: A ({}) {}; B ({}) {}\n",
            os_title(&systems.a),
            i.a,
            os_title(&systems.b),
            i.b
        ));
    }
    out
}

/// The widest value an environment or settings difference shows in the text table.
const MAX_VALUE_CHARS: usize = 60;

fn diff_section(what: &str, diff: &[FieldDiff]) -> String {
    if diff.is_empty() {
        return format!("{what}: no differences\n");
    }
    let mut out = format!("{what} differences:\n");
    let mut table = Table::new(&[
        ("field", Align::Left),
        ("A", Align::Left),
        ("B", Align::Left),
    ]);
    // A long value (a kernel command line, a counter's reason) is cut so the table stays a
    // table; `compare --json` keeps it whole.
    let shown = |v: &Option<String>| match v {
        None => "–".to_string(),
        Some(v) if v.chars().count() > MAX_VALUE_CHARS => {
            let cut: String = v.chars().take(MAX_VALUE_CHARS - 1).collect();
            format!("{}…", cut.trim_end())
        }
        Some(v) => v.clone(),
    };
    for d in diff {
        table.row(vec![d.field.clone(), shown(&d.a), shown(&d.b)]);
    }
    out.push_str(&table.render(2));
    out
}

fn summary_line(cmp: &RunComparison) -> String {
    let count = |v: Verdict| {
        cmp.pairs
            .iter()
            .filter(|p| p.comparison.as_ref().is_some_and(|c| c.verdict == v))
            .count()
    };
    let highlighted = cmp
        .pairs
        .iter()
        .filter(|p| p.comparison.as_ref().is_some_and(|c| c.highlight))
        .count();
    let differing = cmp
        .pairs
        .iter()
        .filter(|p| p.implementations.as_ref().is_some_and(|i| i.differs))
        .count();
    format!(
        "{} compared: {} slower, {} faster, {} no change, {} within noise{}{}",
        cmp.pairs.len(),
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::NoChange),
        count(Verdict::WithinNoise),
        if highlighted > 0 {
            format!("; !! marks {highlighted} change(s) of 1.5× or more")
        } else {
            String::new()
        },
        if differing > 0 {
            format!("; ≠ marks {differing} performed differently on the two systems")
        } else {
            String::new()
        }
    )
}

fn value(metric: &Metric, x: f64) -> String {
    match metric {
        Metric::Time => time_ns(x),
        _ => per_op(x),
    }
}

fn ratio(x: f64) -> String {
    if x.is_infinite() {
        "∞".into()
    } else if !x.is_finite() {
        "–".into()
    } else if x.abs() < 10.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1}")
    }
}

/// The smallest change the runs could have called, in percent.
pub fn detectable(x: f64) -> String {
    if x < 0.1 {
        format!("{:.1}%", x * 100.0)
    } else {
        format!("{:.0}%", x * 100.0)
    }
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// The comparison as one JSON document; see docs/compare.md.
pub fn document(cmp: &RunComparison) -> Value {
    let finite = |x: f64| x.is_finite().then_some(x);
    let results: Vec<Value> = cmp
        .pairs
        .iter()
        .map(|pair| {
            let c: Option<&Comparison> = pair.comparison.as_ref();
            let mut doc = json!({
                "experiment": pair.experiment,
                "params": pair.params,
                "processes": [pair.processes.0, pair.processes.1],
                "partial": [pair.partial.0, pair.partial.1],
                // Sets of runs floor nothing with earlier runs: null.
                "earlier_runs": pair.runs.is_none().then_some([pair.earlier_runs.0, pair.earlier_runs.1]),
                "unit": pair.unit,
                "a": c.and_then(|c| finite(c.a)),
                "b": c.and_then(|c| finite(c.b)),
                "ratio": c.and_then(|c| finite(c.ratio)),
                "ratio_ci_low": c.and_then(|c| c.ci).and_then(|ci| finite(ci.0)),
                "ratio_ci_high": c.and_then(|c| c.ci).and_then(|ci| finite(ci.1)),
                "p_value": c.and_then(|c| c.p),
                "p_test": c.and_then(|c| c.test),
                "detectable_change": c.and_then(|c| c.detectable).and_then(finite),
                "verdict": c.map(|c| c.verdict),
                "highlight": c.is_some_and(|c| c.highlight),
                "kernel_canaries": pair.kernel_canaries,
                // The text's `†` of a change the configuration's kernel canary made as well.
                "host_moved": super::compare_host::moved_with_host(pair).is_some(),
                // The text's other `†`: each side's kernel canary against its machine's
                // earlier runs' (how many times), where it took the configuration wholly in a
                // slow kernel phase; else null.
                "kernel_slower_than_earlier": [
                    pair.slow_run.0.map(|s| s.ratio()),
                    pair.slow_run.1.map(|s| s.ratio()),
                ],
                // A process at a level of its own on a side: its median, or null.
                "apart_process_medians": [pair.apart.0, pair.apart.1],
                // The earlier runs each side's floor rests on ({runs, lowest, highest}, or
                // null), and whether their spread, not the runs compared, set the CI's width.
                "earlier_range": [pair.earlier_range.0, pair.earlier_range.1],
                "ci_from_earlier_runs": pair.ci_from_earlier_runs,
                // Runs compared as sets: how many of each side's runs measured it; else null.
                "runs": pair.runs.map(|(a, b)| [a, b]),
            });
            if let Some(label) = &pair.label {
                doc["label"] = json!(label);
            }
            if let Some(i) = &pair.implementations {
                doc["implementation"] = json!(i);
            }
            doc
        })
        .collect();
    let only = |side: &str| -> Vec<Value> {
        cmp.unpaired
            .iter()
            .filter(|u| u.only_in == side)
            .map(|u| {
                let mut doc = json!({
                    "experiment": u.experiment,
                    "params": u.params,
                    "other_status": u.other_status,
                });
                if let Some(label) = &u.label {
                    doc["label"] = json!(label);
                }
                doc
            })
            .collect()
    };
    json!({
        "a_run_id": cmp.a_id,
        "b_run_id": cmp.b_id,
        "run_sets": cmp.run_sets.as_ref().map(|(a, b)| json!({"a": a, "b": b})),
        "metric": cmp.metric.name(),
        "noise": cmp.noise,
        "noise_reason": cmp.noise_reason,
        "systems": cmp.systems,
        "environment_diff": cmp.environment_diff,
        "settings_diff": cmp.settings_diff,
        "kernel_canaries": cmp.kernel_canaries,
        "results": results,
        "only_in_a": only("a"),
        "only_in_b": only("b"),
        "any_slower": cmp.any_slower(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_difference_is_cut_in_the_table() {
        let long = "x".repeat(300);
        let diff = [FieldDiff {
            field: "kernel_cmdline".into(),
            a: Some(long.clone()),
            b: None,
        }];
        let text = diff_section("Environment", &diff);
        assert!(!text.contains(&long), "{text}");
        assert!(text.contains(&format!("{}…", "x".repeat(MAX_VALUE_CHARS - 1))));
        assert!(
            text.lines()
                .all(|l| l.chars().count() < 2 * MAX_VALUE_CHARS)
        );
    }
}

//! The parts of `oslab show` after the ladder and the results: each repeated configuration's
//! processes, the figures measured besides the timed operation, the background loads.

use crate::model::{ExperimentResult, LoadRecord, RunSettings};
use crate::report::format::{Align, Table, sig3, time_ns, wrap};
use crate::report::levels::{self, Levels};
use crate::report::names::{is_partial, label, status_text};
use crate::report::pool::{Pooled, process_numbers};

/// The median of each worker process of every configuration measured by more than one
/// (`run --repeat`), beside the pooled median the tables show, and the levels of its interval
/// (`report::levels`); in a run that added processes as it went, why each got no more.
pub(super) fn processes(pooled: &[Pooled], settings: &RunSettings) -> String {
    let repeated: Vec<&Pooled> = pooled.iter().filter(|p| p.processes > 1).collect();
    if repeated.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nPer worker process (the median of each; the tables above pool them), and where the \
         interval's width comes from: the half-width each level alone gives it (within a \
         process: more samples narrow it; between processes: more processes; between runs: \
         only a quieter machine)\n\n",
    );
    let adaptive = levels::most_processes(settings).is_some();
    let mut columns = vec![
        ("experiment", Align::Left),
        ("pooled", Align::Right),
        ("processes", Align::Left),
        ("within", Align::Right),
        ("between", Align::Right),
        ("runs", Align::Right),
        ("widest", Align::Left),
    ];
    if adaptive {
        columns.push(("stopped adding", Align::Left));
    }
    let mut table = Table::new(&columns);
    for p in repeated {
        let medians = p.process_medians();
        let several = p.on_several_cpus();
        let apart = p.spread.as_ref().and_then(|s| s.apart);
        let mut processes = medians
            .iter()
            .zip(p.process_cpus.iter().chain(std::iter::repeat(&None)))
            .enumerate()
            .map(|(i, (&m, cpu))| {
                let mut marks: Vec<String> = Vec::new();
                if let Some(cpu) = cpu.filter(|_| several) {
                    marks.push(format!("CPU {cpu}"));
                }
                if apart == Some(i) {
                    marks.push("apart".into());
                }
                match marks.is_empty() {
                    true => time_ns(m),
                    false => format!("{} ({})", time_ns(m), marks.join(", ")),
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        if !p.left_out_medians.is_empty() {
            let slow: Vec<String> = p.left_out_medians.iter().map(|&m| time_ns(m)).collect();
            processes.push_str(&format!(
                "; left out, wholly in a slow kernel phase: {}",
                slow.join(", ")
            ));
        }
        if is_partial(&p.result) {
            processes.push_str(&format!(" — {}", status_text(&p.result)));
        }
        let levels = Levels::of(p);
        let level = |pick: fn(&Levels) -> Option<f64>| {
            levels
                .as_ref()
                .and_then(pick)
                .map_or("–".into(), Levels::percent)
        };
        let mut row = vec![
            label(&p.result),
            p.figures().stats.map_or("–".into(), |s| time_ns(s.median)),
            processes,
            level(|l| Some(l.within)),
            level(|l| Some(l.between)),
            level(|l| l.runs.map(|(r, _)| r)),
            levels
                .as_ref()
                .map_or("–".into(), |l| l.widest().as_str().into()),
        ];
        if adaptive {
            row.push(stopped_text(p, settings));
        }
        table.row(row);
    }
    out.push_str(&table.render(2));
    out
}

/// Why a configuration of an adaptive run got no more processes, with how many it had.
fn stopped_text(p: &Pooled, settings: &RunSettings) -> String {
    let n = p.processes;
    match levels::stopped(p, settings) {
        Some(stop) => format!("{n}: {}", stop.explain()),
        None => format!("{n}: cut short"),
    }
}

/// The figures experiments measured besides their timed operation (`Routine::facts`).
pub(super) fn facts(results: &[ExperimentResult]) -> String {
    let with: Vec<&ExperimentResult> = results.iter().filter(|r| !r.facts.is_empty()).collect();
    if with.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nOther figures (measured besides the timed operation)\n");
    for r in with {
        out.push_str(&format!("\n  {}\n", label(r)));
        let mut table = Table::new(&[
            ("figure", Align::Left),
            ("value", Align::Right),
            ("unit", Align::Left),
            ("how", Align::Left),
        ]);
        for fact in &r.facts {
            table.row(vec![
                fact.name.clone(),
                if fact.value.is_finite() {
                    sig3(fact.value)
                } else {
                    "–".into()
                },
                fact.unit.clone(),
                fact.note.clone(),
            ]);
        }
        out.push_str(&table.render(4));
    }
    out
}

/// What each background load recorded (`--load`, or a suite configuration's own load).
pub(super) fn loads(results: &[ExperimentResult]) -> String {
    let with: Vec<(&ExperimentResult, &LoadRecord, (usize, usize))> = results
        .iter()
        .zip(process_numbers(results))
        .filter_map(|(r, k)| r.load.as_ref().map(|l| (r, l, k)))
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nBackground load\n");
    for (r, load, (k, n)) in with {
        let process = if n > 1 {
            format!(" (process {k} of {n})")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "\n  {}{process} beside load `{}`\n",
            label(r),
            load.kind
        ));
        for (name, value) in &load.details {
            out.push_str(&wrap(&format!("{name}: {value}"), 96, "    ", "      "));
            out.push('\n');
        }
    }
    out
}

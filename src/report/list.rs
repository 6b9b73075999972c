//! `oslab list` (the experiments) and `oslab show --list` (the stored runs).

use serde_json::{Value, json};

use crate::experiment::selection::SUITES;
use crate::experiment::{Batch, ExperimentInfo, ParamKind, REGISTRY};
use crate::model::{Os, equivalence};
use crate::report::format::{Align, Table};
use crate::store::RunSummary;

fn kind_text(kind: &ParamKind) -> String {
    match kind {
        ParamKind::Int { min, max } => format!("integer {min}..{max}"),
        ParamKind::Size { min, max } => format!(
            "size {}..{}",
            crate::experiment::params::format_size(*min),
            crate::experiment::params::format_size(*max)
        ),
        ParamKind::Choice(words) => words.join("|"),
        ParamKind::Path => "path".into(),
    }
}

/// The systems `e` runs on, each followed by its mechanism where that is not Linux's:
/// `linux, freebsd, macos (libc)`.
fn systems_text(e: &ExperimentInfo) -> String {
    let linux = e.cells.linux.how();
    let named: Vec<String> = e
        .os()
        .into_iter()
        .map(|os| match e.cells.cell(os).how() {
            Some(how) if os != Os::Linux && Some(how) != linux => format!("{os} ({how})"),
            _ => os.name().to_string(),
        })
        .collect();
    named.join(", ")
}

/// Per system, how `e` is performed there or why it is not (the equivalence table).
fn implementations(e: &ExperimentInfo) -> Value {
    let row = &e.cells;
    let cells: serde_json::Map<String, Value> = equivalence::SYSTEMS
        .iter()
        .map(|&os| {
            let cell = match row.cell(os) {
                equivalence::Cell::Runs { how, note } => json!({"how": how, "note": note}),
                equivalence::Cell::No(why) => json!({"unavailable": why}),
            };
            (os.name().to_string(), cell)
        })
        .collect();
    Value::Object(cells)
}

pub fn render() -> String {
    let mut out = String::new();
    let mut family = "";
    for e in REGISTRY.iter() {
        if e.family() != family {
            family = e.family();
            out.push_str(&format!("\n{family}\n"));
        }
        let hidden = if e.default_suite {
            ""
        } else {
            "  (not in the default suite)"
        };
        out.push_str(&format!("  {}  — {}{hidden}\n", e.name, e.summary));
        let syscalls = crate::analysis::trace::claims::describe(&e.default_claims());
        let os = systems_text(e);
        out.push_str(&format!(
            "      one op: {} · path: {} · system calls: {syscalls} · empty loop {} · runs on {}\n",
            e.op,
            e.path,
            if e.subtract_loop_overhead {
                "subtracted"
            } else {
                "not subtracted"
            },
            os
        ));
        if !e.params.is_empty() {
            let mut t = Table::new(&[
                ("param", Align::Left),
                ("default", Align::Left),
                ("accepts", Align::Left),
                ("", Align::Left),
            ]);
            for p in e.params {
                t.row(vec![
                    p.name.into(),
                    default_text(e, p.name, p.default),
                    kind_text(&p.kind),
                    p.help.into(),
                ]);
            }
            let rendered = t.render(6);
            // Drop the header row: the columns speak for themselves under the experiment.
            out.extend(rendered.lines().skip(1).map(|l| format!("{l}\n")));
        }
    }
    out.push_str("\nsuites\n");
    for suite in SUITES {
        out.push_str(&format!("  {}  — {}\n", suite.name, suite.summary));
        for c in suite.configs {
            let params: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!(
                "      {:<36} {} {}{}\n",
                c.label,
                c.experiment,
                params.join(" "),
                c.load.map_or(String::new(), |l| format!(" · load {l}"))
            ));
        }
    }
    out.push_str(
        "\nRun one with `oslab run NAME`, a family with `oslab run FAMILY`, a suite with \
         `oslab run --suite NAME`; set a parameter with --param NAME=VALUE, or sweep it with \
         --param NAME=A,B,C. The system calls are those one op makes at the defaults (some \
         parameters change them: `oslab trace --experiment NAME --param NAME=VALUE` shows and \
         checks them).\n",
    );
    out
}

/// A parameter's default as `oslab run` uses it: the values it sweeps by default, and the
/// value `--quick` uses instead.
fn default_text(e: &ExperimentInfo, name: &str, default: &str) -> String {
    if let Some((_, values)) = e.sweep.iter().find(|(n, _)| *n == name) {
        return format!("swept: {}", values.join(","));
    }
    match e.quick_params.iter().find(|(n, _)| *n == name) {
        Some((_, quick)) => format!("{default} (quick: {quick})"),
        None => default.to_string(),
    }
}

pub fn info_json(e: &ExperimentInfo) -> Value {
    json!({
        "name": e.name,
        "family": e.family(),
        "summary": e.summary,
        "op": e.op,
        "unit": e.unit(),
        "path": e.path,
        "syscalls": e.default_claims().iter().map(|c| c.syscall).collect::<Vec<_>>(),
        "os": e.os(),
        "implementations": implementations(e),
        "subtract_loop_overhead": e.subtract_loop_overhead,
        "default_suite": e.default_suite,
        "ladder": e.ladder,
        "counters_in_samples": e.counters_in_samples,
        "batch": match e.batch {
            Batch::Sized => "sized",
            Batch::Fixed(_) => "fixed",
        },
        "params": e.params.iter().map(|p| json!({
            "name": p.name, "default": p.default, "accepts": kind_text(&p.kind), "help": p.help,
            "sweep": e.sweep.iter().find(|(n, _)| *n == p.name).map(|(_, v)| v),
            "quick": e.quick_params.iter().find(|(n, _)| *n == p.name).map(|(_, v)| v),
        })).collect::<Vec<_>>(),
    })
}

pub fn runs(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "no runs stored yet; `oslab run` makes one\n".into();
    }
    let mut t = Table::new(&[
        ("run", Align::Right),
        ("started (UTC)", Align::Left),
        ("results", Align::Right),
        ("tag", Align::Left),
        ("host", Align::Left),
        ("kernel", Align::Left),
    ]);
    for r in runs {
        t.row(vec![
            r.id.to_string(),
            format!(
                "{}{}",
                crate::report::format::utc(r.started_at),
                if r.finished_at.is_none() {
                    " (interrupted)"
                } else {
                    ""
                }
            ),
            r.results.to_string(),
            r.tag.clone().unwrap_or_default(),
            r.hostname.clone().unwrap_or_default(),
            r.kernel_release.clone().unwrap_or_default(),
        ]);
    }
    t.render(0)
}

#[cfg(test)]
mod tests {

    #[test]
    fn list_names_every_experiment() {
        let text = super::render();
        for e in crate::experiment::REGISTRY.iter() {
            assert!(text.contains(e.name), "{}", e.name);
        }
    }
}

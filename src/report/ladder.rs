//! A run as text: the cost ladder (every measured operation by median cost, each as a
//! multiple of a function call and of the rung below it), what the counters saw per
//! operation, and every warning next to the result it concerns.

use crate::analysis::result::{ResultFigures, figures};
use crate::experiment;
use crate::model::{ExperimentResult, Run, Status};
use crate::report::format::{Align, Table, per_op, sig3, time_ns, time_range_ns, times, wrap};

/// The baseline every rung is compared with.
const BASELINE: &str = "syscall.function_call";

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    out.push_str(&heading(run));
    let figured: Vec<(&ExperimentResult, ResultFigures)> =
        run.results.iter().map(|r| (r, figures(r))).collect();

    let mut measured: Vec<&(&ExperimentResult, ResultFigures)> =
        figured.iter().filter(|(_, f)| f.stats.is_some()).collect();
    measured.sort_by(|a, b| median(&a.1).total_cmp(&median(&b.1)));
    let baseline = figured
        .iter()
        .find(|(r, f)| r.experiment == BASELINE && f.stats.is_some() && r.status != Status::Failed)
        .map(|(_, f)| median(f));

    if !measured.is_empty() {
        out.push_str(
            "\nCost ladder (time per operation: median and its 95% confidence interval)\n\n",
        );
        let mut table = Table::new(&[
            ("experiment", Align::Left),
            ("per", Align::Left),
            ("median", Align::Right),
            ("95% CI", Align::Right),
            ("× call", Align::Right),
            ("× prev", Align::Right),
            ("samples", Align::Right),
            ("status", Align::Left),
        ]);
        let mut previous: Option<f64> = None;
        for (r, f) in &measured {
            let m = median(f);
            let ci = f.ci.map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, m));
            table.row(vec![
                label(r),
                op_of(r),
                time_ns(m),
                ci,
                baseline.map_or("–".into(), |b| times(m / b)),
                previous.map_or("".into(), |p| times(m / p)),
                r.samples.len().to_string(),
                r.status.as_str().to_string(),
            ]);
            previous = Some(m);
        }
        out.push_str(&table.render(2));
    }

    out.push_str(&counter_table(&measured));
    out.push_str(&notes(&figured));
    out
}

fn median(f: &ResultFigures) -> f64 {
    f.stats.as_ref().map_or(f64::NAN, |s| s.median)
}

/// The experiment name with any parameter that differs from its default.
fn label(r: &ExperimentResult) -> String {
    let Some(info) = experiment::find(&r.experiment) else {
        return r.experiment.clone();
    };
    let changed: Vec<String> = r
        .params
        .iter()
        .filter(|(k, v)| info.param(k).is_none_or(|p| p.default != v.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if changed.is_empty() {
        r.experiment.clone()
    } else {
        format!("{} {}", r.experiment, changed.join(" "))
    }
}

fn op_of(r: &ExperimentResult) -> String {
    r.unit.strip_prefix("ns/").unwrap_or(&r.unit).to_string()
}

fn heading(run: &Run) -> String {
    let env = &run.environment;
    let cpu = env.cpu_model.as_deref().unwrap_or("unknown CPU");
    let kernel = env.kernel_release.as_deref().unwrap_or("unknown kernel");
    let virt = env
        .virtualization
        .as_deref()
        .map(|v| format!(", {v}"))
        .unwrap_or_default();
    let clock = match run.clock.tsc_hz {
        Some(hz) => format!("TSC at {:.3} GHz", hz / 1e9),
        None => run.clock.source.clone(),
    };
    let os = match env.os.as_str() {
        "linux" => "Linux",
        "freebsd" => "FreeBSD",
        "macos" => "macOS",
        other => other,
    };
    let distro = env
        .os_release
        .as_deref()
        .map(|d| format!("; {d}"))
        .unwrap_or_default();
    let cpus = env
        .logical_cpus
        .map(|n| format!(", {n} CPUs"))
        .unwrap_or_default();
    let mut s = format!(
        "oslab run {}{} — {cpu}{cpus}{virt}; {os} {kernel}{distro}\n",
        run.id,
        run.tag
            .as_deref()
            .map(|t| format!(" [{t}]"))
            .unwrap_or_default(),
    );
    let load = run
        .settings
        .load
        .as_deref()
        .map(|l| format!("; --load {l}"))
        .unwrap_or_default();
    s.push_str(&format!(
        "clock {clock} (read pair {}, resolution {}); pinned to CPU {}{load}; precision target ±{}% per median{}\n",
        time_ns(run.clock.overhead_ns),
        time_ns(run.clock.resolution_ns),
        crate::measure::cpu::format_list(&run.settings.cpus),
        sig3(run.settings.precision * 100.0),
        if run.settings.quick { " (--quick)" } else { "" },
    ));
    if run.finished_at.is_none() {
        s.push_str("this run was interrupted: the results below are the experiments it finished\n");
    }
    s
}

/// Columns worth showing: counters some result could read, in a fixed order.
const COUNTER_COLUMNS: &[(&str, &str)] = &[
    ("syscalls", "syscalls"),
    ("cycles", "cycles"),
    ("instructions", "instr"),
    ("L1-dcache-load-misses", "L1D ld miss"),
    ("dTLB-load-misses", "dTLB ld miss"),
];

fn counter_table(measured: &[&(&ExperimentResult, ResultFigures)]) -> String {
    if measured.is_empty() {
        return String::new();
    }
    let columns: Vec<&(&str, &str)> = COUNTER_COLUMNS
        .iter()
        .filter(|(name, _)| {
            measured
                .iter()
                .any(|(_, f)| f.counters.get(*name).is_some_and(|c| c.per_op.is_some()))
        })
        .collect();
    let mut header = vec![("experiment", Align::Left)];
    header.extend(columns.iter().map(|(_, h)| (*h, Align::Right)));
    header.extend([
        ("faults", Align::Right),
        ("vol sw", Align::Right),
        ("sys %", Align::Right),
        ("preempted", Align::Right),
    ]);
    let mut table = Table::new(&header);
    for (r, f) in measured {
        let mut row = vec![label(r)];
        for (name, _) in &columns {
            row.push(
                f.counters
                    .get(*name)
                    .and_then(|c| c.per_op)
                    .map_or("–".into(), per_op),
            );
        }
        let rate = |field: &str| f.rusage.get(field).copied().unwrap_or(0.0);
        row.push(per_op(rate("minflt") + rate("majflt")));
        row.push(per_op(rate("nvcsw")));
        let (u, s) = (rate("utime_us"), rate("stime_us"));
        row.push(if u + s > 0.0 {
            format!("{:.0}", 100.0 * s / (u + s))
        } else {
            "–".into()
        });
        row.push(format!(
            "{}/{}",
            f.contamination.samples_preempted,
            r.samples.len()
        ));
        table.row(row);
    }
    let caption = "What the counters saw, per operation. Faults and switches come from getrusage \
                   over the timed samples; sys % is the system share of CPU time; preempted counts \
                   samples with an involuntary switch; syscalls were counted in untimed batches \
                   after the samples, because the tracepoint slows every system call.";
    format!("\n{}\n\n{}", wrap(caption, 96, "", ""), table.render(2))
}

fn notes(figured: &[(&ExperimentResult, ResultFigures)]) -> String {
    let mut lines = Vec::new();
    for (r, _) in figured {
        match r.status {
            Status::Ok => {}
            Status::Suspect | Status::Failed | Status::Unsupported => {
                let text = format!(
                    "{} {}: {}",
                    label(r),
                    r.status.as_str(),
                    r.reason.as_deref().unwrap_or("no reason recorded")
                );
                lines.push(wrap(&text, 96, "  ", "    "));
            }
        }
    }
    // Counters that could not be read, said once with their reason.
    let mut unsupported: Vec<(String, String)> = Vec::new();
    for (r, _) in figured {
        for c in r.counters.iter().filter(|c| !c.supported) {
            let reason = c.reason.clone().unwrap_or_default();
            match unsupported.iter_mut().find(|(_, why)| *why == reason) {
                Some((names, _)) if !names.split(", ").any(|n| n == c.name) => {
                    names.push_str(", ");
                    names.push_str(&c.name);
                }
                Some(_) => {}
                None => unsupported.push((c.name.clone(), reason)),
            }
        }
    }
    for (names, why) in unsupported {
        lines.push(wrap(
            &format!("unsupported here: {names}: {why}"),
            96,
            "  ",
            "    ",
        ));
    }
    if lines.is_empty() {
        String::new()
    } else {
        format!("\nNotes\n\n{}\n", lines.join("\n"))
    }
}

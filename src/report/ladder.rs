//! A run as text: the cost ladder (the headline operations by median cost, each as a
//! multiple of a function call and of the rung below it, with figures derived from two
//! results), the other results by family, what the counters saw per operation, and every
//! warning next to the result it concerns.

use crate::analysis::bootstrap::two_sample_ci;
use crate::analysis::result::{CI_RESAMPLES, CI_SEED, ResultFigures};
use crate::experiment;
use crate::model::{ExperimentResult, Run, Status};
use crate::report::format::{Align, Table, per_op, sig3, time_ns, time_range_ns, times, wrap};
use crate::report::pool::pool;
use crate::report::show_sections as sections;

/// The baseline every rung is compared with.
const BASELINE: &str = "syscall.function_call";

/// A figure derived from two results of the same run: `(minuend − subtrahend) / divisor`, each
/// taken at its default parameters.
struct Derived {
    label: &'static str,
    /// What the figure means and where the classic tools' numbers sit beside it.
    explain: &'static str,
    per: &'static str,
    minuend: &'static str,
    subtrahend: &'static str,
    divisor: f64,
}

/// The decomposition of a context switch (issue "one number per switch, explained"): a pipe
/// round trip is two switches plus the pipe reads and writes, which `pipe_noswitch` measures
/// without any switch; what remains, halved, is the cost of one switch.
const DERIVED: &[Derived] = &[Derived {
    label: "ctxswitch.pipe − pipe_noswitch, ÷ 2",
    explain: "one switch: a pipe round trip is two switches plus four pipe calls, which \
              pipe_noswitch times without switching. lmbench's lat_ctx reports this remainder; \
              perf bench sched pipe reports the whole round trip, and tools that halve it count \
              the pipe calls as switching.",
    per: "switch",
    minuend: "ctxswitch.pipe",
    subtrahend: "ctxswitch.pipe_noswitch",
    divisor: 2.0,
}];

/// One line of the ladder.
pub struct Rung {
    pub label: String,
    pub per: String,
    pub median: f64,
    pub ci: Option<(f64, f64)>,
    pub samples: String,
    pub status: String,
    /// The median of each worker process the figure pools (`run --repeat`; empty for one
    /// process and for derived rungs).
    pub processes: Vec<f64>,
}

/// The rungs of the cost ladder, cheapest first (headline results plus the derived figures),
/// the function-call baseline's median when the run has it, and the explanation of every
/// derived rung shown: what the terminal ladder shows, for other presenters (the HTML report).
pub struct Ladder {
    pub rungs: Vec<Rung>,
    pub baseline: Option<f64>,
    pub explanations: Vec<(&'static str, &'static str)>,
}

pub fn ladder(run: &Run) -> Ladder {
    let pooled = pool(&run.results);
    let figured: Vec<(&ExperimentResult, ResultFigures)> =
        pooled.iter().map(|p| (&p.result, p.figures())).collect();
    let mut l = ladder_of(&figured);
    for rung in &mut l.rungs {
        if let Some(p) = pooled.iter().find(|p| label(&p.result) == rung.label)
            && p.processes > 1
        {
            rung.processes = p.process_medians();
        }
    }
    l
}

fn ladder_of(figured: &[(&ExperimentResult, ResultFigures)]) -> Ladder {
    let baseline = figured
        .iter()
        .find(|(r, f)| r.experiment == BASELINE && f.stats.is_some() && r.status != Status::Failed)
        .map(|(_, f)| median(f));
    let mut rungs: Vec<Rung> = figured
        .iter()
        .filter(|(r, f)| f.stats.is_some() && on_the_ladder(r))
        .map(|(r, f)| Rung {
            label: label(r),
            per: op_of(r),
            median: median(f),
            ci: f.ci,
            samples: r.samples.len().to_string(),
            status: r.status.as_str().to_string(),
            processes: Vec::new(),
        })
        .collect();
    // The same order as the measured results: by median, ties in run order.
    rungs.sort_by(|a, b| a.median.total_cmp(&b.median));
    let derived = derived_rungs(figured);
    let explanations = derived
        .iter()
        .filter_map(|r| DERIVED.iter().find(|d| d.label == r.label))
        .map(|d| (d.label, d.explain))
        .collect();
    rungs.extend(derived);
    rungs.sort_by(|a, b| a.median.total_cmp(&b.median));
    Ladder {
        rungs,
        baseline,
        explanations,
    }
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    out.push_str(&heading(run));
    let pooled = pool(&run.results);
    let processes = pooled.iter().map(|p| p.processes).max().unwrap_or(1);
    if processes > 1 {
        out.push_str(&format!(
            "processes: each row pools the {processes} worker processes that measured it, each \
             with its own memory layout (--repeat); its interval covers the spread between them\n"
        ));
    }
    let figured: Vec<(&ExperimentResult, ResultFigures)> =
        pooled.iter().map(|p| (&p.result, p.figures())).collect();
    let merged: Vec<ExperimentResult> = pooled.iter().map(|p| p.result.clone()).collect();
    let process_notes: Vec<String> = pooled
        .iter()
        .flat_map(|p| {
            p.process_notes()
                .into_iter()
                .map(|n| format!("{} {n}", label(&p.result)))
        })
        .collect();

    let mut measured: Vec<&(&ExperimentResult, ResultFigures)> =
        figured.iter().filter(|(_, f)| f.stats.is_some()).collect();
    measured.sort_by(|a, b| median(&a.1).total_cmp(&median(&b.1)));

    let others: Vec<&(&ExperimentResult, ResultFigures)> = measured
        .iter()
        .copied()
        .filter(|(r, _)| !on_the_ladder(r))
        .collect();
    let Ladder {
        rungs,
        baseline,
        explanations,
    } = ladder_of(&figured);
    let explanations: Vec<String> = explanations
        .iter()
        .map(|(label, explain)| wrap(&format!("{label}: {explain}"), 96, "  ", "    "))
        .collect();

    if !rungs.is_empty() {
        out.push_str(
            "\nCost ladder (time per operation: median and its 95% confidence interval)\n\n",
        );
        out.push_str(&ladder_table(&rungs, baseline));
        for text in &explanations {
            out.push('\n');
            out.push_str(text);
            out.push('\n');
        }
    }
    out.push_str(&other_results(&others, baseline));
    out.push_str(&sections::processes(&pooled));
    out.push_str(&counter_table(&measured));
    out.push_str(&sections::facts(&merged));
    out.push_str(&sections::loads(&run.results));
    out.push_str(&notes(&figured, &process_notes));
    out
}

/// Headline experiments, and any experiment this build does not know (an imported run).
fn on_the_ladder(r: &ExperimentResult) -> bool {
    experiment::find(&r.experiment).is_none_or(|info| info.ladder)
}

fn ladder_table(rungs: &[Rung], baseline: Option<f64>) -> String {
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
    for rung in rungs {
        let m = rung.median;
        table.row(vec![
            rung.label.clone(),
            rung.per.clone(),
            time_ns(m),
            rung.ci
                .map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, m)),
            baseline.map_or("–".into(), |b| times(m / b)),
            previous.map_or("".into(), |p| times(m / p)),
            rung.samples.clone(),
            rung.status.clone(),
        ]);
        previous = Some(m);
    }
    table.render(2)
}

/// Rungs computed from two results at their default parameters, with a two-sample bootstrap
/// CI of the difference of medians.
fn derived_rungs(figured: &[(&ExperimentResult, ResultFigures)]) -> Vec<Rung> {
    let at_defaults = |name: &str| {
        figured.iter().find(|(r, f)| {
            r.experiment == name
                && label(r) == r.experiment
                && f.stats.is_some()
                && r.status != Status::Failed
        })
    };
    DERIVED
        .iter()
        .filter_map(|d| {
            let (a, fa) = at_defaults(d.minuend)?;
            let (b, fb) = at_defaults(d.subtrahend)?;
            let xs: Vec<f64> = a.samples.iter().map(|s| s.ns_per_op).collect();
            let ys: Vec<f64> = b.samples.iter().map(|s| s.ns_per_op).collect();
            let divisor = d.divisor;
            let combine = move |x: f64, y: f64| (x - y) / divisor;
            let judged = if a.status == Status::Ok && b.status == Status::Ok {
                "derived"
            } else {
                "derived, suspect"
            };
            Some(Rung {
                label: d.label.to_string(),
                per: d.per.to_string(),
                median: combine(median(fa), median(fb)),
                ci: two_sample_ci(&xs, &ys, combine, 0.95, CI_RESAMPLES, CI_SEED),
                samples: format!("{}+{}", xs.len(), ys.len()),
                status: judged.to_string(),
                processes: Vec::new(),
            })
        })
        .collect()
}

/// Results that are not headline figures, by family, in the order they ran.
fn other_results(others: &[&(&ExperimentResult, ResultFigures)], baseline: Option<f64>) -> String {
    if others.is_empty() {
        return String::new();
    }
    let mut ordered: Vec<&(&ExperimentResult, ResultFigures)> = others.to_vec();
    ordered.sort_by_key(|(r, _)| {
        experiment::REGISTRY
            .iter()
            .position(|e| e.name == r.experiment)
    });
    let mut out = String::from("\nOther results (time per operation)\n");
    let mut family = "";
    let mut table: Option<Table> = None;
    for (r, f) in ordered {
        let this_family = r
            .experiment
            .split_once('.')
            .map_or(r.experiment.as_str(), |(f, _)| f);
        if this_family != family {
            if let Some(t) = table.take() {
                out.push_str(&t.render(2));
            }
            family = this_family;
            out.push_str(&format!("\n  {family}\n"));
            table = Some(Table::new(&[
                ("experiment", Align::Left),
                ("per", Align::Left),
                ("median", Align::Right),
                ("95% CI", Align::Right),
                ("× call", Align::Right),
                ("samples", Align::Right),
                ("status", Align::Left),
            ]));
        }
        let m = median(f);
        if let Some(t) = table.as_mut() {
            t.row(vec![
                label(r),
                op_of(r),
                time_ns(m),
                f.ci.map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, m)),
                baseline.map_or("–".into(), |b| times(m / b)),
                r.samples.len().to_string(),
                r.status.as_str().to_string(),
            ]);
        }
    }
    if let Some(t) = table {
        out.push_str(&t.render(2));
    }
    out
}

fn median(f: &ResultFigures) -> f64 {
    f.stats.as_ref().map_or(f64::NAN, |s| s.median)
}

/// The experiment name with the suite's name for its configuration, or with any parameter
/// that differs from its default or that the experiment sweeps (`thp=off` and `thp=on`
/// both say which they are).
pub fn label(r: &ExperimentResult) -> String {
    label_of(&r.experiment, &r.params, r.label.as_deref())
}

/// [`label`] from its parts, for a run not measured yet (the progress line).
pub fn label_of(
    experiment: &str,
    params: &std::collections::BTreeMap<String, String>,
    suite_label: Option<&str>,
) -> String {
    if let Some(config) = suite_label {
        return format!("{experiment} ({config})");
    }
    let Some(info) = experiment::find(experiment) else {
        return experiment.to_string();
    };
    let changed: Vec<String> = params
        .iter()
        .filter(|(k, v)| {
            info.param(k).is_none_or(|p| p.default != v.as_str())
                || info.sweep.iter().any(|(swept, _)| swept == k)
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if changed.is_empty() {
        experiment.to_string()
    } else {
        format!("{experiment} {}", changed.join(" "))
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
        "clock {clock} (read pair {}, resolution {}); {}{load}; precision target ±{}% per median{}\n",
        time_ns(run.clock.overhead_ns),
        time_ns(run.clock.resolution_ns),
        pinning(&run.settings),
        sig3(run.settings.precision * 100.0),
        if run.settings.quick { " (--quick)" } else { "" },
    ));
    match (&run.settings.dir, &run.settings.dir_mount) {
        (Some(dir), Some(mount)) => s.push_str(&format!("files in {dir}: {mount}\n")),
        (Some(dir), None) => s.push_str(&format!("files in {dir}\n")),
        _ => {}
    }
    if run.finished_at.is_none() {
        s.push_str("this run was interrupted: the results below are the experiments it finished\n");
    }
    s
}

/// Columns worth showing: counters some result could read, in a fixed order.
const COUNTER_COLUMNS: &[(&str, &str)] = &[
    ("syscalls", "syscalls"),
    ("tasks", "tasks"),
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
    let with_partner = measured.iter().any(|(_, f)| f.partner.is_some());
    let with_children = measured.iter().any(|(_, f)| f.children.is_some());
    header.extend([("faults", Align::Right), ("switches v+i", Align::Right)]);
    if with_partner {
        header.push(("partner v+i", Align::Right));
    }
    if with_children {
        header.push(("child faults", Align::Right));
    }
    header.extend([("sys %", Align::Right), ("preempted", Align::Right)]);
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
        row.push(format!(
            "{}+{}",
            per_op(rate("nvcsw")),
            per_op(rate("nivcsw"))
        ));
        let other = |figures: &Option<std::collections::BTreeMap<String, f64>>, fields: &[&str]| {
            figures.as_ref().map_or("–".to_string(), |m| {
                per_op(
                    fields
                        .iter()
                        .map(|k| m.get(*k).copied().unwrap_or(0.0))
                        .sum(),
                )
            })
        };
        if with_partner {
            row.push(match &f.partner {
                Some(_) => format!(
                    "{}+{}",
                    other(&f.partner, &["nvcsw"]),
                    other(&f.partner, &["nivcsw"])
                ),
                None => "–".into(),
            });
        }
        if with_children {
            row.push(other(&f.children, &["minflt", "majflt"]));
        }
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
                   over the timed samples (a partner process's from the proc file system, \
                   reaped children's from RUSAGE_CHILDREN); switches are \
                   voluntary+involuntary; sys % is the system share of CPU time; preempted counts samples with an involuntary switch (part \
                   of the operation in a same-CPU ping-pong, contamination elsewhere); syscalls \
                   and tasks were counted in untimed batches after the samples, because the \
                   tracepoints slow every system call.";
    format!("\n{}\n\n{}", wrap(caption, 96, "", ""), table.render(2))
}

/// Where the workers ran: one CPU, or the CPUs the processes took in turn.
fn pinning(settings: &crate::model::RunSettings) -> String {
    let list: Vec<String> = settings.cpu_turns.iter().map(|c| c.to_string()).collect();
    match list.len() {
        0 => format!(
            "pinned to CPU {}",
            crate::platform::cpu::format_list(&settings.cpus)
        ),
        _ => format!("processes pinned to CPUs {} in turn", list.join(", ")),
    }
}

/// The notes under the tables: results that are not ok, what the processes showed
/// (`process_notes`, already labelled), and counters that could not be read.
fn notes(figured: &[(&ExperimentResult, ResultFigures)], process_notes: &[String]) -> String {
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
    for note in process_notes {
        lines.push(wrap(note, 96, "  ", "    "));
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

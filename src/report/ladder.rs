//! A run as text: the cost ladder (the headline operations by median cost, each as a
//! multiple of a function call and of the rung below it, with figures derived from two
//! results), the other results by family, what the counters saw per operation, and every
//! warning next to the result it concerns.

use crate::analysis::bootstrap::two_sample_ci;
use crate::analysis::processes::{difference_between_interval, hull, rerun_interval};
use crate::analysis::result::{CI_RESAMPLES, CI_SEED, ResultFigures};
use crate::experiment;
use crate::model::reclaim;
use crate::model::{ExperimentResult, Run, Status};
use crate::report::env_table::pinning;
use crate::report::format::{Align, Table, rerun_cell, sig3, time_ns, times, wrap};
use crate::report::names::status_text;
pub use crate::report::names::{label, label_of};
use crate::report::pool::{Pooled, pool, process_notes};
use crate::report::show_sections as sections;

mod counters;
pub mod paths;
#[cfg(test)]
mod tests;

use counters::counter_table;
use paths::{Paths, Place};

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
    /// The processes' medians when they differ by more than 2× (`ResultFigures::unstable`).
    pub unstable: Option<Vec<f64>>,
    pub samples: String,
    pub status: String,
    /// The median of each worker process the figure pools (`run --repeat`; empty for one
    /// process and for derived rungs).
    pub processes: Vec<f64>,
    /// The medians of the processes the figure leaves out, taken wholly in a slow kernel phase
    /// (`Pooled::left_out_medians`; empty for derived rungs).
    pub left_out: Vec<f64>,
    /// The same operation on the other paths into the kernel, and the gap.
    pub paths: Paths,
}

/// The rungs of the cost ladder, cheapest first (headline results plus the derived figures),
/// the function-call baseline's median when the run has it, and the explanation of every
/// derived rung shown: what the terminal ladder shows, for other presenters (the HTML report).
pub struct Ladder {
    pub rungs: Vec<Rung>,
    pub baseline: Option<f64>,
    pub explanations: Vec<(&'static str, &'static str)>,
    /// The state of the CPU mitigations that make the called path dearer (`paths`).
    pub mitigations: Vec<(String, String)>,
}

impl Ladder {
    /// Some rung was measured on both the called and the inline path.
    pub fn has_gap(&self) -> bool {
        self.rungs.iter().any(|r| r.paths.gap.is_some())
    }

    /// Some rung was measured through libc's wrapper too.
    pub fn has_libc(&self) -> bool {
        self.rungs.iter().any(|r| r.paths.libc.is_some())
    }
}

pub fn ladder(run: &Run) -> Ladder {
    let pooled = pool(&run.results);
    let figured = figures_of(&pooled);
    let mut l = ladder_of(&pooled, &figured);
    l.mitigations = paths::mitigations(&run.environment);
    l
}

/// Each pooled configuration's result with its figures (`Pooled::figures`), in order.
fn figures_of(pooled: &[Pooled]) -> Vec<(&ExperimentResult, ResultFigures)> {
    pooled.iter().map(|p| (&p.result, p.figures())).collect()
}

/// The ladder of `pooled`, whose figures are `figured` (from [`figures_of`], same order).
fn ladder_of(pooled: &[Pooled], figured: &[(&ExperimentResult, ResultFigures)]) -> Ladder {
    let baseline = figured
        .iter()
        .find(|(r, f)| r.experiment == BASELINE && f.stats.is_some() && r.status != Status::Failed)
        .map(|(_, f)| median(f));
    let on: Vec<(&ExperimentResult, &ResultFigures)> = figured
        .iter()
        .filter(|(r, f)| f.stats.is_some() && on_the_ladder(r))
        .map(|(r, f)| (*r, f))
        .collect();
    let places = paths::arrange(&on);
    let joined_to: Vec<Option<usize>> = places
        .iter()
        .map(|p| match p {
            Place::Joined(c) => Some(*c),
            Place::Rung(_) => None,
        })
        .collect();
    // The results shown on another's rung (its inline and libc paths), by that rung's index.
    let joined = |i: usize| {
        joined_to
            .iter()
            .zip(&on)
            .filter(move |(to, _)| **to == Some(i))
            .map(|(_, (r, _))| *r)
    };
    // The pooled configuration a result belongs to.
    let pooled_of = |r: &ExperimentResult| pooled.iter().find(|p| p.is_of(r));
    let mut rungs: Vec<Rung> = on
        .iter()
        .zip(places)
        .enumerate()
        .filter_map(|(i, ((r, f), place))| match place {
            Place::Joined(_) => None,
            Place::Rung(paths) => Some(Rung {
                label: rung_label(r, &paths),
                per: op_of(r),
                median: median(f),
                ci: f.ci,
                unstable: f.unstable.clone(),
                samples: r.samples.len().to_string(),
                status: rung_status(r, joined(i)),
                processes: pooled_of(r)
                    .filter(|p| p.processes > 1)
                    .map(Pooled::process_medians)
                    .unwrap_or_default(),
                left_out: pooled_of(r)
                    .map(|p| p.left_out_medians.clone())
                    .unwrap_or_default(),
                paths,
            }),
        })
        .collect();
    // The same order as the measured results: by median, ties in run order.
    rungs.sort_by(|a, b| a.median.total_cmp(&b.median));
    let derived = derived_rungs(pooled, figured);
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
        mitigations: Vec::new(),
    }
}

/// A called-path rung that has other paths beside it is named without its `entry`; any other
/// rung by its full label.
fn rung_label(r: &ExperimentResult, paths: &Paths) -> String {
    if *paths == Paths::default() {
        return label(r);
    }
    let mut params = r.params.clone();
    params.remove(paths::ENTRY);
    label_of(&r.experiment, &params, r.label.as_deref())
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    out.push_str(&heading(run));
    let pooled = pool(&run.results);
    if let Some(line) = crate::report::levels::processes_line(&run.settings, &pooled) {
        out.push_str(&line);
    }
    let figured = figures_of(&pooled);
    let merged: Vec<ExperimentResult> = pooled.iter().map(|p| p.result.clone()).collect();
    let process_notes: Vec<String> = pooled
        .iter()
        .flat_map(|p| {
            process_notes(p)
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
    let mut ladder = ladder_of(&pooled, &figured);
    ladder.mitigations = paths::mitigations(&run.environment);
    let explanations: Vec<String> = ladder
        .explanations
        .iter()
        .map(|(label, explain)| wrap(&format!("{label}: {explain}"), 96, "  ", "    "))
        .collect();
    if !ladder.rungs.is_empty() {
        out.push_str(
            "\nCost ladder (time per operation: median, and where a rerun's median falls, 95%)\n\n",
        );
        out.push_str(&ladder_table(&ladder));
        let footer = paths::footer(ladder.has_gap(), &ladder.mitigations);
        if !footer.is_empty() {
            out.push('\n');
            out.push_str(&footer);
        }
        for text in &explanations {
            out.push('\n');
            out.push_str(text);
            out.push('\n');
        }
    }
    out.push_str(&other_results(&others, ladder.baseline));
    out.push_str(&crate::report::scaling::section(run));
    #[cfg(unix)]
    out.push_str(&crate::report::peers::filemicro::render(&pooled));
    out.push_str(&crate::report::peers::unixbench::section(&pooled));
    out.push_str(&sections::processes(&pooled, &run.settings));
    out.push_str(&crate::report::paired::section(&pooled));
    out.push_str(&counter_table(&measured));
    out.push_str(&sections::facts(&merged));
    out.push_str(&crate::report::reclaim::section(&pooled));
    out.push_str(&sections::loads(&run.results));
    out.push_str(&crate::report::host::section(&pooled));
    out.push_str(&notes(&figured, &process_notes));
    out
}

/// Headline experiments, and any experiment this build does not know (an imported run).
/// A rung's status: its result's, then that of each path shown on it that is not ok (an
/// interrupted inline path's figure is partial: `ok; inline failed (partial)`).
fn rung_status<'a>(
    r: &ExperimentResult,
    joined: impl Iterator<Item = &'a ExperimentResult>,
) -> String {
    let mut status = status_text(r);
    for j in joined.filter(|j| j.status != Status::Ok) {
        let path = j.params.get("entry").map_or("other path", String::as_str);
        status.push_str(&format!("; {path} {}", status_text(j)));
    }
    status
}

fn on_the_ladder(r: &ExperimentResult) -> bool {
    experiment::find(&r.experiment).is_none_or(|info| info.ladder)
}

fn ladder_table(ladder: &Ladder) -> String {
    let (gap, libc) = (ladder.has_gap(), ladder.has_libc());
    let mut header = vec![
        ("experiment", Align::Left),
        ("per", Align::Left),
        ("median", Align::Right),
        ("rerun 95%", Align::Right),
    ];
    if gap {
        header.extend([("inline", Align::Right), ("call − inline", Align::Right)]);
    }
    if libc {
        header.push(("libc", Align::Right));
    }
    header.extend([
        ("× call", Align::Right),
        ("× prev", Align::Right),
        ("samples", Align::Right),
        ("status", Align::Left),
    ]);
    let mut table = Table::new(&header);
    let mut previous: Option<f64> = None;
    for rung in &ladder.rungs {
        let m = rung.median;
        let mut row = vec![
            rung.label.clone(),
            rung.per.clone(),
            time_ns(m),
            rerun_cell(rung.ci, rung.unstable.as_deref(), m),
        ];
        let or_dash = |v: Option<String>| v.unwrap_or_else(|| "–".into());
        if gap {
            row.push(or_dash(rung.paths.inline.map(time_ns)));
            let inline = rung.paths.inline.unwrap_or(f64::NAN);
            row.push(or_dash(
                rung.paths.gap.as_ref().map(|g| g.text_with(inline)),
            ));
        }
        if libc {
            row.push(or_dash(rung.paths.libc.map(time_ns)));
        }
        row.extend([
            ladder.baseline.map_or("–".into(), |b| times(m / b)),
            previous.map_or("".into(), |p| times(m / p)),
            rung.samples.clone(),
            rung.status.clone(),
        ]);
        table.row(row);
        previous = Some(m);
    }
    table.render(2)
}

/// Rungs computed from two results at their default parameters. The CI of the difference of
/// medians is the two-sample bootstrap over the samples, widened, where the results pool
/// several processes, to Welch's t interval over the two sides' process medians
/// (`analysis::processes::difference_between_interval`): the samples of one process are not
/// independent of each other, so the spread between processes bounds the difference too.
/// Like a measured rung's, the interval shown is where a rerun's difference falls
/// (`analysis::processes::rerun_interval`, without earlier runs: their medians need not pair).
fn derived_rungs(pooled: &[Pooled], figured: &[(&ExperimentResult, ResultFigures)]) -> Vec<Rung> {
    let at_defaults = |name: &str| {
        pooled.iter().zip(figured).find(|(_, (r, f))| {
            r.experiment == name
                && label(r) == r.experiment
                && f.stats.is_some()
                && r.status != Status::Failed
        })
    };
    DERIVED
        .iter()
        .filter_map(|d| {
            let (pa, (a, fa)) = at_defaults(d.minuend)?;
            let (pb, (b, fb)) = at_defaults(d.subtrahend)?;
            let xs: Vec<f64> = a.samples.iter().map(|s| s.ns_per_op).collect();
            let ys: Vec<f64> = b.samples.iter().map(|s| s.ns_per_op).collect();
            let divisor = d.divisor;
            let combine = move |x: f64, y: f64| (x - y) / divisor;
            let judged = if a.status == Status::Ok && b.status == Status::Ok {
                "derived"
            } else {
                "derived, suspect"
            };
            let center = combine(median(fa), median(fb));
            let between = difference_between_interval(center, &pa.kept(), &pb.kept(), divisor);
            Some(Rung {
                label: d.label.to_string(),
                per: d.per.to_string(),
                median: center,
                ci: two_sample_ci(&xs, &ys, combine, 0.95, CI_RESAMPLES, CI_SEED).map(|ci| {
                    let processes = pa.kept().len().min(pb.kept().len());
                    rerun_interval(center, hull(ci, between), processes, &[])
                }),
                unstable: None,
                samples: format!("{}+{}", xs.len(), ys.len()),
                status: judged.to_string(),
                processes: Vec::new(),
                left_out: Vec::new(),
                paths: Paths::default(),
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
                ("rerun 95%", Align::Right),
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
                rerun_cell(f.ci, f.unstable.as_deref(), m),
                baseline.map_or("–".into(), |b| times(m / b)),
                r.samples.len().to_string(),
                status_text(r),
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
    let virt = match &env.emulation {
        Some(e) => format!("{virt}; EMULATED: {e}"),
        None => virt,
    };
    let clock = run.clock.describe();
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
        pinning(&run.settings, &run.environment),
        sig3(run.settings.precision * 100.0),
        if run.settings.quick { " (--quick)" } else { "" },
    ));
    if let (Some(why), [cpu], true) = (
        &run.settings.cpu_choice,
        run.settings.cpus.as_slice(),
        run.settings.cpu_turns.is_empty(),
    ) {
        s.push_str(&format!("CPU {cpu}: {why}\n"));
    }
    match (&run.settings.dir, &run.settings.dir_mount) {
        (Some(dir), Some(mount)) => s.push_str(&format!("files in {dir}: {mount}\n")),
        (Some(dir), None) => s.push_str(&format!("files in {dir}\n")),
        _ => {}
    }
    if run.finished_at.is_none() {
        s.push_str(
            "this run was interrupted: the results below are the experiments it finished, and \
             the one it was measuring, `failed (partial)` with the samples it had\n",
        );
    }
    s
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
        // The reclaim counters' absences are said in their own section.
        let perf = r.counters.iter().filter(|c| !reclaim::is_reclaim(&c.name));
        for c in perf.filter(|c| !c.supported) {
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

//! `oslab profile`: measure and profile (`run`'s options, plus the sampler's), or draw stored
//! profiles again, or the differential flame graphs between two stored runs.

use super::*;
use crate::model::ExperimentResult;
use crate::model::profile::{Profile, ProfileRequest};
use crate::report::flame;
use crate::report::profile as tables;

/// The longest `--seconds`: a profile pass is a sample of where time goes, not a benchmark.
const MAX_SECONDS: f64 = 60.0;

/// `--frequency` and `--seconds` checked.
pub(super) fn request(args: &ProfileArgs) -> Result<ProfileRequest, UserError> {
    let max_rate = crate::platform::stacks::max_sample_rate();
    if args.frequency == 0 || max_rate.is_some_and(|m| args.frequency > m) {
        return Err(UserError::BadOption(format!(
            "--frequency {}: give samples per second from 1 to {} (kernel.perf_event_max_sample_rate)",
            args.frequency,
            max_rate.map_or("the kernel's limit".to_string(), |m| m.to_string())
        )));
    }
    let seconds = args
        .seconds
        .unwrap_or(if args.run.quick { 0.3 } else { 1.0 });
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECONDS) {
        return Err(UserError::BadOption(format!(
            "--seconds {seconds}: give seconds between 0 and {MAX_SECONDS}"
        )));
    }
    Ok(ProfileRequest {
        frequency_hz: args.frequency,
        seconds,
    })
}

pub(super) fn profile(db: Option<PathBuf>, args: ProfileArgs) -> Result<ExitCode> {
    // The names first: `--runs 1 2 3` leaves `3` as an experiment name.
    experiment::select(&args.run.targets)?;
    match args.runs.as_slice() {
        [] => measure_and_profile(db, &args),
        [one] => {
            let run = only(
                Source::open(db, None)?.resolve(Some(one))?,
                &args.run.targets,
            )?;
            if tables::profiled(&run).is_empty() {
                return Err(UserError::BadOption(format!(
                    "run {} has no profiles{}: `oslab profile EXPERIMENT` measures and profiles \
                     (`oslab run` does not); `oslab show --list` lists the runs",
                    run.id,
                    if args.run.targets.is_empty() {
                        String::new()
                    } else {
                        format!(" of {}", args.run.targets.join(", "))
                    }
                ))
                .into());
            }
            present(&run, &args)?;
            Ok(ExitCode::SUCCESS)
        }
        [a, b] => differential(db, a, b, &args),
        _ => unreachable!("clap takes one or two runs"),
    }
}

fn measure_and_profile(db: Option<PathBuf>, args: &ProfileArgs) -> Result<ExitCode> {
    let request = request(args)?;
    // Asked for by name: a profile that cannot be taken is the command's failure, said
    // before anything is measured.
    crate::platform::stacks::check_sampling(request.frequency_hz).map_err(|e| {
        let why = crate::platform::stacks::refusal(&e);
        UserError::BadOption(format!("cannot profile here: {why}"))
    })?;
    let measured = run::measure(db, &args.run, Some(request))?;
    present(&measured.run, args)?;
    Ok(measured.conclude())
}

/// Print a run's profiles and write their flame graphs.
fn present(run: &Run, args: &ProfileArgs) -> Result<()> {
    let profiled = tables::profiled(run);
    let mut written = Vec::new();
    if !profiled.is_empty() {
        create_dir(&args.output)?;
    }
    for p in &profiled {
        let name = report::names::label(p.result);
        let subtitle = format!(
            "run {} · {} samples of {} at {} Hz",
            run.id,
            p.profile.samples(),
            p.profile.event,
            p.profile.frequency_hz
        );
        match flame::svg(p.profile, &name, &subtitle, None) {
            Ok(svg) => {
                let path = args.output.join(flame::file_name(&name, ""));
                write_file(&path, &svg)?;
                written.push(path);
            }
            Err(why) => crate::say!("oslab: {name}: no flame graph: {why}"),
        }
    }
    let text = if args.run.json {
        let mut doc = tables::json(run);
        doc["flame_graphs"] = serde_json::json!(written);
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        tables::render(run)
    };
    write_stdout(&text)?;
    for path in &written {
        crate::say!("flame graph: {}", path.display());
    }
    Ok(())
}

fn differential(db: Option<PathBuf>, a: &str, b: &str, args: &ProfileArgs) -> Result<ExitCode> {
    let mut source = Source::open(db, None)?;
    let a = only(source.resolve(Some(a))?, &args.run.targets)?;
    let b = only(source.resolve(Some(b))?, &args.run.targets)?;
    let diffs = Differential::of(&a, &b, &args.output)?;
    let text = if args.run.json {
        let doc = serde_json::json!({"a": a.id, "b": b.id, "configurations": diffs.rows});
        serde_json::to_string_pretty(&doc)? + "\n"
    } else {
        diffs.text
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The differential flame graphs of two runs, written, with their tables of moved functions.
pub(super) struct Differential {
    pub(super) text: String,
    pub(super) rows: Vec<serde_json::Value>,
}

impl Differential {
    /// Draw B against A for every configuration both profiled, into `dir`; runs with no
    /// profiled configuration in common are the user's mistake, said before anything is written.
    pub(super) fn of(a: &Run, b: &Run, dir: &std::path::Path) -> Result<Differential> {
        let pairs = pairs(a, b);
        if pairs.is_empty() {
            return Err(UserError::BadOption(format!(
                "runs {} and {} have no profiled configuration in common; profile the same \
                 experiments in both (`oslab profile EXPERIMENT`)",
                a.id, b.id
            ))
            .into());
        }
        create_dir(dir)?;
        let mut text = String::new();
        let mut rows = Vec::new();
        for (ra, pa, pb) in &pairs {
            let name = report::names::label(ra);
            let title = format!("{name}: run {} → run {}", a.id, b.id);
            let subtitle = format!(
                "red: a larger share in run {} · blue: a smaller one · {} and {} samples",
                b.id,
                pa.samples(),
                pb.samples()
            );
            let svg = flame::diff_svg(pa, pb, &title, &subtitle)
                .map_err(|e| UserError::BadOption(e.to_string()))?;
            let file = dir.join(flame::file_name(&name, "-diff"));
            write_file(&file, &svg)?;
            text.push_str(&format!("{title}\n"));
            text.push_str(&tables::changes_table(pa, pb).render(2));
            text.push('\n');
            rows.push(serde_json::json!({
                "label": name,
                "experiment": ra.experiment,
                "params": ra.params,
                "flame_graph": file,
                "functions": tables::changes_json(pa, pb),
            }));
            crate::say!("differential flame graph: {}", file.display());
        }
        Ok(Differential { text, rows })
    }
}

/// The configurations profiled in both runs, with a result of A and the two profiles.
fn pairs<'a>(a: &'a Run, b: &'a Run) -> Vec<(&'a ExperimentResult, &'a Profile, &'a Profile)> {
    let in_b = tables::profiled(b);
    tables::profiled(a)
        .into_iter()
        .filter_map(|pa| {
            let pb = in_b.iter().find(|pb| pb.pooled.is_of(pa.result))?;
            Some((pa.result, pa.profile, pb.profile))
        })
        .collect()
}

/// `run` with only the results of the experiments `targets` names (all without targets).
fn only(mut run: Run, targets: &[String]) -> Result<Run> {
    if targets.is_empty() {
        return Ok(run);
    }
    let chosen = experiment::select(targets)?;
    run.results
        .retain(|r| chosen.iter().any(|e| e.name == r.experiment));
    Ok(run)
}

fn create_dir(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| UserError::output(dir.display().to_string(), &e).into())
}

//! `oslab run`: the options checked and turned into a plan, the experiments run in fresh workers, each result stored as it finishes, the run printed.

use super::*;

pub(super) fn run(db: Option<PathBuf>, args: RunArgs) -> Result<ExitCode> {
    let given: Vec<(String, String)> = args
        .params
        .iter()
        .map(|p| parse_assignment(p))
        .collect::<Result<_, _>>()?;
    let jobs: Vec<Planned> = match &args.suite {
        Some(name) => {
            if !args.targets.is_empty() {
                return Err(UserError::BadOption(format!(
                    "--suite {name} names its own experiments; drop {} or the --suite",
                    args.targets.join(" ")
                ))
                .into());
            }
            let suite = plan::find_suite(name).ok_or_else(|| {
                UserError::BadOption(format!(
                    "--suite {name}: no such suite; there is {}",
                    plan::SUITES
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            check_param_names(&given, &planned_infos(suite))?;
            plan::expand_suite(suite, &given, args.quick)?
        }
        None => {
            let selected = experiment::select(&args.targets)?;
            check_param_names(&given, &selected)?;
            plan::expand(&selected, &given, args.quick)?
        }
    };

    let mut sampler = if args.quick {
        SamplerConfig::quick()
    } else {
        SamplerConfig::standard()
    };
    if let Some(p) = &args.precision {
        sampler.precision = parse_precision(p)?;
    }
    if let Some(b) = args.budget {
        if !(b.is_finite() && b > 0.0 && b <= 3600.0) {
            return Err(UserError::BadOption(format!(
                "--budget {b}: give seconds between 0 and 3600"
            ))
            .into());
        }
        sampler.budget_s = b;
        sampler.min_time_s = sampler.min_time_s.min(b);
    }
    let timeout = match args.timeout {
        Some(t) if t.is_finite() && t > 0.0 => Duration::from_secs_f64(t),
        Some(t) => {
            return Err(UserError::BadOption(format!(
                "--timeout {t}: give a positive number of seconds"
            ))
            .into());
        }
        None => Plan::default_timeout(&sampler),
    };
    if args.repeat == 0 || args.repeat > 1000 {
        return Err(UserError::BadOption("--repeat takes a number from 1 to 1000".into()).into());
    }
    let cpus = choose_cpus(args.cpu.as_deref())?;
    let dir = check_dir(args.dir.as_deref(), &jobs)?;
    let other_cpu = other_cpu(&cpus);
    let load = match args.load.as_deref() {
        None => None,
        Some(text) => Some(Load::parse(text).ok_or_else(|| {
            UserError::BadOption(format!("--load {text}: give cpu, cpu:all or memory"))
        })?),
    };

    let path = db_path(db)?;
    let mut store = Store::open(&path)?;

    let (clock, reason) = clock::choose(match args.clock {
        ClockArg::Auto => ClockChoice::Auto,
        ClockArg::Tsc => ClockChoice::Tsc,
        ClockArg::Monotonic => ClockChoice::Monotonic,
    });
    if args.clock == ClockArg::Tsc && clock.name() != "tsc" {
        return Err(
            UserError::BadOption(format!("--clock tsc: {reason}; use --clock auto")).into(),
        );
    }
    let clock_info = clock.info(reason);

    let mut environment = crate::platform::env::collect();
    environment.counters = counters::probe();

    let mut run = Run {
        id: 0,
        started_at: runner::unix_now(),
        finished_at: None,
        tag: args.tag.clone(),
        oslab_version: env!("CARGO_PKG_VERSION").to_string(),
        settings: RunSettings {
            quick: args.quick,
            precision: sampler.precision,
            budget_s: sampler.budget_s,
            min_time_s: sampler.min_time_s,
            timeout_s: timeout.as_secs_f64(),
            cpus: cpus.clone(),
            load: load.as_ref().map(|l| l.name().to_string()),
            dir: jobs
                .iter()
                .any(|j| j.info.work_dir)
                .then(|| dir.display().to_string()),
            dir_mount: jobs
                .iter()
                .any(|j| j.info.work_dir)
                .then(|| crate::platform::mount::mount_of(&dir))
                .and_then(Result::ok)
                .map(|m| {
                    format!(
                        "{} on {} at {} ({})",
                        m.fstype, m.source, m.mount_point, m.options
                    )
                }),
            argv: std::env::args().collect(),
        },
        clock: clock_info.clone(),
        environment,
        results: Vec::new(),
    };
    let run_id = store.begin_run(&run)?;
    run.id = run_id;

    let plan = Plan {
        dir: dir.clone(),
        other_cpu,
        load,
        sampler,
        cpus,
        clock: clock_info,
        timeout,
        stretch_timeout: args.timeout.is_none(),
    };
    let total = jobs.len() * args.repeat as usize;
    let mut done = 0;
    let mut progress =
        report::progress::Progress::new(std::io::stderr().is_terminal(), plan.sampler.precision);
    crate::platform::interrupt::install();
    'runs: for _ in 0..args.repeat {
        for job in &jobs {
            if crate::platform::interrupt::requested().is_some() {
                break 'runs;
            }
            done += 1;
            let name =
                report::ladder::label_of(job.info.name, job.params.as_map(), job.label.as_deref());
            progress.start(format!("[{done}/{total}] {name}"));
            let result =
                runner::run_experiment(job, &plan, &mut |samples| progress.sample(samples));
            store.add_result(run_id, &result)?;
            progress.finish(&format!("[{done}/{total}] {}", progress_line(&result)));
        }
    }
    let interrupted = crate::platform::interrupt::requested();
    if interrupted.is_none() {
        store.finish_run(run_id, runner::unix_now())?;
    }

    // Present what was stored, exactly as `show` would.
    let stored = store.load_run(run_id)?;
    print_run(&stored, args.json)?;
    eprintln!("stored as run {run_id} in {}", path.display());
    if let Some(signal) = interrupted {
        eprintln!(
            "oslab: interrupted by {}: the run keeps the experiments it finished",
            crate::platform::interrupt::signal_name(signal)
        );
        return Ok(ExitCode::from(130));
    }
    Ok(exit_code(&stored))
}

/// The experiments of a suite, each once.
pub(super) fn planned_infos(suite: &plan::Suite) -> Vec<&'static ExperimentInfo> {
    let mut infos: Vec<&'static ExperimentInfo> = Vec::new();
    for config in suite.configs {
        if let Some(info) = experiment::find(config.experiment)
            && !infos.iter().any(|i| i.name == info.name)
        {
            infos.push(info);
        }
    }
    infos
}

/// Every `--param` name must belong to some selected experiment.
pub(super) fn check_param_names(
    given: &[(String, String)],
    selected: &[&'static ExperimentInfo],
) -> Result<(), UserError> {
    for (name, _) in given {
        if !selected.iter().any(|e| e.param(name).is_some()) {
            return Err(UserError::UnknownParam {
                name: name.clone(),
                hint: param_hint(selected),
            });
        }
    }
    Ok(())
}

pub(super) fn progress_line(r: &crate::model::ExperimentResult) -> String {
    let f = crate::analysis::result::figures(r);
    let figure = match (f.stats, f.ci) {
        (Some(s), Some((lo, hi))) if s.median != 0.0 => format!(
            "{} ±{}%",
            report::format::time_ns(s.median),
            match (hi - lo) / 2.0 / s.median.abs() * 100.0 {
                p if p < 0.01 => "<0.01".to_string(),
                p => report::format::sig3(p),
            }
        ),
        (Some(s), _) => report::format::time_ns(s.median),
        _ => "–".into(),
    };
    let mut line = format!(
        "{} {figure} ({}, {} samples{}, {:.1} s)",
        report::ladder::label(r),
        r.status.as_str(),
        r.samples.len(),
        r.stop_reason
            .map(|s| format!(", stopped by {}", s.as_str()))
            .unwrap_or_default(),
        r.duration_s
    );
    if let Some(reason) = &r.reason {
        line.push_str(&format!(": {reason}"));
    }
    line
}

pub(super) fn exit_code(run: &Run) -> ExitCode {
    if run.results.iter().any(|r| r.status == Status::Failed) {
        ExitCode::from(3)
    } else if run.results.iter().any(|r| r.status == Status::Suspect) {
        ExitCode::from(4)
    } else {
        ExitCode::SUCCESS
    }
}

pub(super) fn print_run(run: &Run, json: bool) -> Result<()> {
    let text = if json {
        let mut s = serde_json::to_string_pretty(&report::json::run_document(run))?;
        s.push('\n');
        s
    } else {
        report::ladder::render(run)
    };
    write_stdout(&text)
}

/// Write to stdout; a closed pipe (`| head`) is not an error.
pub(super) fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

pub(super) fn parse_precision(text: &str) -> Result<f64, UserError> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 50.0 => Ok(p / 100.0),
        _ => Err(UserError::BadOption(format!(
            "--precision {text}: give a percentage between 0 and 50, e.g. --precision 2"
        ))),
    }
}

pub(super) fn choose_cpus(given: Option<&str>) -> Result<Vec<usize>, UserError> {
    let allowed = cpu::allowed();
    let allowed_text = cpu::format_list(&allowed);
    let Some(text) = given else {
        return Ok(allowed.last().map(|c| vec![*c]).unwrap_or_default());
    };
    let cpus = cpu::parse_list(text).ok_or_else(|| UserError::BadCpu {
        given: text.to_string(),
        why: "not a CPU list (write e.g. 3, 0,2 or 0-3)".into(),
        allowed: allowed_text.clone(),
    })?;
    if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(UserError::BadCpu {
            given: text.to_string(),
            why: format!("CPU {bad} is offline or outside this process's affinity"),
            allowed: allowed_text,
        });
    }
    Ok(cpus)
}

/// The directory file experiments work in: `--dir` or the current directory, checked to be a
/// writable directory, and every selected experiment's pre-flight check passed there.
pub(super) fn check_dir(given: Option<&std::path::Path>, jobs: &[Planned]) -> Result<PathBuf> {
    let uses_dir = jobs
        .iter()
        .any(|j| j.info.work_dir || j.info.preflight.is_some());
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            // Without --dir, a read-only current directory (or one on a file system that
            // refuses new files) must not stop the default suite: measure the temporary
            // directory's file system instead, and say so.
            if uses_dir && !writable(&cwd) {
                let tmp = std::env::temp_dir();
                eprintln!(
                    "oslab: the current directory {} is not writable; the file experiments use {} \
                     (pass --dir to choose)",
                    cwd.display(),
                    tmp.display()
                );
                tmp
            } else {
                cwd
            }
        }
    };
    if !uses_dir {
        return Ok(dir);
    }
    let shown = dir.display();
    match std::fs::metadata(&dir) {
        Err(_) => {
            return Err(UserError::BadOption(format!(
                "--dir {shown} does not exist; create it or pass another directory"
            ))
            .into());
        }
        Ok(m) if !m.is_dir() => {
            return Err(UserError::BadOption(format!(
                "--dir {shown} is not a directory; pass a directory"
            ))
            .into());
        }
        Ok(_) => {}
    }
    if let Err(e) = tempfile::Builder::new()
        .prefix(".oslab-check-")
        .tempdir_in(&dir)
    {
        return Err(UserError::BadOption(format!(
            "--dir {shown} is not writable ({e}); pass a directory you can write to"
        ))
        .into());
    }
    let context = crate::experiment::Context {
        work_dir: Some(dir.clone()),
        ..Default::default()
    };
    for Planned { info, params, .. } in jobs {
        if let Some(preflight) = info.preflight
            && let Err(why) = preflight(params, &context)
        {
            return Err(UserError::BadOption(format!("{}: {why}", info.name)).into());
        }
    }
    Ok(dir)
}

/// Whether a new directory can be made in `dir` (it is removed again at once).
pub(super) fn writable(dir: &std::path::Path) -> bool {
    tempfile::Builder::new()
        .prefix(".oslab-check-")
        .tempdir_in(dir)
        .is_ok()
}

/// The CPU for the other side of a cross-CPU experiment: the second CPU given with --cpu,
/// else the highest other CPU this process may use.
pub(super) fn other_cpu(cpus: &[usize]) -> Option<usize> {
    if let Some(second) = cpus.get(1) {
        return Some(*second);
    }
    cpu::allowed()
        .into_iter()
        .rev()
        .find(|c| Some(c) != cpus.first())
}

pub(super) fn param_hint(selected: &[&ExperimentInfo]) -> String {
    let with: Vec<String> = selected
        .iter()
        .filter(|e| !e.params.is_empty())
        .map(|e| {
            format!(
                "{}: {}",
                e.name,
                e.params
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    if with.is_empty() {
        "the selected experiments take no parameters (`oslab list` shows which do)".into()
    } else {
        format!("parameters here are {}", with.join("; "))
    }
}

//! The command line: parse, dispatch, and map outcomes to exit codes.
//!
//! Exit codes: 0 everything measured (unsupported experiments included), 1 internal error,
//! 2 a mistake in the command line or the database named (one line says the fix), 3 an
//! experiment failed, 4 a result is suspect (its counters contradict what it measures).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use crate::experiment::plan::{self, Planned};
use crate::experiment::{self, ExperimentInfo, params::parse_assignment};
use crate::harness::runner::{self, Plan};
use crate::measure::clock::{self, ClockChoice};
use crate::measure::counters;
use crate::measure::load::Load;
use crate::measure::sampler::SamplerConfig;
use crate::model::error::UserError;
use crate::model::{Run, RunSettings, Status};
use crate::platform::cpu;
use crate::report;
use crate::store::Store;

#[derive(Parser, Debug)]
#[command(
    name = "oslab",
    version,
    about = "Measure what the operating system costs a program",
    long_about = "Measure what the operating system costs a program: system calls against \
                  function calls, context switches, process creation, pipes and sockets, file \
                  I/O that does or does not reach the disk. Each experiment runs in a fresh \
                  pinned process, with perf counters and getrusage checking that it measured \
                  what it claims; every run is stored with a description of the machine, and \
                  runs can be compared, exported and reported as HTML.",
    after_help = "Exit codes: 0 ok (unsupported experiments included), 1 internal error, \
                  2 usage or database error, 3 an experiment failed, 4 a result is suspect; \
                  `compare --fail-on-regression`: 1 when something got slower; 130 a run \
                  interrupted by Ctrl-C (what it finished is stored)."
)]
pub struct Cli {
    /// The results database [default: $XDG_DATA_HOME/oslab/oslab.db]
    #[arg(long, global = true, env = "OSLAB_DB", value_name = "PATH")]
    db: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Measure experiments (default: the default suite), print them and store the run
    Run(RunArgs),
    /// List the experiments, their parameters and what they exercise
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Show a stored run as tables (default: the latest)
    Show {
        /// A run id or a tag (the latest run with that tag)
        run: Option<String>,
        /// Print the run as one JSON document (the same as `run --json`)
        #[arg(long)]
        json: bool,
        /// List the stored runs instead
        #[arg(long, conflicts_with_all = ["run", "json"])]
        list: bool,
    },
    /// Compare two stored runs: per experiment A, B, B/A with its CI, a significance test and
    /// a verdict; first the environment and settings that differ
    Compare(CompareArgs),
    /// Write a stored run as a versioned JSON document (for `import`) or as CSV, one row per
    /// sample
    Export {
        /// A run id or a tag (the latest run with that tag)
        run: String,
        /// json: the whole run, for `oslab import` elsewhere; csv: one row per sample
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
        /// Write to FILE instead of stdout
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Write stored runs as one self-contained HTML page with charts (default: the latest
    /// run); with two or more, the first is compared with each other
    Report {
        /// Run ids or tags (a tag names the latest run with it)
        runs: Vec<String>,
        /// The HTML file to write
        #[arg(
            short = 'o',
            long,
            value_name = "FILE",
            default_value = "oslab-report.html"
        )]
        output: PathBuf,
    },
    /// Store a run exported (`oslab export --format json`) on another machine; importing the
    /// same run again does nothing
    Import {
        /// The exported JSON document
        file: PathBuf,
    },
    /// Describe this machine as oslab sees it, including which counters work
    Env {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// The annotated memory map of a process: each mapping with its RSS, anonymous and swap
    /// memory and what it is (text, data, bss, heap, stack, library, vDSO…), a summary per
    /// kind, and what ASLR moves between runs
    Maps {
        /// The process to map [default: a fresh child of oslab, a typical dynamically linked
        /// program]
        pid: Option<u32>,
        /// Print one JSON document (docs/maps.md)
        #[arg(long)]
        json: bool,
    },
    /// Fill a heap block and wait on stdin, for `oslab maps` to read (internal)
    #[command(hide = true)]
    MapsChild,
    /// Run one experiment for a parent oslab (internal)
    #[command(hide = true)]
    Worker,
    /// Background load for a parent oslab (internal): a busy loop on CPU `--cpu`, or with
    /// `--memory` a competitor that fills and rewrites that many bytes inside the cgroup
    /// whose cgroup.procs is `--cgroup`
    #[command(hide = true)]
    Load {
        #[arg(long, required_unless_present = "memory")]
        cpu: Option<usize>,
        #[arg(long, value_name = "BYTES")]
        memory: Option<u64>,
        #[arg(long, value_name = "CGROUP_PROCS", requires = "memory")]
        cgroup: Option<PathBuf>,
        #[arg(long)]
        parent: u32,
    },
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Experiments (family.variant) or families; none means the default suite
    targets: Vec<String>,
    /// Looser precision and a small time budget: the default suite in well under a minute
    #[arg(long)]
    quick: bool,
    /// Target half-width of the 95% CI of each median, in percent [default: 1, quick: 5]
    #[arg(long, value_name = "PERCENT")]
    precision: Option<String>,
    /// Sampling time budget per experiment, in seconds [default: 5, quick: 0.7]
    #[arg(long, value_name = "SECONDS")]
    budget: Option<f64>,
    /// Kill a worker after this many seconds [default: twice the budget plus 20]
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// The CPU to pin workers to, then optionally the one for the other side of cross-CPU
    /// experiments, e.g. 3 or 1,0 [default: the last CPU this process may use; the other side:
    /// the highest other one]
    #[arg(long, value_name = "LIST")]
    cpu: Option<String>,
    /// Set an experiment parameter (repeatable); `oslab list` shows them. A comma-separated
    /// list sweeps it: one result per value, e.g. --param size=1,64,4K
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Run a named set of configurations instead of experiments: mmap-lab (`oslab list`
    /// shows the suites)
    #[arg(long, value_name = "NAME")]
    suite: Option<String>,
    /// Background load beside every experiment: `cpu` (a busy loop on the measured CPU),
    /// `cpu:all` (one on every CPU) or `memory` (a process filling and rewriting memory, in a
    /// memory cgroup with the experiment, limited from its size and MemAvailable)
    #[arg(long, value_name = "KIND")]
    load: Option<String>,
    /// Directory for experiments that work on files: each gets a private directory in it,
    /// removed afterwards [default: the current directory]
    #[arg(long, value_name = "PATH")]
    dir: Option<PathBuf>,
    /// Run the selected experiments this many times, interleaved, each time in a new worker
    /// process: `show` pools them per configuration, `compare` resamples the processes (use 3
    /// on both sides of a comparison)
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// A label stored with the run; `show` accepts it instead of a run id
    #[arg(long)]
    tag: Option<String>,
    /// Which clock times the samples
    #[arg(long, value_enum, default_value_t = ClockArg::Auto)]
    clock: ClockArg,
    /// Print the run as one JSON document on stdout (progress stays on stderr)
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct CompareArgs {
    /// Run A, the baseline: a run id or a tag (the latest run with that tag)
    a: String,
    /// Run B, compared against A
    b: String,
    /// Half-width of the noise band around B/A = 1, in percent: a change whose CI touches the
    /// band is "within noise" [default: 2, or the runs' --precision when larger (5 for
    /// --quick runs)]
    #[arg(long, value_name = "PCT")]
    noise: Option<String>,
    /// What to compare per operation: time, a getrusage field (minflt, nvcsw, stime_us, …) or
    /// a counter name (cycles, syscalls, …)
    #[arg(long, value_name = "NAME", default_value = "time")]
    metric: String,
    /// Print one JSON document for scripts
    #[arg(long)]
    json: bool,
    /// Exit with code 1 when some experiment got slower (for CI)
    #[arg(long)]
    fail_on_regression: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ExportFormat {
    /// The whole run as one versioned JSON document
    Json,
    /// One row per sample
    Csv,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ClockArg {
    /// The TSC when invariant and stable, else CLOCK_MONOTONIC_RAW
    Auto,
    /// The TSC, or an error if it cannot be trusted here
    Tsc,
    /// CLOCK_MONOTONIC_RAW
    Monotonic,
}

/// Parse the command line and run it.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    match cli.command {
        Command::Worker => return ExitCode::from(crate::harness::worker::main() as u8),
        Command::MapsChild => return ExitCode::from(crate::platform::maps::child_main() as u8),
        Command::Load {
            cpu,
            memory,
            cgroup,
            parent,
        } => {
            let code = crate::measure::load::main(cpu, memory, cgroup.as_deref(), parent);
            return ExitCode::from(code as u8);
        }
        _ => {}
    }
    match dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            if let Some(user) = err.downcast_ref::<UserError>() {
                eprintln!("oslab: {user}");
                ExitCode::from(2)
            } else if let Some(store) = err.downcast_ref::<crate::store::StoreError>() {
                eprintln!("oslab: {store}");
                ExitCode::from(2)
            } else {
                eprintln!("oslab: error: {err:#}");
                ExitCode::from(1)
            }
        }
    }
}

/// Help and version go to stdout as clap prints them; a mistake becomes one line on stderr
/// that names the fix, like every other user error.
fn usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = err.print();
        return ExitCode::from(2);
    }
    let text = err.to_string();
    let first = text.lines().next().unwrap_or("invalid command line");
    let first = first.trim().trim_start_matches("error:").trim();
    let tip = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("tip: "))
        .map(|t| format!("; {t}"))
        .unwrap_or_default();
    eprintln!("oslab: {first}{tip}; `oslab --help` lists the commands and options");
    ExitCode::from(2)
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run(cli.db, args),
        Command::List { json } => list(json),
        Command::Show { run, json, list } => show(cli.db, run, json, list),
        Command::Compare(args) => compare(cli.db, args),
        Command::Export {
            run,
            format,
            output,
        } => export(cli.db, &run, format, output),
        Command::Report { runs, output } => html_report(cli.db, &runs, &output),
        Command::Import { file } => import(cli.db, &file),
        Command::Env { json } => env(json),
        Command::Maps { pid, json } => maps(pid, json),
        Command::Worker | Command::Load { .. } | Command::MapsChild => {
            unreachable!("handled before dispatch")
        }
    }
}

fn db_path(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    UserError::BadOption(
                        "neither XDG_DATA_HOME nor HOME is set; pass --db PATH".into(),
                    )
                })?;
            PathBuf::from(home).join(".local/share")
        }
    };
    let dir = base.join("oslab");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.join("oslab.db"))
}

fn run(db: Option<PathBuf>, args: RunArgs) -> Result<ExitCode> {
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
fn planned_infos(suite: &plan::Suite) -> Vec<&'static ExperimentInfo> {
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
fn check_param_names(
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

fn progress_line(r: &crate::model::ExperimentResult) -> String {
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

fn exit_code(run: &Run) -> ExitCode {
    if run.results.iter().any(|r| r.status == Status::Failed) {
        ExitCode::from(3)
    } else if run.results.iter().any(|r| r.status == Status::Suspect) {
        ExitCode::from(4)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_run(run: &Run, json: bool) -> Result<()> {
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
fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

fn parse_precision(text: &str) -> Result<f64, UserError> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 50.0 => Ok(p / 100.0),
        _ => Err(UserError::BadOption(format!(
            "--precision {text}: give a percentage between 0 and 50, e.g. --precision 2"
        ))),
    }
}

fn choose_cpus(given: Option<&str>) -> Result<Vec<usize>, UserError> {
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
fn check_dir(given: Option<&std::path::Path>, jobs: &[Planned]) -> Result<PathBuf> {
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
fn writable(dir: &std::path::Path) -> bool {
    tempfile::Builder::new()
        .prefix(".oslab-check-")
        .tempdir_in(dir)
        .is_ok()
}

/// The CPU for the other side of a cross-CPU experiment: the second CPU given with --cpu,
/// else the highest other CPU this process may use.
fn other_cpu(cpus: &[usize]) -> Option<usize> {
    if let Some(second) = cpus.get(1) {
        return Some(*second);
    }
    cpu::allowed()
        .into_iter()
        .rev()
        .find(|c| Some(c) != cpus.first())
}

fn param_hint(selected: &[&ExperimentInfo]) -> String {
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

fn list(json: bool) -> Result<ExitCode> {
    let text = if json {
        let doc: Vec<_> = experiment::REGISTRY
            .iter()
            .map(|e| report::list::info_json(e))
            .collect();
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        report::list::render()
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn show(db: Option<PathBuf>, which: Option<String>, json: bool, list: bool) -> Result<ExitCode> {
    let path = db_path(db)?;
    let store = Store::open_existing(&path)?;
    if list {
        write_stdout(&report::list::runs(&store.list_runs()?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let run = resolve_run(&store, &path, which.as_deref())?;
    print_run(&run, json)?;
    Ok(ExitCode::SUCCESS)
}

/// The run named by `which` (an id, else a tag), or the latest when `None`.
fn resolve_run(store: &Store, path: &std::path::Path, which: Option<&str>) -> Result<Run> {
    let id = match which {
        None => store.latest_run_id()?,
        Some(text) => match text.parse::<i64>() {
            Ok(id) => Some(id),
            Err(_) => store.run_id_for_tag(text)?,
        },
    };
    let Some(id) = id else {
        return Err(match which {
            Some(which) => UserError::NoSuchRun(which.to_string(), path.display().to_string()),
            None => UserError::BadOption(format!(
                "no runs stored in {} yet; `oslab run` makes one",
                path.display()
            )),
        }
        .into());
    };
    match store.load_run(id) {
        Ok(run) => Ok(run),
        Err(crate::store::StoreError::NoSuchRun { .. }) => {
            Err(UserError::NoSuchRun(id.to_string(), path.display().to_string()).into())
        }
        Err(e) => Err(e.into()),
    }
}

fn compare(db: Option<PathBuf>, args: CompareArgs) -> Result<ExitCode> {
    use crate::analysis::compare::{Metric, compare_runs, default_noise};
    let noise = match &args.noise {
        None => None,
        Some(text) => match text.trim().trim_end_matches('%').parse::<f64>() {
            Ok(p) if (0.0..=50.0).contains(&p) => Some(p / 100.0),
            _ => {
                return Err(UserError::BadOption(format!(
                    "--noise {text}: give a percentage between 0 and 50, e.g. --noise 2"
                ))
                .into());
            }
        },
    };
    let path = db_path(db)?;
    let store = Store::open_existing(&path)?;
    let a = resolve_run(&store, &path, Some(&args.a))?;
    let b = resolve_run(&store, &path, Some(&args.b))?;
    let metric = Metric::parse(&args.metric);
    if let Metric::Counter(name) = &metric {
        let known: std::collections::BTreeSet<&str> = [&a, &b]
            .iter()
            .flat_map(|r| &r.results)
            .flat_map(|r| r.counters.iter().map(|c| c.name.as_str()))
            .collect();
        if !known.contains(name.as_str()) {
            return Err(UserError::BadOption(format!(
                "--metric {name}: not time, a getrusage field ({}) or a counter of these runs{}",
                crate::model::Rusage::FIELDS.join(", "),
                if known.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", known.into_iter().collect::<Vec<_>>().join(", "))
                }
            ))
            .into());
        }
    }
    let (noise, noise_reason) = match noise {
        Some(n) => (n, None),
        None => default_noise(&a, &b),
    };
    let mut cmp = compare_runs(&a, &b, &metric, noise);
    cmp.noise_reason = noise_reason;
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report::compare::document(&cmp))?;
        s.push('\n');
        s
    } else {
        report::compare::render(&cmp)
    };
    write_stdout(&text)?;
    if args.fail_on_regression && cmp.any_slower() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn export(
    db: Option<PathBuf>,
    which: &str,
    format: ExportFormat,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    let path = db_path(db)?;
    let store = Store::open_existing(&path)?;
    let run = resolve_run(&store, &path, Some(which))?;
    let text = match format {
        ExportFormat::Json => {
            let mut s = serde_json::to_string_pretty(&report::export::json_document(&run))?;
            s.push('\n');
            s
        }
        ExportFormat::Csv => report::export::csv(&run),
    };
    match output {
        None => write_stdout(&text)?,
        Some(file) => {
            std::fs::write(&file, text).map_err(|e| {
                UserError::BadOption(format!(
                    "cannot write {}: {e}; check the path and its permissions",
                    file.display()
                ))
            })?;
            eprintln!("exported run {} to {}", run.id, file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn html_report(
    db: Option<PathBuf>,
    which: &[String],
    output: &std::path::Path,
) -> Result<ExitCode> {
    let path = db_path(db)?;
    let store = Store::open_existing(&path)?;
    let runs: Vec<Run> = if which.is_empty() {
        vec![resolve_run(&store, &path, None)?]
    } else {
        which
            .iter()
            .map(|w| resolve_run(&store, &path, Some(w)))
            .collect::<Result<_>>()?
    };
    let page = report::html::render(&runs);
    std::fs::write(output, page).map_err(|e| {
        UserError::BadOption(format!(
            "cannot write {}: {e}; check the path and its permissions",
            output.display()
        ))
    })?;
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    eprintln!(
        "wrote the report of run {} to {}",
        ids.join(", "),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Everything that can refuse the file is decided before the database is opened, so a bad
/// file leaves the database exactly as it was.
fn import(db: Option<PathBuf>, file: &std::path::Path) -> Result<ExitCode> {
    use crate::store::Imported;
    let text = std::fs::read_to_string(file).map_err(|e| {
        UserError::BadOption(format!(
            "cannot read {}: {e}; pass a file written by `oslab export --format json`",
            file.display()
        ))
    })?;
    let run = report::export::read_document(&text)
        .map_err(|e| UserError::BadOption(format!("{} {e}", file.display())))?;
    let path = db_path(db)?;
    let mut store = Store::open(&path)?;
    match store.import_run(&run)? {
        Imported::New(id) => eprintln!(
            "imported {} (run {} where it was measured) as run {id} in {}",
            file.display(),
            run.id,
            path.display()
        ),
        Imported::AlreadyImported(id) => eprintln!(
            "{} was already imported as run {id} in {}; nothing changed",
            file.display(),
            path.display()
        ),
        Imported::AlreadyStored(id) => eprintln!(
            "{} holds run {id} of {}, which is already there; nothing changed",
            file.display(),
            path.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn env(json: bool) -> Result<ExitCode> {
    let mut environment = crate::platform::env::collect();
    environment.counters = counters::probe();
    let (clock, reason) = clock::choose(ClockChoice::Auto);
    let info = clock.info(reason);
    let text = if json {
        let doc = serde_json::json!({ "environment": environment, "clock": info });
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        format!(
            "{}\nClock\n  source      {}\n  why         {}\n  read pair   {}\n  resolution  {}\n",
            report::env_table::render(&environment),
            info.source,
            info.reason,
            report::format::time_ns(info.overhead_ns),
            report::format::time_ns(info.resolution_ns)
        )
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `oslab maps [PID]`: without a PID, a fresh child is mapped (and a second one started to see
/// what ASLR moved).
fn maps(pid: Option<u32>, json: bool) -> Result<ExitCode> {
    let report = match pid {
        Some(pid) => crate::platform::maps::inspect_pid(pid)?,
        None => crate::platform::maps::inspect_child()?,
    };
    let text = if json {
        let mut s = serde_json::to_string_pretty(&report::maps::document(&report))?;
        s.push('\n');
        s
    } else {
        report::maps::render(&report)
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

//! `oslab run`: the options checked and turned into a plan, the experiments run in fresh workers, each result stored as it finishes, the run printed.

use super::*;
use crate::harness;
use crate::harness::history::{self, Configuration, Earlier};
use std::collections::HashMap;

use crate::model::profile::ProfileRequest;

mod cpus;
mod options;
mod rounds;
use cpus::*;
use options::*;
pub(super) use options::{check_dir, check_param_names};
use rounds::{Rounds, run_all};

/// `run`'s options checked as [`run`] checks them, but for `--dir`; nothing is written.
pub(in crate::cli) fn check_options(args: &RunArgs) -> Result<()> {
    options_but_dir(args).map(drop)
}

pub(super) fn run(db: Option<PathBuf>, args: RunArgs) -> Result<ExitCode> {
    // A store URL that cannot be one is said before anything is measured.
    if args.push {
        crate::store::fleet::Target::resolve(args.store.as_deref(), &|k| std::env::var(k).ok())?;
    }
    let measured = measure(db, &args, None)?;
    // Present what was stored, exactly as `show` would.
    print_run(&measured.run, args.json)?;
    let code = measured.conclude();
    if args.push
        && measured.interrupted.is_none()
        && let Some(failed) =
            super::fleet::push_measured(measured.run.id, &measured.path, args.store.as_deref())
    {
        return Ok(failed);
    }
    Ok(code)
}

/// A run measured and stored, read back from the store.
pub(super) struct Measured {
    pub(super) run: Run,
    pub(super) path: PathBuf,
    /// The signal that ended it early, if one did.
    interrupted: Option<i32>,
    /// What to say of a host that made entering the kernel slower through the run than in
    /// this machine's earlier runs (`report::host::slow_run_note`).
    slow_host: Option<String>,
}

impl Measured {
    /// Say where the run is stored and whether it was cut short; the exit code.
    pub(super) fn conclude(&self) -> ExitCode {
        // A finding, not an error: no "oslab: " before it.
        if let Some(text) = &self.slow_host {
            crate::say!("{}", report::format::wrap(text, 96, "", "  "));
        }
        crate::say!("stored as run {} in {}", self.run.id, self.path.display());
        if let Some(signal) = self.interrupted {
            crate::say!(
                "oslab: interrupted by {}: the run keeps the experiments it finished",
                crate::platform::interrupt::signal_name(signal)
            );
            return ExitCode::from(130);
        }
        exit_code(&self.run)
    }
}

/// Check `args`, measure every planned configuration (profiled when `profile` asks), store
/// the run as it goes and read it back.
pub(super) fn measure(
    db: Option<PathBuf>,
    args: &RunArgs,
    profile: Option<ProfileRequest>,
) -> Result<Measured> {
    // From here on Ctrl-C (SIGTERM, SIGHUP) is noted, not fatal: before the run is stored it
    // stops oslab with nothing stored, after it the run keeps what was measured. Noted before
    // the options are checked too: checking --dir makes (and removes) a directory in it, which
    // a signal's default action would leave behind.
    crate::platform::interrupt::install();
    let options = options(args)?;
    check_interrupt(|| "nothing was measured or stored".to_string())?;
    // What killed oslabs left: their memory cgroups (their scratch directories go when the
    // first worker makes its own).
    crate::platform::cgroup::remove_orphaned();
    // And the swap areas they made; then this run's own, kept until the run is stored.
    crate::platform::swap::remove_stale();
    let swap = options
        .swap
        .map(|(kind, bytes)| crate::platform::swap::TempSwap::create(kind, bytes))
        .transpose()
        .map_err(|e| UserError::BadOption(swap_refused(&e)))?;

    let path = db_path(db)?;
    let mut store = Store::open(&path)?;

    let clock_info = choose_clock(args.clock)?;
    let mut environment = crate::platform::env::collect();
    environment.counters = counters::probe();

    let mut run = new_run(args, &options, clock_info.clone(), environment);
    run.settings.swap = swap.as_ref().map(crate::platform::swap::TempSwap::describe);
    check_interrupt(|| "nothing was measured or stored".to_string())?;
    let run_id = store.begin_run(&run)?;

    let Options {
        jobs,
        sampler,
        timeout,
        cpus,
        turns,
        cpu_choice: _,
        free_cpus,
        dir,
        other_cpu,
        load,
        processes,
        max_processes,
        swap: _,
    } = options;
    let plan = Plan {
        dir,
        other_cpu,
        load,
        // The budget is shared among the most processes a configuration may get.
        sampler: sampler.per_process(max_processes.unwrap_or(processes)),
        cpus,
        clock: clock_info,
        timeout,
        stretch_timeout: args.timeout.is_none(),
        processes,
        // A new layout for every run: the processes of one run differ, and so do runs.
        layout_seed: (run.started_at * 1e9) as u64 ^ u64::from(std::process::id()),
        free_cpus,
        cpu_turns: turns,
        layout: None,
        probes: true,
        profile,
        emulation: run.environment.emulation.clone(),
        duet: args.duet,
    };
    let earlier = earlier_runs(&store, run_id, run, &jobs);
    let rounds = Rounds {
        most: max_processes.unwrap_or(processes) as usize,
        target: sampler.precision,
        budget_s: sampler.budget_s,
    };
    run_all(&jobs, &plan, rounds, &mut store, run_id, &earlier)?;
    let interrupted = crate::platform::interrupt::requested();
    if interrupted.is_none() {
        store.finish_run(run_id, runner::unix_now())?;
    }
    let run = store.load_run(run_id)?;
    let slow_host = report::host::slow_run_note(&report::pool::pool(&run.results));
    Ok(Measured {
        run,
        path,
        interrupted,
        slow_host,
    })
}

/// The line for a swap area `--swap` could not make: the platform's reason, and the option
/// to change where one helps.
fn swap_refused(e: &crate::platform::swap::SwapError) -> String {
    use crate::platform::swap::SwapError;
    let fix = match e {
        SwapError::NotRoot => "; run oslab as root, or leave --swap out",
        SwapError::Swapon { file: true, .. } => ": try --swap zram:SIZE",
        _ => "",
    };
    format!("--swap: {e}{fix}")
}

/// The CPUs the processes take in turn, as recorded: those of `Plan::for_process`, in the
/// order the processes take them; empty when `--cpu` pins every process or one CPU is all.
fn cpu_turns(turns: &[usize], processes: u32) -> Vec<usize> {
    if turns.len() < 2 || processes < 2 {
        return Vec::new();
    }
    Plan::cpus_taken(turns, processes)
}

/// The run's record as stored before its first result: when, how and where it measures.
fn new_run(
    args: &RunArgs,
    options: &Options,
    clock: crate::model::ClockInfo,
    environment: crate::model::env::Environment,
) -> Run {
    let Options {
        jobs,
        sampler,
        timeout,
        cpus,
        dir,
        load,
        ..
    } = options;
    let uses_dir = jobs.iter().any(|j| j.info.work_dir);
    Run {
        id: 0,
        uuid: crate::model::identity::new_run_uuid(),
        started_at: runner::unix_now(),
        finished_at: None,
        tag: args.tag.clone(),
        oslab_version: env!("CARGO_PKG_VERSION").to_string(),
        settings: RunSettings {
            quick: args.quick,
            precision: sampler.precision,
            budget_s: sampler.budget_s,
            processes: options.processes,
            max_processes: options.max_processes,
            min_time_s: sampler.min_time_s,
            timeout_s: timeout.as_secs_f64(),
            cpus: cpus.clone(),
            cpu_turns: cpu_turns(&options.turns, options.processes),
            cpu_choice: options.cpu_choice.clone(),
            unpinned: crate::platform::cpu::pinning_refusal().map(str::to_string),
            load: load.as_ref().map(|l| l.name().to_string()),
            // Set once the swap area is made.
            swap: None,
            dir: uses_dir.then(|| dir.display().to_string()),
            dir_mount: uses_dir
                .then(|| crate::platform::mount::mount_of(dir))
                .and_then(Result::ok)
                .map(|m| m.describe()),
            // A fleet store's password (`--store postgres://user:pw@…`) is never stored.
            argv: std::env::args()
                .map(|a| crate::store::fleet::mask_url(&a))
                .collect(),
        },
        clock,
        environment,
        results: Vec::new(),
    }
}

/// What the store's earlier runs on this machine gave for each job's configuration
/// (`harness::history`). A store that cannot say is told on stderr and the run goes on: the
/// intervals then rest on this run alone.
fn earlier_runs(
    store: &Store,
    run_id: i64,
    mut run: Run,
    jobs: &[Planned],
) -> HashMap<Configuration, Earlier> {
    run.id = run_id;
    let planned: Vec<Configuration> = jobs
        .iter()
        .map(|j| history::configuration(j.info.name, j.params.as_map(), j.label.as_deref()))
        .collect();
    history::earlier_runs(store, &run, &planned).unwrap_or_else(|e| {
        crate::say!("oslab: earlier runs not read ({e}): intervals rest on this run alone");
        HashMap::new()
    })
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

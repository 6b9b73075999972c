//! `oslab run`'s options checked, in the order the user meets them, and turned into what the
//! run needs: the planned experiments, the sampler, the time limit, CPUs, directory and load.

use super::*;
use crate::experiment::refusal::Refusal;
use crate::experiment::suites::UNIXBENCH;
use crate::harness::scratch;
use crate::model::copies;
use crate::platform::swap::SwapKind;
use crate::report::peers::unixbench;

/// What the command line asks for, checked.
pub(super) struct Options {
    pub(super) jobs: Vec<Planned>,
    pub(super) sampler: SamplerConfig,
    pub(super) timeout: Duration,
    pub(super) cpus: Vec<usize>,
    /// The CPUs the processes take in turn (`--cpu-turns`; else empty).
    pub(super) turns: Vec<usize>,
    /// Why the processes run on `cpus`, when oslab chose the CPU (`cpus::quietest`).
    pub(super) cpu_choice: Option<String>,
    /// The CPUs a test left to the scheduler may use (`cpus::Placement::free`).
    pub(super) free_cpus: Vec<usize>,
    pub(super) dir: PathBuf,
    pub(super) other_cpu: Option<usize>,
    pub(super) load: Option<Load>,
    /// Worker processes per configuration (`--repeat`): every configuration's at first.
    pub(super) processes: u32,
    /// The most a configuration may get, added one at a time (`--max-processes`,
    /// `analysis::adaptive`); `None`: each gets `processes`.
    pub(super) max_processes: Option<u32>,
    /// Swap to make for the run (`--swap`): its kind and size.
    pub(super) swap: Option<(SwapKind, u64)>,
}

/// The longest `--timeout`, seconds: a week. Longer is a typo, and a deadline that far
/// overflows the clock's arithmetic.
const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

/// The shortest `--timeout`, seconds: a worker takes a good part of a second to start and
/// calibrate its clock, so a shorter limit kills every one ("timed out after 0 s").
const MIN_TIMEOUT_S: f64 = 1.0;

/// Worker processes per configuration without `--repeat`: enough to see the spread between
/// processes (two would give one difference), few enough that each still gets a third of the
/// time budget.
pub(super) const DEFAULT_PROCESSES: u32 = 3;

/// The most worker processes a configuration gets without `--max-processes`: from three to six
/// the factor t(0.975, n − 1)/√n that the spread between processes is multiplied by in its
/// interval falls from 2.48 to 1.05; each further pair gains less (0.84 at eight). The
/// processes share the configuration's minimum sampling time, so a sixth costs only its own
/// start and warm-up, about 0.09 s (five at the most made the default suite no shorter:
/// 88.1 and 97.0 s against 86.3 and 93.2 s with six, 2026-12-05, a host that moved more).
pub(super) const DEFAULT_MAX_PROCESSES: u32 = 6;

/// Check every option of `oslab run`; the first mistake is a [`UserError`] naming the fix.
pub(super) fn options(args: &RunArgs) -> Result<Options> {
    let mut options = options_but_dir(args)?;
    options.dir = check_dir(args.dir.as_deref(), &options.jobs)?;
    Ok(options)
}

/// Every option but `--dir`, whose check creates a directory in it: only names, numbers and
/// CPU lists are looked at, nothing is written (`dir` is left empty).
pub(super) fn options_but_dir(args: &RunArgs) -> Result<Options> {
    let jobs = planned_jobs(args)?;
    let sampler = sampler(args)?;
    let timeout = match args.timeout {
        Some(t) if (MIN_TIMEOUT_S..=MAX_TIMEOUT_S).contains(&t) => Duration::from_secs_f64(t),
        Some(t) => {
            return Err(UserError::BadOption(format!(
                "--timeout {t}: give seconds from {MIN_TIMEOUT_S} (the least a worker needs to \
                 start) to {MAX_TIMEOUT_S} (a week)"
            ))
            .into());
        }
        None => Plan::default_timeout(&sampler, crate::platform::env::emulation().is_some()),
    };
    let kinds = crate::platform::env::core_kinds();
    let placement = placement(args, &kinds)?;
    let processes = args.repeat.unwrap_or_else(|| default_processes(&placement));
    if processes == 0 || processes > 1000 {
        return Err(UserError::BadOption("--repeat takes a number from 1 to 1000".into()).into());
    }
    let max_processes = max_processes(args, processes, &placement)?;
    let load = match args.load.as_deref() {
        None => None,
        Some(text) => Some(Load::parse(text).ok_or_else(|| {
            UserError::BadOption(format!(
                "--load {text}: give cpu, cpu:all, memory (or memory:headroom=PERCENT, with \
                 ,swap=off) or io"
            ))
        })?),
    };
    let swap = args.swap.as_deref().map(parse_swap).transpose()?;
    let Placement {
        cpus,
        turns,
        other_cpu,
        why,
        free,
    } = placement;
    Ok(Options {
        jobs,
        sampler,
        timeout,
        cpus,
        turns,
        cpu_choice: why,
        free_cpus: free,
        dir: PathBuf::new(),
        other_cpu,
        load,
        processes,
        max_processes,
        swap,
    })
}

/// The most processes a configuration may get (`--max-processes`): by default six for a
/// standard run that leaves the count to oslab on one CPU with one copy; none (`None`) when
/// the user fixed the count (`--repeat`), asked for speed (`--quick`), takes CPUs in turn
/// (whose comparison wants equal processes per CPU), measures copies or runs a suite (whose
/// configurations are long, or timed passes in one process).
fn max_processes(args: &RunArgs, processes: u32, placement: &Placement) -> Result<Option<u32>> {
    match args.max_processes {
        Some(m) if m < processes || m > 1000 => Err(UserError::BadOption(format!(
            "--max-processes {m}: give a number from the processes each configuration starts \
             with ({processes}, --repeat) to 1000"
        ))
        .into()),
        Some(m) if m > processes && processes < 2 => Err(UserError::BadOption(format!(
            "--max-processes {m} adds processes where the spread between them is widest, which \
             one process cannot show: give --repeat 2 or more with it"
        ))
        .into()),
        Some(m) => Ok((m > processes).then_some(m)),
        None if args.quick
            || args.repeat.is_some()
            || !placement.turns.is_empty()
            || args.copies.is_some()
            || args.scale
            || args.suite.is_some() =>
        {
            Ok(None)
        }
        None => Ok(Some(DEFAULT_MAX_PROCESSES.max(processes))),
    }
}

/// `--swap SIZE` (a file) or `--swap zram:SIZE`.
fn parse_swap(text: &str) -> Result<(SwapKind, u64), UserError> {
    let (kind, size) = match text.strip_prefix("zram:") {
        Some(size) => (SwapKind::Zram, size),
        None => (SwapKind::File, text),
    };
    let bad = || {
        UserError::BadOption(format!(
            "--swap {text}: give a size from 16M to 1T, e.g. 1G, or zram:1G for a zram device"
        ))
    };
    let bytes = crate::experiment::params::parse_size(size).ok_or_else(bad)?;
    if !(16 << 20..=1 << 40).contains(&bytes) {
        return Err(bad());
    }
    Ok((kind, bytes))
}

/// The experiments named (or the suite's configurations), with their `--param` values, each
/// once per count of `--copies` (`--scale`).
fn planned_jobs(args: &RunArgs) -> Result<Vec<Planned>> {
    let planned = configurations(args)?;
    let cpus = cpu::allowed().len().max(1);
    // A suite may measure its configurations with copies of its own (UnixBench's 1 and N).
    let suite_copies = args
        .suite
        .as_deref()
        .and_then(selection::find_suite)
        .and_then(|s| s.copies);
    let counts = match (args.copies.as_deref().or(suite_copies), args.scale) {
        (_, true) => Some(copies::scale_list(cpus)),
        (Some(list), false) => Some(copies::parse_list(list, cpus).map_err(UserError::BadOption)?),
        (None, false) => None,
    };
    let mode = match args.copy_mode.as_deref() {
        None => copies::Mode::Processes,
        Some(text) => copies::Mode::parse(text).ok_or_else(|| {
            UserError::BadOption(format!("--copy-mode {text}: give processes or threads"))
        })?,
    };
    match counts {
        Some(counts) => Ok(selection::with_copies(planned, &counts, mode)?),
        None if args.copy_mode.is_some() => Err(UserError::BadOption(
            "--copy-mode says how copies run: give --copies LIST (or --scale) with it".into(),
        )
        .into()),
        None => Ok(planned),
    }
}

/// The experiments named (or the suite's configurations), with their `--param` values.
fn configurations(args: &RunArgs) -> Result<Vec<Planned>> {
    let given: Vec<(String, String)> = args
        .params
        .iter()
        .map(|p| parse_assignment(p))
        .collect::<Result<_, _>>()?;
    let Some(name) = &args.suite else {
        if let Some(n) = args.passes {
            return Err(UserError::BadOption(format!(
                "--passes {n} sets a suite's timed passes: give --suite unixbench with it"
            ))
            .into());
        }
        let selected = experiment::select(&args.targets).map_err(|e| match &e {
            // UnixBench's name of a test (fsdisk) is a target only within its suite.
            UserError::UnknownExperiment(target) => match unixbench::test_named(target) {
                Some(t) => UserError::BadOption(format!(
                    "{target}: UnixBench's name of its {} test; run it with --suite \
                         unixbench",
                    t.label()
                )),
                None => e,
            },
            _ => e,
        })?;
        check_param_names(&given, &selected)?;
        return Ok(selection::expand(&selected, &given, args.quick)?);
    };
    let suite = selection::find_suite(name).ok_or_else(|| {
        UserError::BadOption(format!(
            "--suite {name}: no such suite; there is {}",
            selection::SUITES
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    check_param_names(&given, &planned_infos(suite))?;
    // A suite's configurations without swap are measured only beside ones with it.
    let swap =
        args.swap.is_some() || crate::platform::memory::meminfo().is_ok_and(|m| m.swap_total > 0);
    if let Some(n) = args.passes.filter(|n| !(1..=100).contains(n)) {
        return Err(UserError::BadOption(format!(
            "--passes {n}: give a number of passes from 1 to 100"
        ))
        .into());
    }
    let timing = selection::Timing {
        quick: args.quick,
        passes: args.passes,
    };
    let planned = selection::expand_suite(suite, &given, timing, swap)?;
    if args.targets.is_empty() {
        return Ok(planned);
    }
    pick_from_suite(suite, planned, &args.targets)
}

/// The configurations of `suite` that `targets` name: experiments and families pick the
/// suite's configurations of them, as UnixBench's `Run` takes the names of its tests; under
/// `--suite unixbench` so do UnixBench's own names of its tests (`fsdisk`: File Copy 4096),
/// each one configuration.
fn pick_from_suite(
    suite: &selection::Suite,
    planned: Vec<Planned>,
    targets: &[String],
) -> Result<Vec<Planned>> {
    let is_unixbench = suite.name == UNIXBENCH.name;
    let mut labels: Vec<&str> = Vec::new();
    let mut experiments: Vec<String> = Vec::new();
    for target in targets {
        match unixbench::test_named(target).filter(|_| is_unixbench) {
            Some(test) => labels.push(test.label()),
            None => experiments.push(target.clone()),
        }
    }
    let chosen = match experiments.is_empty() {
        true => Vec::new(),
        false => experiment::select(&experiments)?,
    };
    let picked = |p: &Planned| {
        chosen.iter().any(|c| c.name == p.info.name)
            || p.label.as_deref().is_some_and(|l| labels.contains(&l))
    };
    if !planned.iter().any(picked) {
        let mut its_own: Vec<&str> = planned.iter().map(|p| p.info.name).collect();
        its_own.dedup();
        let mut names = its_own.join(" ");
        if is_unixbench {
            let programs: Vec<&str> = unixbench::TESTS.iter().map(|u| u.program).collect();
            names += &format!(" (or UnixBench's names: {})", programs.join(" "));
        }
        return Err(UserError::BadOption(format!(
            "--suite {} measures none of {}: name some of {names}, or none for all",
            suite.name,
            targets.join(" "),
        ))
        .into());
    }
    Ok(planned.into_iter().filter(picked).collect())
}

/// `--quick` or the standard sampler, with `--precision` and `--budget` applied.
fn sampler(args: &RunArgs) -> Result<SamplerConfig> {
    let mut sampler = if args.quick {
        SamplerConfig::quick()
    } else {
        SamplerConfig::standard()
    };
    if let Some(p) = &args.precision {
        sampler.precision = parse_precision(p)?;
    }
    if let Some(b) = args.budget {
        if !(b.is_finite() && (0.01..=3600.0).contains(&b)) {
            return Err(UserError::BadOption(format!(
                "--budget {b}: give seconds between 0.01 and 3600"
            ))
            .into());
        }
        sampler.budget_s = b;
        sampler.min_time_s = sampler.min_time_s.min(b);
    }
    Ok(sampler)
}

/// The clock `--clock` asks for; `--clock counter` on a machine whose counter cannot be
/// trusted is a user error rather than a silent fallback.
pub(super) fn choose_clock(arg: ClockArg) -> Result<crate::model::ClockInfo> {
    let (clock, reason) = clock::choose(match arg {
        ClockArg::Auto => ClockChoice::Auto,
        ClockArg::Counter => ClockChoice::Counter,
        ClockArg::Monotonic => ClockChoice::Monotonic,
    });
    if arg == ClockArg::Counter && clock == clock::Clock::MonotonicRaw {
        return Err(
            UserError::BadOption(format!("--clock counter: {reason}; use --clock auto")).into(),
        );
    }
    Ok(clock.info(reason))
}

/// The experiments of a suite, each once.
pub(super) fn planned_infos(suite: &selection::Suite) -> Vec<&'static ExperimentInfo> {
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
pub(in crate::cli) fn check_param_names(
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

pub(super) fn parse_precision(text: &str) -> Result<f64, UserError> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 50.0 => Ok(p / 100.0),
        _ => Err(UserError::BadOption(format!(
            "--precision {text}: give a percentage between 0 and 50, e.g. --precision 2"
        ))),
    }
}

/// The directory file experiments work in: `--dir` or the current directory, checked to be a
/// writable directory, and every selected experiment's pre-flight check passed there.
pub(in crate::cli) fn check_dir(
    given: Option<&std::path::Path>,
    jobs: &[Planned],
) -> Result<PathBuf> {
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
                crate::say!(
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
    // Named like a work directory (`.oslab-<pid>-…`): one left by an oslab killed right here
    // goes with the next run's sweep.
    if let Err(e) = scratch::create(&dir, scratch::WORK_PREFIX) {
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
        // An experiment that does not run here is refused with its reason when it runs.
        if let Some(preflight) = info.preflight.filter(|_| info.runs_here())
            && let Err(why) = preflight(params, &context)
        {
            return Err(UserError::BadOption(format!("{}: {}", info.name, refused(&why))).into());
        }
    }
    Ok(dir)
}

/// A preflight's refusal as the one line the user reads: what does not fit, and the flag
/// that fixes it.
fn refused(why: &Refusal) -> String {
    let fix = match why {
        Refusal::Exceeds { param, limit, .. } => {
            format!("pass a smaller --param {param}= or a larger --param {limit}=")
        }
        Refusal::Memory { param, .. } => format!("pass a smaller --param {param}="),
        Refusal::Room {
            shrink: Some(param),
            ..
        } => format!("pass --dir on a larger file system or a smaller --param {param}="),
        Refusal::Room { shrink: None, .. } => {
            "pass --dir on a larger file system or smaller parameters (--quick shrinks them)"
                .to_string()
        }
        Refusal::Os(_) => "pass --dir on a file system oslab can read".to_string(),
    };
    format!("{why}; {fix}")
}

/// Whether a new directory can be made in `dir` (it is removed again at once).
pub(super) fn writable(dir: &std::path::Path) -> bool {
    scratch::create(dir, scratch::WORK_PREFIX).is_ok()
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

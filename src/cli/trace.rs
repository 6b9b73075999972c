//! `oslab trace -- COMMAND`: every system call a command and its children make.
//! `oslab trace --experiment NAME`: one pass of an experiment's loop, checked against its
//! claims.

use super::*;
use crate::analysis::trace::claims::{self, Claims};
use crate::harness::traced::{self, Outcome};
use crate::model::trace::Method;
use crate::platform::systrace::{self, TraceError};

/// How the calls were traced, for the heading: the backend's name and the words. A fallback
/// from eBPF is also said on stderr, in one line, so that a `--json` reader sees it too.
fn method(method: &Method) -> (&'static str, String) {
    if let Method::Recorded {
        not_counted: Some(why),
    } = method
    {
        crate::say!("oslab: note: {why}; recording every call instead (slower)");
    }
    match method {
        Method::Counted => (
            "ebpf",
            "eBPF programs on the raw_syscalls tracepoints, counting in the kernel (medians \
             from quarter-octave histograms)"
                .to_string(),
        ),
        Method::Recorded { not_counted: None } => (
            "perf_records",
            "perf_event records of the raw_syscalls tracepoints (a record per call, as \
             --records asked)"
                .to_string(),
        ),
        Method::Recorded {
            not_counted: Some(why),
        } => (
            "perf_records",
            format!(
                "perf_event records of the raw_syscalls tracepoints (a record per call; \
                 slower), because {why}"
            ),
        ),
    }
}

/// Operations in a traced pass without `--ops`: enough that one call of a partner at each
/// edge of the window is 0.0001 per op, few enough that the records of four calls per op fit
/// the ring buffers between two drains.
const DEFAULT_OPS: u64 = 10_000;
/// The most `--ops`: the records are kept in memory, two per call.
const MAX_OPS: u64 = 1_000_000;

/// Exit code when the traced pass differs from the claims.
const DIFFERS: u8 = 5;

pub(super) fn trace(args: &TraceArgs) -> Result<ExitCode> {
    if let Some(path) = &args.output {
        check_output_dir(path)?;
    }
    // Ctrl-C, SIGTERM and SIGHUP are noted, so that the traced command and what it started are
    // killed before oslab exits.
    crate::platform::interrupt::install();
    match &args.experiment {
        Some(name) => trace_experiment(name, args),
        None if args.ops.is_some() || !args.params.is_empty() => Err(UserError::BadOption(
            "--ops and --param belong to --experiment NAME; a command is traced whole".into(),
        )
        .into()),
        None if args.command.is_empty() => Err(UserError::BadOption(
            "trace what? give a command after -- (oslab trace -- /bin/true) or an experiment \
             (oslab trace --experiment syscall.getppid)"
                .into(),
        )
        .into()),
        None => trace_command(args),
    }
}

/// The line and the exit code of a trace that could not be made, or was interrupted; `shown`
/// is the user's command when `users` (else the configuration, whose worker oslab starts).
fn trace_error(e: TraceError, shown: &str, users: bool) -> anyhow::Error {
    match e {
        TraceError::Command(..) if users => {
            UserError::BadOption(format!("{e}; check the command's name and PATH")).into()
        }
        TraceError::Refused(why) => {
            UserError::BadOption(format!("cannot trace here: {why}")).into()
        }
        TraceError::Failed(why) => {
            UserError::BadOption(format!("cannot trace {shown}: {why}")).into()
        }
        TraceError::Command(..) => {
            UserError::BadOption(format!("cannot trace {shown}: {e}")).into()
        }
        TraceError::Interrupted(signal) => Interrupted {
            signal,
            kept: format!("{shown} and every process it started were killed; nothing was written"),
        }
        .into(),
    }
}

/// The tables or the document to standard output, or whole to `-o FILE`.
fn emit(args: &TraceArgs, text: &str) -> Result<()> {
    match &args.output {
        Some(path) => write_file(path, text),
        None => write_stdout(text),
    }
}

fn trace_command(args: &TraceArgs) -> Result<ExitCode> {
    let shown = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    // A document on standard output must not be interleaved with the command's own output.
    let stdout_to_stderr = args.json && args.output.is_none();
    let traced = systrace::trace_command(&args.command, stdout_to_stderr, args.records)
        .map_err(|e| trace_error(e, &shown, true))?;
    if traced.left_running > 0 {
        crate::say!(
            "oslab: note: the command left {} process{} running when it ended; killed with the \
             trace",
            traced.left_running,
            if traced.left_running == 1 { "" } else { "es" }
        );
    }
    let summary = crate::analysis::trace::summarize(
        &traced,
        &systrace::syscall_name,
        systrace::EXECVE,
        &systrace::EXITS,
    );
    let (status, code) = systrace::describe_status(traced.status);
    let (backend, method) = method(&traced.method);
    let heading = report::trace::Heading {
        command: &shown,
        status,
        wall_ns: traced.wall.as_nanos() as f64,
        backend,
        method: &method,
    };
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report::trace::json(&summary, &heading, code))?;
        s.push('\n');
        s
    } else {
        report::trace::render(&summary, &heading)
    };
    emit(args, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// The experiment, its parameters (one value each, defaults for the rest: a declared sweep is
/// not swept) and the operations asked for, checked as `run` checks them.
fn experiment_request(
    name: &str,
    args: &TraceArgs,
) -> Result<(&'static ExperimentInfo, experiment::Params, u64)> {
    let info =
        experiment::find(name).ok_or_else(|| UserError::UnknownExperiment(name.to_string()))?;
    let given: Vec<(String, String)> = args
        .params
        .iter()
        .map(|p| parse_assignment(p))
        .collect::<Result<_, _>>()?;
    check_param_names(&given, &[info])?;
    let params = experiment::Params::resolve(info.name, info.params, &given)?;
    let ops = args.ops.unwrap_or(DEFAULT_OPS);
    if !(1..=MAX_OPS).contains(&ops) {
        return Err(UserError::BadOption(format!(
            "--ops {ops}: give a number of operations from 1 to {MAX_OPS}"
        ))
        .into());
    }
    Ok((info, params, ops))
}

fn trace_experiment(name: &str, args: &TraceArgs) -> Result<ExitCode> {
    let (info, params, requested) = experiment_request(name, args)?;
    let planned = selection::Planned {
        info,
        params: params.clone(),
        label: None,
        load: None,
    };
    let dir = check_dir(None, std::slice::from_ref(&planned))?;
    let (ops, fixed) = traced::ops_for(info, &params, requested);
    let shown = report::trace::configuration(info.name, params.as_map());
    let outcome = traced::trace_experiment(info, &params, ops, &dir, args.records)
        .map_err(|e| trace_error(e, &shown, false))?;
    let (traced, ops) = match outcome {
        Outcome::Traced { traced, ops } => (traced, ops),
        Outcome::Unsupported(why) => {
            crate::say!("oslab: {shown} is unsupported here: {why}");
            return Ok(ExitCode::SUCCESS);
        }
        Outcome::Failed(why) => {
            crate::say!("oslab: {shown} failed: {why}");
            return Ok(ExitCode::from(3));
        }
    };
    let expectations = (info.expectations)(&params);
    let claimed = (info.syscalls)(&params);
    let claims = Claims {
        syscalls: &claimed,
        total: claims::syscalls_bound(&expectations),
    };
    let check = claims::check(
        &traced,
        systrace::MARK_NR,
        ops,
        &systrace::syscall_name,
        &claims,
    )
    .map_err(|why| anyhow::anyhow!("{shown}: {why}"))?;
    let (backend, method) = method(&traced.method);
    let heading = report::trace::CheckHeading {
        experiment: &shown,
        name: info.name,
        params: params.as_map(),
        fixed,
        requested,
        backend,
        method: &method,
        claimed: &claimed,
        lost: traced.lost,
    };
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report::trace::check_json(&check, &heading))?;
        s.push('\n');
        s
    } else {
        report::trace::render_check(&check, &heading)
    };
    emit(args, &text)?;
    Ok(if check.matches() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(DIFFERS)
    })
}

//! `oslab trace --experiment`: an experiment's real worker, started under the system-call
//! tracer (`platform::systrace`) with a job that asks for one traced pass instead of samples
//! (`Job::traced_ops`). The worker sets up exactly as for a run (placement, routine,
//! partner), then makes a marker call, runs the operations, and makes another; the trace
//! between the two markers is what one pass of the measured loop asks of the kernel.

use std::ffi::OsString;
use std::path::Path;

use crate::experiment::{Batch, ExperimentInfo, Params};
use crate::harness::drive::{Dirs, Outcome as DriveOutcome};
use crate::harness::worker::{Job, Message, PARENT_VAR};
use crate::measure::clock::{self, ClockChoice};
use crate::measure::sampler::SamplerConfig;
use crate::model::trace::Traced;
use crate::platform::systrace::{self, TraceCommand, TraceError};

/// The operations a traced pass runs: the request, or the fixed count of an experiment whose
/// pass is fixed by its parameters (`Batch::Fixed`); `true` when the latter replaced it.
pub fn ops_for(info: &ExperimentInfo, params: &Params, requested: u64) -> (u64, bool) {
    match info.batch {
        Batch::Fixed(ops) => (ops(params), true),
        Batch::Sized => (requested, false),
    }
}

/// How a traced pass ended.
pub enum Outcome {
    /// The worker ran `ops` operations between the markers.
    Traced { traced: Traced, ops: u64 },
    /// The experiment cannot run here; the reason.
    Unsupported(String),
    /// The worker failed; the reason, in one line.
    Failed(String),
}

/// Trace one pass of `ops` operations of `info` with `params` in a fresh worker pinned to the
/// last allowed CPU (the highest other one for a partner: which calls it makes does not
/// depend on the CPU, unlike their time, for which `run` takes the quietest), its
/// work directory (if it has one) in `dir`; `records`: a record per call instead of counting
/// in the kernel. `Err`: the tracer could not run here.
pub fn trace_experiment(
    info: &'static ExperimentInfo,
    params: &Params,
    ops: u64,
    dir: &Path,
    records: bool,
) -> Result<Outcome, TraceError> {
    if let Some(why) = info.not_here() {
        return Ok(Outcome::Unsupported(why));
    }
    let exe = std::env::current_exe()
        .map_err(|e| TraceError::Failed(format!("cannot find the oslab binary: {e}")))?;
    let dirs = match Dirs::create(info, dir) {
        Ok(dirs) => dirs,
        Err(DriveOutcome::Failed(why) | DriveOutcome::Unsupported(why)) => {
            return Ok(Outcome::Failed(why));
        }
        Err(DriveOutcome::Done(_)) => unreachable!("creating directories runs nothing"),
    };
    let job = job(info, params, ops, &dirs);
    let command = TraceCommand {
        argv: vec![exe.into_os_string(), "worker".into()],
        stdin: Some(serde_json::to_vec(&job).map_err(|e| TraceError::Failed(e.to_string()))?),
        capture_stdout: true,
        stdout_to_stderr: false,
        env: vec![
            (PARENT_VAR.into(), std::process::id().to_string().into()),
            (crate::experiment::PROCESS_VAR.into(), OsString::from("0")),
        ],
        marked: true,
        records,
    };
    let traced = systrace::trace(&command)?;
    // Only now: the worker and its partner have gone.
    drop(dirs);
    Ok(ending(traced))
}

/// The worker's job: a traced pass, placed as `oslab run` places the first process.
fn job(info: &ExperimentInfo, params: &Params, ops: u64, dirs: &Dirs) -> Job {
    let allowed = crate::platform::cpu::allowed();
    let cpu = allowed.last().copied();
    let (clock, _) = clock::choose(ClockChoice::Monotonic);
    Job {
        experiment: info.name.to_string(),
        params: params.as_map().clone(),
        cpus: cpu.into_iter().collect(),
        other_cpu: allowed.iter().rev().copied().find(|&c| Some(c) != cpu),
        free_cpus: allowed.clone(),
        scratch_dir: dirs.scratch.as_ref().map(|d| d.path().to_path_buf()),
        work_dir: dirs.work.as_ref().map(|d| d.path().to_path_buf()),
        clock: clock.info("a traced pass is not timed".into()),
        sampler: SamplerConfig::quick(),
        cgroup_procs: None,
        layout: None,
        probes: false,
        profile: None,
        traced_ops: Some(ops),
        synced: false,
        copy_cpus: Vec::new(),
        shared_dir: None,
        partner: None,
    }
}

/// How the worker ended, from its last message (or its exit status when it sent none).
fn ending(traced: Traced) -> Outcome {
    let text = String::from_utf8_lossy(&traced.stdout).into_owned();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(serde_json::from_str::<Message>);
    match last {
        Some(Ok(Message::Traced { ops })) => Outcome::Traced { traced, ops },
        Some(Ok(Message::Unsupported { reason })) => Outcome::Unsupported(reason),
        Some(Ok(Message::Failed { reason })) => Outcome::Failed(reason),
        Some(Ok(other)) => Outcome::Failed(format!("the worker ended with {other:?}")),
        Some(Err(e)) => Outcome::Failed(format!("unreadable worker output ({e}): {text:.200}")),
        None => Outcome::Failed(format!(
            "the worker said nothing and ended with {}",
            systrace::describe_status(traced.status).0
        )),
    }
}

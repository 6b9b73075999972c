//! The parent side of a run: start one worker per experiment, read its samples, enforce the
//! time limit, reap it with wait4, judge the result against its expectations, and hand it to
//! the store at once. A worker that crashes, is killed or times out becomes a failed result
//! with its reason, and the run goes on.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::analysis::validate;
use crate::experiment::params::parse_size;
use crate::experiment::plan::Planned;
use crate::experiment::{ExperimentInfo, Params, SetupError};
use crate::harness::worker::{Job, Message};
use crate::measure::load::{self, Load};
use crate::measure::sampler::SamplerConfig;
use crate::model::{Calibration, ClockInfo, ExperimentResult, Sample, Status, StopReason};
use crate::platform::cpustat::CpuTimes;

/// How every experiment of a run is measured.
#[derive(Debug, Clone)]
pub struct Plan {
    pub sampler: SamplerConfig,
    pub cpus: Vec<usize>,
    /// Another CPU for cross-CPU placements, if this process may use one.
    pub other_cpu: Option<usize>,
    /// Background load started beside every worker.
    pub load: Option<Load>,
    /// Where experiments with a work directory create it (`--dir`; default: the current
    /// directory).
    pub dir: PathBuf,
    pub clock: ClockInfo,
    /// Hard limit per worker; by default twice the budget plus time for setup.
    pub timeout: Duration,
    /// The limit is the default one, which a whole-pass experiment may stretch once it knows
    /// how long a pass takes (see `fixed_batch_deadline`); `--timeout` is kept as given.
    pub stretch_timeout: bool,
}

impl Plan {
    pub fn default_timeout(sampler: &SamplerConfig) -> Duration {
        Duration::from_secs_f64(sampler.budget_s * 2.0 + 20.0)
    }
}

/// Run one planned experiment in a fresh worker and judge it.
pub fn run_experiment(
    planned: &Planned,
    plan: &Plan,
    on_sample: &mut dyn FnMut(&[Sample]),
) -> ExperimentResult {
    let (info, params) = (planned.info, &planned.params);
    let started_at = unix_now();
    let start = Instant::now();
    let mut result = ExperimentResult {
        experiment: info.name.to_string(),
        params: params.as_map().clone(),
        unit: info.unit(),
        status: Status::Failed,
        reason: None,
        stop_reason: None,
        calibration: Calibration::default(),
        samples: Vec::new(),
        probes: Vec::new(),
        counters: Vec::new(),
        validation: Vec::new(),
        other_cpus_busy: None,
        facts: Vec::new(),
        label: planned.label.clone(),
        load: None,
        started_at,
        duration_s: 0.0,
    };
    if !info.os.contains(&crate::platform::CURRENT) {
        result.status = Status::Unsupported;
        let list: Vec<&str> = info.os.iter().map(|o| o.name()).collect();
        result.reason = Some(format!(
            "runs on {} only, not on {}",
            list.join(", "),
            crate::platform::CURRENT
        ));
        return result;
    }
    // A configuration's own load (a suite's) replaces the run's --load.
    let wanted = match planned.load {
        Some(name) => match Load::parse(name) {
            Some(l) => Some(l),
            None => {
                result.reason = Some(format!("unknown load `{name}`"));
                return result;
            }
        },
        None => plan.load.clone(),
    };
    // The load runs for exactly the worker's lifetime: started first, killed when it drops.
    // A memory load sizes its cgroup from the experiment's size.
    let size_hint = params.get("size").and_then(parse_size);
    let running_load = match &wanted {
        Some(l) => {
            let measured = plan.cpus.first().copied();
            match load::Running::start(l, measured, plan.other_cpu, size_hint) {
                Ok(running) => Some(running),
                Err(SetupError::Unsupported(reason)) => {
                    result.status = Status::Unsupported;
                    result.reason = Some(format!("--load {}: {reason}", l.name()));
                    return result;
                }
                Err(SetupError::Failed(reason)) => {
                    let name = l.name();
                    result.reason = Some(format!("cannot start the --load {name} load: {reason}"));
                    return result;
                }
            }
        }
        None => None,
    };
    let cgroup_procs = running_load.as_ref().and_then(load::Running::cgroup_procs);
    let cpu_times = CpuTimes::now();
    let outcome = drive_worker(info, params, plan, cgroup_procs, &mut result, on_sample);
    result.other_cpus_busy = cpu_times.busy_since(&CpuTimes::now(), &plan.cpus);
    result.load = running_load.as_ref().map(load::Running::record);
    drop(running_load);
    result.duration_s = start.elapsed().as_secs_f64();
    match outcome {
        Outcome::Done(stop) if result.samples.is_empty() => {
            result.stop_reason = Some(stop);
            result.reason = Some("the worker finished without a sample".into());
        }
        Outcome::Done(stop) => {
            result.stop_reason = Some(stop);
            judge(info, params, &mut result);
        }
        Outcome::Unsupported(reason) => {
            result.status = Status::Unsupported;
            result.reason = Some(reason);
        }
        Outcome::Failed(reason) => {
            result.reason = Some(reason);
        }
    }
    result
}

/// Check the expectations and settle the status of a measured result.
pub fn judge(info: &ExperimentInfo, params: &Params, result: &mut ExperimentResult) {
    let expectations = (info.expectations)(params);
    result.validation = validate::check(
        &expectations,
        &result.samples,
        &result.probes,
        &result.counters,
        &result.facts,
    );
    match validate::suspect_reason(&result.validation) {
        Some(reason) => {
            result.status = Status::Suspect;
            result.reason = Some(reason);
        }
        None => {
            result.status = Status::Ok;
            result.reason = None;
        }
    }
}

enum Outcome {
    Done(StopReason),
    Unsupported(String),
    Failed(String),
}

fn drive_worker(
    info: &ExperimentInfo,
    params: &Params,
    plan: &Plan,
    cgroup_procs: Option<PathBuf>,
    result: &mut ExperimentResult,
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return Outcome::Failed(format!(
                "cannot find the oslab binary to start a worker: {e}"
            ));
        }
    };
    // A private directory for the worker's files, removed by the parent after reaping it, so
    // nothing is left behind even when the worker is killed before its own clean-up runs.
    let scratch = tempfile::Builder::new()
        .prefix("oslab-worker-")
        .tempdir()
        .ok();
    let work = if info.work_dir {
        match tempfile::Builder::new()
            .prefix(".oslab-")
            .tempdir_in(&plan.dir)
        {
            Ok(dir) => Some(dir),
            Err(e) => {
                return Outcome::Failed(format!(
                    "cannot create a directory in {}: {e}",
                    plan.dir.display()
                ));
            }
        }
    } else {
        None
    };
    let job = Job {
        experiment: info.name.to_string(),
        params: params.as_map().clone(),
        cpus: plan.cpus.clone(),
        other_cpu: plan.other_cpu,
        scratch_dir: scratch.as_ref().map(|d| d.path().to_path_buf()),
        work_dir: work.as_ref().map(|d| d.path().to_path_buf()),
        clock: plan.clock.clone(),
        sampler: plan.sampler.clone(),
        cgroup_procs,
    };
    let mut child = match Command::new(&exe)
        .arg("worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a time-out kills whatever the worker started too.
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return Outcome::Failed(format!("cannot start a worker ({}): {e}", exe.display()));
        }
    };
    let pid = child.id() as libc::pid_t;

    if let Some(mut stdin) = child.stdin.take() {
        let job_json = serde_json::to_string(&job).unwrap_or_default();
        // A worker that died at once is reported below through its exit status.
        let _ = stdin.write_all(job_json.as_bytes());
    }

    let (tx, rx) = mpsc::channel::<Result<Message, String>>();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let parsed = serde_json::from_str::<Message>(&line)
                    .map_err(|e| format!("unreadable worker output ({e}): {line:.200}"));
                if tx.send(parsed).is_err() {
                    break;
                }
            }
        });
    }
    let stderr_thread = child.stderr.take().map(|mut stderr| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        })
    });

    let started = Instant::now();
    let mut deadline = started + plan.timeout;
    let mut outcome: Option<Outcome> = None;
    let mut timed_out = false;
    loop {
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            break;
        }
        if let Some(signal) = crate::platform::interrupt::requested() {
            outcome = Some(Outcome::Failed(format!(
                "interrupted by {} ({} samples kept)",
                crate::platform::interrupt::signal_name(signal),
                result.samples.len()
            )));
            break;
        }
        // Wake at least every 100 ms to notice an interruption.
        match rx.recv_timeout((deadline - now).min(Duration::from_millis(100))) {
            Ok(Ok(message)) => match message {
                Message::Counters { counters } => result.counters = counters,
                Message::Calibration(c) => {
                    if let Some(later) = fixed_batch_deadline(info, plan, &c) {
                        deadline = deadline.max(later);
                    }
                    result.calibration = c;
                }
                Message::Sample(s) => {
                    result.samples.push(s);
                    on_sample(&result.samples);
                }
                Message::Probes { counters, probes } => {
                    result.counters.extend(counters);
                    result.probes = probes;
                }
                Message::Facts { facts } => result.facts = facts,
                Message::Done { stop_reason } => outcome = Some(Outcome::Done(stop_reason)),
                Message::Unsupported { reason } => outcome = Some(Outcome::Unsupported(reason)),
                Message::Failed { reason } => outcome = Some(Outcome::Failed(reason)),
            },
            Ok(Err(garbled)) => outcome = Some(Outcome::Failed(garbled)),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if outcome.is_some() {
            break;
        }
    }
    if timed_out || matches!(outcome, Some(Outcome::Failed(_))) {
        kill_group(pid);
    }
    let status = reap(pid);
    // Anything the worker started and left behind (a grandchild holding its pipes) goes too.
    kill_group(pid);
    drop(scratch);
    drop(work);
    let stderr_text = stderr_thread
        .and_then(|t| t.join().ok())
        .unwrap_or_default();

    if timed_out {
        return Outcome::Failed(format!(
            "timed out after {:.0} s and was killed ({} samples kept)",
            (deadline - started).as_secs_f64(),
            result.samples.len()
        ));
    }
    if let Some(outcome) = outcome {
        return outcome;
    }
    Outcome::Failed(describe_exit(status, &stderr_text, result.samples.len()))
}

/// For an experiment whose sample is one whole pass (`Batch::Fixed`), the default time limit
/// may be shorter than the passes it needs: a 1 GiB pass of the mmap lab takes 3–4 s here, and
/// a worker takes at least three samples and a probe pass after its warm-up. Once the warm-up
/// has timed a pass (it ran at least one), the limit grows to what the budget plus five more
/// passes need, with 10 s to spare. `None`: keep the limit (a sized batch, or `--timeout`).
fn fixed_batch_deadline(
    info: &ExperimentInfo,
    plan: &Plan,
    calibration: &Calibration,
) -> Option<Instant> {
    if !plan.stretch_timeout || !matches!(info.batch, crate::experiment::Batch::Fixed(_)) {
        return None;
    }
    let pass_s = calibration.warmup_ns / 1e9;
    let need = plan.sampler.budget_s + 5.0 * pass_s + 10.0;
    need.is_finite()
        .then(|| Instant::now() + Duration::from_secs_f64(need))
}

fn kill_group(pid: libc::pid_t) {
    // SAFETY: signalling the worker's own process group, which it leads.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}

/// Wait for the worker with wait4(2); returns its wait status.
fn reap(pid: libc::pid_t) -> Option<i32> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; the pointers are to locals.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            return Some(status);
        }
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
}

fn describe_exit(status: Option<i32>, stderr: &str, samples: usize) -> String {
    let tail: String = stderr
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default();
    let how = match status {
        Some(s) if libc::WIFSIGNALED(s) => {
            let sig = libc::WTERMSIG(s);
            format!(
                "the worker was killed by signal {} ({sig})",
                signal_name(sig)
            )
        }
        Some(s) if libc::WIFEXITED(s) => {
            format!(
                "the worker exited with code {} before finishing",
                libc::WEXITSTATUS(s)
            )
        }
        _ => "the worker vanished".to_string(),
    };
    format!("{how}{tail} ({samples} samples kept)")
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGINT => "SIGINT",
        _ => "signal",
    }
}

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

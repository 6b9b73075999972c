//! Driving one worker process: start it with its job, read the messages it streams, enforce
//! the time limit, then kill what it left behind, reap it and say how it ended.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::experiment::{ExperimentInfo, Params};
use crate::harness::gate::{Gate, Meeting, Place, Role};
use crate::harness::layout::ENV_PAD_VAR;
use crate::harness::plan::Plan;
use crate::harness::scratch;
use crate::harness::worker::{Job, Message};
use crate::measure::sampler::SamplerConfig;
use crate::model::passes::Passes;
use crate::model::{Calibration, ExperimentResult, Sample, StopReason};
use crate::platform::process::{Group, ending};

/// How a worker ended, as far as the runner's verdict is concerned.
#[derive(Clone)]
pub(super) enum Outcome {
    Done(StopReason),
    Unsupported(String),
    Failed(String),
}

/// What the worker's stdout reader hands over: a message, or the line it could not parse.
type Line = Result<Message, Garbled>;

/// What wakes the harness while its worker runs: a line of the worker's, the end of its output,
/// or the user's request to stop. The harness sleeps until one comes (or the time limit), so
/// that it is no third task waking beside the processes it measures.
enum Event {
    Line(Box<Line>),
    Closed,
    Interrupted,
}

/// A line of the worker's output that is not a message of the protocol.
#[derive(Debug, thiserror::Error)]
#[error("unreadable worker output ({source}): {line:.200}")]
struct Garbled {
    line: String,
    #[source]
    source: serde_json::Error,
}

/// A started worker: its process group, its parsed output and its stderr being collected.
struct Worker {
    child: Child,
    /// Kept open for a synced copy's `go` and release (`Job::synced`); else closed at once.
    stdin: Option<ChildStdin>,
    group: Group,
    messages: mpsc::Receiver<Event>,
    stderr: Option<JoinHandle<String>>,
    /// Sends `Event::Interrupted` on Ctrl-C while the worker runs.
    _woken: crate::platform::interrupt::Subscription,
}

/// The directories a worker uses, removed by the parent after reaping it, so nothing is left
/// behind even when the worker is killed before its own clean-up runs.
pub(super) struct Dirs {
    /// A private directory for the worker's files.
    pub(super) scratch: Option<TempDir>,
    /// The experiment's directory on the file system under test (`ExperimentInfo::work_dir`).
    pub(super) work: Option<TempDir>,
}

/// The time limit: `at` may move later once the worker has timed a whole pass.
struct Deadline {
    started: Instant,
    at: Instant,
}

/// Why the reading loop stopped.
enum Ending {
    TimedOut,
    /// The worker said how it ended, or its output closed without saying (`None`).
    Ended(Option<Outcome>),
}

/// Run one experiment in a fresh worker, filling `results[0]` with what it streams; `role`
/// says how it takes part in its configuration's copies. A second result is a duet's partner
/// (`harness::duet`): the worker measures its parameters too, in turn with the first's.
pub(super) fn drive_worker(
    info: &ExperimentInfo,
    params: &Params,
    plan: &Plan,
    cgroup_procs: Option<PathBuf>,
    role: Role,
    results: &mut [ExperimentResult],
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
    let dirs = match Dirs::create(info, &plan.dir) {
        Ok(dirs) => dirs,
        Err(outcome) => return outcome,
    };
    let passes = Passes::of(params.as_map());
    let job = Job {
        experiment: info.name.to_string(),
        params: params.as_map().clone(),
        cpus: plan.cpus.clone(),
        other_cpu: plan.other_cpu,
        free_cpus: plan.free_cpus.clone(),
        scratch_dir: dirs.scratch.as_ref().map(|d| d.path().to_path_buf()),
        work_dir: dirs.work.as_ref().map(|d| d.path().to_path_buf()),
        clock: plan.clock.clone(),
        sampler: SamplerConfig {
            passes,
            ..plan.sampler.clone()
        },
        cgroup_procs,
        layout: plan.layout,
        probes: plan.probes,
        profile: plan.profile,
        traced_ops: None,
        synced: role.gate.is_some(),
        copy_cpus: role.copy_cpus,
        shared_dir: role.shared_dir,
        partner: results.get(1).map(|r| r.params.clone()),
    };
    let mut place = role.gate.map(Gate::place);
    let mut worker = match spawn(&exe, &job) {
        Ok(worker) => worker,
        Err(outcome) => return outcome,
    };
    let started = Instant::now();
    let mut deadline = Deadline {
        started,
        at: started + plan.timeout + passes_time(plan, passes),
    };
    let mut copy = place.as_mut().map(|place| Copy {
        place,
        stdin: &mut worker.stdin,
    });
    let ending = follow(
        &worker.messages,
        (info, plan),
        &mut deadline,
        copy.as_mut(),
        results,
        on_sample,
    );
    // A copy that finished waits for the others, then releases its worker from its hold.
    if let (Some(place), Ending::Ended(Some(Outcome::Done(_)))) = (place.as_mut(), &ending) {
        place.meet(Meeting::Done, deadline.at);
    }
    drop(place);
    worker.stdin = None;
    collect(worker, dirs, ending, &deadline, results[0].samples.len())
}

/// A synced copy's side of the meetings: its place, and the worker's stdin to say `go` on.
struct Copy<'p, 'g> {
    place: &'p mut Place<'g>,
    stdin: &'p mut Option<ChildStdin>,
}

impl Copy<'_, '_> {
    /// Every copy is set up (or the time is up): let this one's worker start sampling.
    fn release(&mut self, until: Instant) {
        self.place.meet(Meeting::SetUp, until);
        if let Some(stdin) = self.stdin.as_mut() {
            // A worker that died since is reported through its exit status.
            let _ = stdin.write_all(b"go\n").and_then(|()| stdin.flush());
        }
    }
}

impl Dirs {
    /// A scratch directory, and for an experiment with a work directory one in `dir`.
    pub(super) fn create(info: &ExperimentInfo, dir: &Path) -> Result<Dirs, Outcome> {
        let scratch = scratch::create(&std::env::temp_dir(), scratch::SCRATCH_PREFIX).ok();
        if !info.work_dir {
            return Ok(Dirs {
                scratch,
                work: None,
            });
        }
        match scratch::create(dir, scratch::WORK_PREFIX) {
            Ok(dir) => Ok(Dirs {
                scratch,
                work: Some(dir),
            }),
            Err(e) => Err(Outcome::Failed(format!(
                "cannot create a directory in {}: {e}",
                dir.display()
            ))),
        }
    }
}

/// Start `oslab worker` in a process group of its own (a job object on Windows), give it its
/// job on stdin, and read its stdout and stderr on threads of their own.
fn spawn(exe: &Path, job: &Job) -> Result<Worker, Outcome> {
    let mut command = Command::new(exe);
    if let Some(layout) = &job.layout {
        command.env(ENV_PAD_VAR, layout.env_value());
    }
    command
        .arg("worker")
        .env(
            crate::harness::worker::PARENT_VAR,
            std::process::id().to_string(),
        )
        .env(
            crate::experiment::PROCESS_VAR,
            job.layout.map_or(0, |l| l.process).to_string(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group, so a time-out kills whatever the worker started too.
    Group::prepare(&mut command);
    let failed = |e: std::io::Error| {
        Outcome::Failed(format!("cannot start a worker ({}): {e}", exe.display()))
    };
    let mut child = command.spawn().map_err(failed)?;
    // Before the worker has its job, so it cannot have started anything outside the group.
    let group = match Group::of(&child) {
        Ok(group) => group,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(e));
        }
    };

    let mut stdin = child.stdin.take();
    if let Some(pipe) = stdin.as_mut() {
        let job_json = serde_json::to_string(job).unwrap_or_default();
        // A worker that died at once is reported later through its exit status.
        let _ = writeln!(pipe, "{job_json}").and_then(|()| pipe.flush());
    }
    // Closed now, unless the worker waits on it for `go` and its release.
    let stdin = stdin.filter(|_| job.synced);

    let (tx, messages) = mpsc::channel::<Event>();
    let interrupts = tx.clone();
    let woken = crate::platform::interrupt::on_request(move || {
        let _ = interrupts.send(Event::Interrupted);
    });
    match child.stdout.take() {
        Some(stdout) => {
            std::thread::spawn(move || read_messages(stdout, &tx));
        }
        None => {
            let _ = tx.send(Event::Closed);
        }
    }
    let stderr = child.stderr.take().map(|mut stderr| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        })
    });
    Ok(Worker {
        child,
        stdin,
        group,
        messages,
        stderr,
        _woken: woken,
    })
}

/// The worker protocol: one JSON [`Message`] per line, until the pipe closes or nobody listens;
/// then `Event::Closed`.
fn read_messages(stdout: ChildStdout, tx: &mpsc::Sender<Event>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let parsed =
            serde_json::from_str::<Message>(&line).map_err(|source| Garbled { line, source });
        if tx.send(Event::Line(Box::new(parsed))).is_err() {
            return;
        }
    }
    let _ = tx.send(Event::Closed);
}

/// Take the worker's messages into `results` (its own, and a duet's partner's) until it says
/// how it ended, its output closes, the time limit passes or the user interrupts the run.
fn follow(
    messages: &mpsc::Receiver<Event>,
    (info, plan): (&ExperimentInfo, &Plan),
    deadline: &mut Deadline,
    mut copy: Option<&mut Copy>,
    results: &mut [ExperimentResult],
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Ending {
    loop {
        let now = Instant::now();
        if now >= deadline.at {
            return Ending::TimedOut;
        }
        if let Some(signal) = crate::platform::interrupt::requested() {
            return Ending::Ended(Some(Outcome::Failed(format!(
                "interrupted by {} ({} samples kept)",
                crate::platform::interrupt::signal_name(signal),
                results[0].samples.len()
            ))));
        }
        // Asleep until the worker speaks, the time limit or an interruption (`Event::Interrupted`,
        // seen at the top of the loop).
        let line = match messages.recv_timeout(deadline.at - now) {
            Ok(Event::Line(line)) => *line,
            Ok(Event::Interrupted) | Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Ok(Event::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Ending::Ended(None);
            }
        };
        let outcome = match line {
            Ok(Message::Ready) => {
                if let Some(copy) = copy.as_mut() {
                    copy.release(deadline.at);
                }
                None
            }
            Ok(message) => take(message, (info, plan), deadline, results, on_sample),
            Err(garbled) => Some(Outcome::Failed(garbled.to_string())),
        };
        if outcome.is_some() {
            return Ending::Ended(outcome);
        }
    }
}

/// One message into `results[0]` (a partner's into the next); the worker's last message is its
/// outcome.
fn take(
    message: Message,
    (info, plan): (&ExperimentInfo, &Plan),
    deadline: &mut Deadline,
    results: &mut [ExperimentResult],
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Option<Outcome> {
    let (result, partner) = results.split_first_mut()?;
    match message {
        Message::Counters { counters } => result.counters = counters,
        // Only a synced copy says it, and `follow` answers it.
        Message::Ready => {}
        Message::Calibration(c) => {
            if let Some(later) = fixed_batch_deadline(info, plan, &c) {
                deadline.at = deadline.at.max(later);
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
        Message::Profile(profile) => result.profile = Some(profile),
        Message::Done { stop_reason } => return Some(Outcome::Done(stop_reason)),
        Message::Unsupported { reason } => return Some(Outcome::Unsupported(reason)),
        Message::Failed { reason } => return Some(Outcome::Failed(reason)),
        Message::Traced { .. } => {
            return Some(Outcome::Failed(
                "the worker ran a traced pass instead of sampling".into(),
            ));
        }
        Message::Partner { message } if partner.is_empty() => {
            return Some(Outcome::Failed(format!(
                "the worker sent a partner's {} message, but it measures no partner",
                message.kind()
            )));
        }
        Message::Partner { message } => {
            return take(*message, (info, plan), deadline, partner, &mut |_| {});
        }
    }
    None
}

/// Kill the worker if it must not go on, reap it, remove its directories, and turn how it
/// ended into the outcome.
fn collect(
    mut worker: Worker,
    dirs: Dirs,
    ending: Ending,
    deadline: &Deadline,
    samples: usize,
) -> Outcome {
    let timed_out = matches!(ending, Ending::TimedOut);
    if timed_out || matches!(ending, Ending::Ended(Some(Outcome::Failed(_)))) {
        worker.group.kill();
    }
    let status = worker.child.wait().ok();
    // Anything the worker started and left behind (a grandchild holding its pipes) goes too.
    worker.group.kill();
    drop(dirs);
    let stderr_text = worker
        .stderr
        .and_then(|t| t.join().ok())
        .unwrap_or_default();
    match ending {
        Ending::TimedOut => Outcome::Failed(format!(
            "timed out after {:.0} s and was killed ({samples} samples kept)",
            (deadline.at - deadline.started).as_secs_f64(),
        )),
        Ending::Ended(Some(outcome)) => outcome,
        Ending::Ended(None) => Outcome::Failed(describe_exit(status, &stderr_text, samples)),
    }
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
    // A pass time from a garbled message must not overflow the clock: no limit past a week.
    (need.is_finite() && need > 0.0)
        .then(|| Duration::from_secs_f64(need.min(7.0 * 86_400.0)))
        .and_then(|d| Instant::now().checked_add(d))
}

/// The time timed passes add to a worker's limit, unless the user set `--timeout`: twice
/// what they take, as a pass may start the way its peer's program does (fstime's 15 s of
/// writes, reads, syncs and sleep before a 30 s copy: `Routine::before_pass`).
fn passes_time(plan: &Plan, passes: Option<Passes>) -> Duration {
    match passes {
        Some(p) if plan.stretch_timeout => Duration::from_secs_f64(p.total_s() * 2.0),
        _ => Duration::ZERO,
    }
}

fn describe_exit(status: Option<ExitStatus>, stderr: &str, samples: usize) -> String {
    let tail: String = stderr
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default();
    let how = match status.map(ending) {
        Some(Err(killer)) => format!("the worker was killed by {killer}"),
        Some(Ok(code)) => format!("the worker exited with code {code} before finishing"),
        None => "the worker vanished".to_string(),
    };
    format!("{how}{tail} ({samples} samples kept)")
}

//! The worker: a fresh process (the binary re-executed as the hidden `oslab worker`
//! subcommand) that runs one experiment, so its address space, rusage and counters are its
//! own. It reads a [`Job`] as JSON on stdin and streams [`Message`]s as JSON lines on stdout.

use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};

use serde::{Deserialize, Serialize};

use crate::experiment::{self, Context, ExperimentInfo, Params, SetupError};
use crate::harness::layout::Layout;
use crate::measure::clock::Clock;
use crate::measure::sampler::{self, Progress, SamplerConfig};
use crate::model::profile::{Profile, ProfileRequest};
use crate::model::{Calibration, ClockInfo, CounterStatus, Fact, ProbeCount, Sample, StopReason};
use crate::platform::counters::CounterSet;
use crate::platform::cpu;

/// What the parent asks a worker to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub experiment: String,
    pub params: BTreeMap<String, String>,
    pub cpus: Vec<usize>,
    /// Another CPU the experiment may use (cross-CPU placements).
    #[serde(default)]
    pub other_cpu: Option<usize>,
    /// A private directory the parent removes after the worker has gone.
    #[serde(default)]
    pub scratch_dir: Option<std::path::PathBuf>,
    /// The experiment's directory on the file system under test (see `ExperimentInfo::work_dir`).
    #[serde(default)]
    pub work_dir: Option<std::path::PathBuf>,
    pub clock: ClockInfo,
    pub sampler: SamplerConfig,
    /// The `cgroup.procs` file of a memory load's cgroup (`--load memory`): the worker joins
    /// it before setup maps anything, so the pressure falls on the experiment's own memory.
    #[serde(default)]
    pub cgroup_procs: Option<std::path::PathBuf>,
    /// How this process's layout is varied (see `harness::layout`).
    #[serde(default)]
    pub layout: Option<Layout>,
    /// Count the probe events after the samples (see `Plan::for_process`).
    #[serde(default = "counts_probes")]
    pub probes: bool,
    /// Profile the routine after everything else (`measure::profile`).
    #[serde(default)]
    pub profile: Option<ProfileRequest>,
    /// Instead of sampling, run this many operations once between two marker calls
    /// (`platform::systrace::mark`), for `oslab trace --experiment` (`harness::traced`). The
    /// parent has already replaced it with the fixed count of a `Batch::Fixed` experiment.
    #[serde(default)]
    pub traced_ops: Option<u64>,
}

fn counts_probes() -> bool {
    true
}

/// One line of the worker's output.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    Counters {
        counters: Vec<CounterStatus>,
    },
    Calibration(Calibration),
    Sample(Sample),
    /// Counts taken after sampling, with the statuses of the events counted that way.
    Probes {
        counters: Vec<CounterStatus>,
        probes: Vec<ProbeCount>,
    },
    /// Figures measured besides the timed operation (`Routine::facts`).
    Facts {
        facts: Vec<Fact>,
    },
    /// The stacks of the profile pass, taken last.
    Profile(Profile),
    Done {
        stop_reason: StopReason,
    },
    /// The last message of a traced pass (`Job::traced_ops`): the operations run between
    /// the two markers.
    Traced {
        ops: u64,
    },
    Unsupported {
        reason: String,
    },
    Failed {
        reason: String,
    },
}

/// The variable that carries the pid of the oslab that started the worker.
pub const PARENT_VAR: &str = "OSLAB_WORKER_PARENT";

/// Entry point of `oslab worker`. Returns the process exit code.
pub fn main() -> i32 {
    // Die with the parent (Ctrl-C, kill): a worker must never outlive oslab. An oslab killed
    // before this line ran cannot stop the worker any more, so the worker stops itself.
    let parent = std::env::var(PARENT_VAR).ok().and_then(|p| p.parse().ok());
    match parent {
        Some(parent) if !crate::platform::process::die_with_parent_of(parent) => return 1,
        Some(_) => {}
        None => crate::platform::process::die_with_parent(),
    }

    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let outcome = run(&mut out);
    let last = match outcome {
        Ok(last) => last,
        Err(SetupError::Unsupported(reason)) => Message::Unsupported { reason },
        Err(SetupError::Failed(reason)) => Message::Failed { reason },
    };
    let ok = send(&mut out, &last).and_then(|()| out.flush().map_err(|e| e.to_string()));
    if ok.is_err() { 1 } else { 0 }
}

fn send(out: &mut impl Write, message: &Message) -> Result<(), String> {
    let line = serde_json::to_string(message).map_err(|e| e.to_string())?;
    writeln!(out, "{line}").map_err(|e| format!("cannot write to the parent: {e}"))
}

/// The job's work; `Ok` is the last message to send.
fn run(out: &mut impl Write) -> Result<Message, SetupError> {
    let job = read_job()?;
    let info = prepare(&job)?;
    // Before anything of the experiment's is allocated, and kept to the end.
    let _heap_pad = job.layout.map(|l| l.pad_heap());
    if let Some(ops) = job.traced_ops {
        return traced_pass(&job, info, ops);
    }
    let mut counters = if info.counters_in_samples {
        CounterSet::open()
    } else {
        CounterSet::none()
    };
    send(
        out,
        &Message::Counters {
            counters: counters.statuses().to_vec(),
        },
    )
    .map_err(SetupError::Failed)?;

    let params = Params::from_map(job.params.clone());
    let mut routine = (info.setup)(&params, &context(&job))?;
    let fixed_ops = match info.batch {
        experiment::Batch::Fixed(ops) => Some(ops(&params)),
        experiment::Batch::Sized => None,
    };
    let sampled = sample(out, &job, info, routine.as_mut(), fixed_ops, &mut counters)?;

    // Only now, with the timed samples done, the events that would have slowed them.
    drop(counters);
    if job.probes {
        let mut probes = CounterSet::open_probes(!info.counters_in_samples);
        let counts = sampler::count_probes(
            routine.as_mut(),
            &mut probes,
            sampled.ops_per_sample,
            fixed_ops.is_some(),
        )
        .map_err(SetupError::Failed)?;
        let message = Message::Probes {
            counters: probes.statuses().to_vec(),
            probes: counts,
        };
        send(out, &message).map_err(SetupError::Failed)?;
    }
    let facts = routine.facts();
    if !facts.is_empty() {
        send(out, &Message::Facts { facts }).map_err(SetupError::Failed)?;
    }
    // Last, so neither the samples, the probes nor the facts see the sampler.
    if let Some(request) = &job.profile {
        let profile = crate::measure::profile::profile_pass(
            routine.as_mut(),
            sampled.ops_per_sample,
            fixed_ops.is_some(),
            request,
        );
        send(out, &Message::Profile(profile)).map_err(SetupError::Failed)?;
    }
    Ok(Message::Done {
        stop_reason: sampled.stop_reason,
    })
}

/// The experiment's setup as for sampling, then one untimed pass of `ops` operations between
/// two marker calls: the window a tracer reads (`harness::traced`). Nothing else runs in it,
/// and nothing is sent until it has ended.
fn traced_pass(job: &Job, info: &ExperimentInfo, ops: u64) -> Result<Message, SetupError> {
    let params = Params::from_map(job.params.clone());
    let mut routine = (info.setup)(&params, &context(job))?;
    routine.prepare(ops).map_err(SetupError::Failed)?;
    crate::platform::systrace::mark();
    let ran = routine.run(ops);
    crate::platform::systrace::mark();
    ran.map_err(SetupError::Failed)?;
    Ok(Message::Traced { ops })
}

fn context(job: &Job) -> Context {
    Context {
        cpu: job.cpus.first().copied(),
        other_cpu: job.other_cpu,
        scratch_dir: job.scratch_dir.clone(),
        work_dir: job.work_dir.clone(),
    }
}

/// The job, as JSON on stdin.
fn read_job() -> Result<Job, SetupError> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| SetupError::Failed(format!("cannot read the job: {e}")))?;
    serde_json::from_str(&input).map_err(|e| SetupError::Failed(format!("malformed job: {e}")))
}

/// Join the memory load's cgroup, find the experiment and pin to the job's CPUs.
fn prepare(job: &Job) -> Result<&'static ExperimentInfo, SetupError> {
    if let Some(procs) = &job.cgroup_procs {
        crate::platform::cgroup::join(procs).map_err(|e| {
            SetupError::Failed(format!(
                "cannot join the memory load's cgroup ({}): {e}",
                procs.display()
            ))
        })?;
    }
    let info = experiment::find(&job.experiment)
        .ok_or_else(|| SetupError::Failed(format!("unknown experiment {}", job.experiment)))?;
    // Where threads cannot be pinned at all the run's heading says so; the worker runs free.
    if !job.cpus.is_empty() && cpu::pinning_refusal().is_none() {
        cpu::pin(&job.cpus).map_err(|e| {
            SetupError::Failed(format!(
                "cannot pin to CPU {}: {e}",
                cpu::format_list(&job.cpus)
            ))
        })?;
    }
    Ok(info)
}

/// The timed samples, each sent to the parent as soon as it is taken.
fn sample(
    out: &mut impl Write,
    job: &Job,
    info: &ExperimentInfo,
    routine: &mut dyn experiment::Routine,
    fixed_ops: Option<u64>,
    counters: &mut CounterSet,
) -> Result<sampler::Sampled, SetupError> {
    let clock = Clock::from_info(&job.clock);
    let mut report = |progress: Progress| -> Result<(), String> {
        let message = match progress {
            Progress::Calibrated(c) => Message::Calibration(c.clone()),
            Progress::Sample(s) => Message::Sample(s.clone()),
        };
        send(out, &message)?;
        // Each sample reaches the parent at once, so a crash later loses nothing.
        out.flush().map_err(|e| e.to_string())
    };
    sampler::sample(
        info.subtract_loop_overhead,
        routine,
        fixed_ops,
        clock,
        counters,
        &job.cpus,
        &job.sampler,
        &mut report,
    )
    .map_err(SetupError::Failed)
}

//! The worker: a fresh process (the binary re-executed as the hidden `oslab worker`
//! subcommand) that runs one experiment, so its address space, rusage and counters are its
//! own. It reads a [`Job`] as JSON on stdin and streams [`Message`]s as JSON lines on stdout.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};

use crate::experiment::{self, Context, ExperimentInfo, Params, SetupError};
use crate::measure::clock::Clock;
use crate::measure::companions::{self, Companions};
use crate::measure::counting::Counting;
use crate::measure::host::HostWatch;
use crate::measure::sampler::{self, Progress, Side};
use crate::model::Fact;
use crate::model::pairs::DUET_FACT;
use crate::platform::counters::CounterSet;
use crate::platform::cpu;
use crate::platform::reclaim::ReclaimStats;

mod protocol;
pub use protocol::{Job, Message};

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
        // A synced copy has sent its last message and held the routine until released.
        Ok(None) => return 0,
        Ok(Some(last)) => last,
        Err(SetupError::Unsupported(reason)) => Message::Unsupported { reason },
        Err(SetupError::Failed(reason)) => Message::Failed { reason },
    };
    let ok = send(&mut out, &last).and_then(|()| out.flush());
    if ok.is_err() { 1 } else { 0 }
}

/// One message to the parent, a line of JSON (a message that cannot be serialised is an
/// error of the same write).
fn send(out: &mut impl Write, message: &Message) -> std::io::Result<()> {
    let line = serde_json::to_string(message).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")
}

/// What a failed write to the parent tells the configuration's record (if it gets there).
fn unsent(e: std::io::Error) -> SetupError {
    SetupError::Failed(format!("cannot write to the parent: {e}"))
}

/// The job's work; `Ok` is the last message to send (`None`: sent already, see `Job::synced`).
fn run(out: &mut impl Write) -> Result<Option<Message>, SetupError> {
    let job = read_job()?;
    let info = prepare(&job)?;
    // Before anything of the experiment's is allocated, and kept to the end.
    let _heap_pad = job.layout.map(|l| l.pad_heap());
    if let Some(ops) = job.traced_ops {
        return traced_pass(&job, info, ops).map(Some);
    }
    let params = Params::from_map(job.params.clone());
    let fixed_ops = fixed_ops(info, &params);
    // Before the counters open, so they do not inherit the other copies' threads.
    let companions = start_companions(&job, info, &params, fixed_ops)?;
    let counters = Counting {
        perf: if info.counters_in_samples {
            CounterSet::open()
        } else {
            CounterSet::none()
        },
        // Beside a memory load, what reclaim did in its cgroup and on the machine.
        reclaim: job
            .cgroup_procs
            .as_deref()
            .and_then(std::path::Path::parent)
            .and_then(ReclaimStats::open),
        // The steal of the worker's CPU when it has one, and a canary after every sample.
        host: Some(HostWatch::open(
            Clock::from_info(&job.clock),
            match job.cpus[..] {
                [cpu] => Some(cpu),
                _ => None,
            },
        )),
    };
    let statuses = counters.statuses();
    send(out, &Message::Counters { counters: statuses }).map_err(unsent)?;

    let routine = (info.setup)(&params, &context(&job))?;
    match &job.partner {
        None => solo(out, &job, info, routine, fixed_ops, counters, companions),
        Some(partner) => in_duet(out, &job, info, routine, partner, counters),
    }
}

/// The batch an experiment with `Batch::Fixed` asks for at `params`.
fn fixed_ops(info: &ExperimentInfo, params: &Params) -> Option<u64> {
    match info.batch {
        experiment::Batch::Fixed(ops) => Some(ops(params)),
        experiment::Batch::Sized => None,
    }
}

/// One routine sampled alone (with its copies' threads, if any): the samples, what follows
/// them, and for a synced copy the hold until the parent releases it.
fn solo(
    out: &mut impl Write,
    job: &Job,
    info: &ExperimentInfo,
    mut routine: Box<dyn experiment::Routine>,
    fixed_ops: Option<u64>,
    mut counters: Counting,
    companions: Option<Companions>,
) -> Result<Option<Message>, SetupError> {
    if job.synced {
        await_go(out)?;
    }
    let sampled = sample(out, job, info, routine.as_mut(), fixed_ops, &mut counters)?;
    let copies = job.copy_cpus.len();
    let mut facts = match companions.map(Companions::stop).transpose() {
        Ok(ran) => companions::facts(&ran.unwrap_or_default(), copies),
        Err(why) => return Err(SetupError::Failed(format!("a copy's thread failed: {why}"))),
    };

    // Only now, with the timed samples done, the events that would have slowed them.
    drop(counters);
    let done = Measured {
        routine: routine.as_mut(),
        sampled,
        fixed_ops,
        partner: false,
    };
    after_samples(out, job, info, done, &mut facts)?;
    let done = Message::Done {
        stop_reason: sampled.stop_reason,
    };
    if !job.synced {
        return Ok(Some(done));
    }
    send(out, &done).map_err(unsent)?;
    out.flush().map_err(unsent)?;
    hold(routine.as_mut(), sampled.ops_per_sample);
    Ok(None)
}

/// A duet (`Job::partner`): the partner set up beside `routine`, their samples taken in turn,
/// then what follows the samples for each, the job's own first.
fn in_duet(
    out: &mut impl Write,
    job: &Job,
    info: &ExperimentInfo,
    mut routine: Box<dyn experiment::Routine>,
    partner: &BTreeMap<String, String>,
    mut counters: Counting,
) -> Result<Option<Message>, SetupError> {
    let params = [job.params.clone(), partner.clone()].map(Params::from_map);
    let mut other = (info.setup)(&params[1], &context(job))?;
    let fixed = [0, 1].map(|i| fixed_ops(info, &params[i]));
    let sides: [&mut dyn experiment::Routine; 2] = [routine.as_mut(), other.as_mut()];
    let (sampled, pairs) = duet(out, job, info, sides, fixed, &mut counters)?;
    drop(counters);
    let facts = duet_facts(&job.params, partner, pairs);
    let sides: [&mut dyn experiment::Routine; 2] = [routine.as_mut(), other.as_mut()];
    for (i, (routine, mut facts)) in sides.into_iter().zip(facts).enumerate() {
        let done = Measured {
            routine,
            sampled: sampled[i],
            fixed_ops: fixed[i],
            partner: i == 1,
        };
        after_samples(out, job, info, done, &mut facts)?;
    }
    Ok(Some(Message::Done {
        stop_reason: sampled[0].stop_reason,
    }))
}

/// The fact each side of a duet carries (`model::pairs::DUET_FACT`): the sample pairs taken,
/// and the parameters of the other side's that differ.
fn duet_facts(
    own: &BTreeMap<String, String>,
    partner: &BTreeMap<String, String>,
    pairs: usize,
) -> [Vec<Fact>; 2] {
    let differing = |of: &BTreeMap<String, String>, from: &BTreeMap<String, String>| {
        let named: Vec<String> = of
            .iter()
            .filter(|(k, v)| from.get(*k) != Some(*v))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        named.join(" ")
    };
    let fact = |other: String| {
        vec![Fact::new(
            DUET_FACT,
            pairs as f64,
            "pairs",
            format!("samples taken in turn with {other}'s, in one process"),
        )]
    };
    [fact(differing(partner, own)), fact(differing(own, partner))]
}

/// A routine whose samples are taken: how, and whether it is a duet's partner.
struct Measured<'r> {
    routine: &'r mut dyn experiment::Routine,
    sampled: sampler::Sampled,
    fixed_ops: Option<u64>,
    partner: bool,
}

/// One message of `partner`'s (`Message::Partner`), else as it is.
fn of(partner: bool, message: Message) -> Message {
    match partner {
        true => Message::Partner {
            message: Box::new(message),
        },
        false => message,
    }
}

/// What follows the samples: the probe pass, the facts (the routine's and `companions`'),
/// the profile pass last, so neither the samples, the probes nor the facts see the sampler.
fn after_samples(
    out: &mut impl Write,
    job: &Job,
    info: &ExperimentInfo,
    measured: Measured,
    companions: &mut Vec<Fact>,
) -> Result<(), SetupError> {
    let Measured {
        routine,
        sampled,
        fixed_ops,
        partner,
    } = measured;
    let sampled = &sampled;
    if job.probes {
        let mut probes = CounterSet::open_probes(!info.counters_in_samples);
        let counts = sampler::count_probes(
            routine,
            &mut probes,
            sampled.ops_per_sample,
            fixed_ops.is_some(),
        )
        .map_err(|e| SetupError::Failed(e.to_string()))?;
        let message = Message::Probes {
            counters: probes.statuses().to_vec(),
            probes: counts,
        };
        send(out, &of(partner, message)).map_err(unsent)?;
    }
    let mut facts = routine.facts();
    facts.append(companions);
    if !facts.is_empty() {
        send(out, &of(partner, Message::Facts { facts })).map_err(unsent)?;
    }
    if let Some(request) = &job.profile {
        let profile = crate::measure::profile::profile_pass(
            routine,
            sampled.ops_per_sample,
            fixed_ops.is_some(),
            request,
        );
        send(out, &of(partner, Message::Profile(profile))).map_err(unsent)?;
    }
    Ok(())
}

/// `--copy-mode threads`: the other copies, each a thread on its CPU with a routine of its own.
fn start_companions(
    job: &Job,
    info: &'static ExperimentInfo,
    params: &Params,
    fixed_ops: Option<u64>,
) -> Result<Option<Companions>, SetupError> {
    if job.copy_cpus.len() < 2 {
        return Ok(None);
    }
    let (params, context) = (params.clone(), context(job));
    let build: companions::Build = std::sync::Arc::new(move || (info.setup)(&params, &context));
    Companions::start(&job.copy_cpus[1..], fixed_ops, &build)
        .map(Some)
        .map_err(|why| SetupError::Failed(format!("a copy's thread could not start: {why}")))
}

/// Say ready and wait for the parent's `go` (every copy is set up): a closed stdin without it
/// means the parent gave up on the copies.
fn await_go(out: &mut impl Write) -> Result<(), SetupError> {
    send(out, &Message::Ready).map_err(unsent)?;
    out.flush().map_err(unsent)?;
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(_) if line.trim() == "go" => Ok(()),
        Ok(_) => Err(SetupError::Failed(
            "the other copies did not start; this one was not released".into(),
        )),
        Err(e) => Err(SetupError::Failed(format!(
            "cannot read the parent's go: {e}"
        ))),
    }
}

/// Keep the routine running, untimed, until the parent closes stdin: the copies still
/// sampling keep their company. A failing call ends the hold (its samples are sent).
fn hold(routine: &mut dyn experiment::Routine, ops: u64) {
    let released = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = released.clone();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let ops = ops.max(1);
    while !released.load(std::sync::atomic::Ordering::Relaxed) {
        if routine
            .prepare(ops)
            .and_then(|()| routine.run(ops))
            .is_err()
        {
            break;
        }
    }
}

/// The experiment's setup as for sampling, then one untimed pass of `ops` operations (no more
/// than the routine's `max_batch`) between two marker calls: the window a tracer reads
/// (`harness::traced`). Nothing else runs in it, and nothing is sent until it has ended.
fn traced_pass(job: &Job, info: &ExperimentInfo, ops: u64) -> Result<Message, SetupError> {
    let params = Params::from_map(job.params.clone());
    let mut routine = (info.setup)(&params, &context(job))?;
    let ops = crate::model::routine::bounded(routine.as_ref(), ops);
    routine
        .prepare(ops)
        .map_err(|e| SetupError::Failed(e.into()))?;
    crate::platform::systrace::mark();
    let ran = routine.run(ops);
    crate::platform::systrace::mark();
    ran.map_err(|e| SetupError::Failed(e.into()))?;
    Ok(Message::Traced { ops })
}

fn context(job: &Job) -> Context {
    Context {
        cpu: job.cpus.first().copied(),
        other_cpu: job.other_cpu,
        free_cpus: job.free_cpus.clone(),
        scratch_dir: job.scratch_dir.clone(),
        work_dir: job.work_dir.clone(),
        shared_dir: job.shared_dir.clone().or_else(|| job.work_dir.clone()),
    }
}

/// The job, as one line of JSON on stdin (what follows is the parent's `go`, see
/// `Job::synced`).
fn read_job() -> Result<Job, SetupError> {
    let mut input = String::new();
    std::io::stdin()
        .read_line(&mut input)
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

/// What the sampler reports, as the message that carries it.
fn message_of(progress: Progress) -> Message {
    match progress {
        Progress::Calibrated(c) => Message::Calibration(c.clone()),
        Progress::Sample(s) => Message::Sample(s.clone()),
    }
}

/// A duet's samples, the partner's sent as `Message::Partner`, each as soon as it is taken;
/// with the number of sample pairs.
fn duet(
    out: &mut impl Write,
    job: &Job,
    info: &ExperimentInfo,
    [a, b]: [&mut dyn experiment::Routine; 2],
    fixed: [Option<u64>; 2],
    counters: &mut Counting,
) -> Result<([sampler::Sampled; 2], usize), SetupError> {
    let clock = Clock::from_info(&job.clock);
    let mut pairs = 0;
    let mut report = |side: usize, progress: Progress| -> std::io::Result<()> {
        pairs += usize::from(side == 1 && matches!(progress, Progress::Sample(_)));
        send(out, &of(side == 1, message_of(progress)))?;
        out.flush()
    };
    let sides = [
        Side {
            routine: a,
            fixed_ops: fixed[0],
        },
        Side {
            routine: b,
            fixed_ops: fixed[1],
        },
    ];
    let sampled = sampler::sample_duet(
        info.subtract_loop_overhead,
        sides,
        clock,
        counters,
        &job.cpus,
        &job.sampler,
        &mut report,
    )
    .map_err(|e| SetupError::Failed(e.to_string()))?;
    Ok((sampled, pairs))
}

/// The timed samples, each sent to the parent as soon as it is taken.
fn sample(
    out: &mut impl Write,
    job: &Job,
    info: &ExperimentInfo,
    routine: &mut dyn experiment::Routine,
    fixed_ops: Option<u64>,
    counters: &mut Counting,
) -> Result<sampler::Sampled, SetupError> {
    let clock = Clock::from_info(&job.clock);
    let mut report = |progress: Progress| -> std::io::Result<()> {
        send(out, &message_of(progress))?;
        // Each sample reaches the parent at once, so a crash later loses nothing.
        out.flush()
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
    .map_err(|e| SetupError::Failed(e.to_string()))
}

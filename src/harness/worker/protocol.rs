//! What the parent and a worker say to each other: the [`Job`] the parent writes to the
//! worker's stdin as one JSON document, and the [`Message`]s the worker streams back on
//! stdout, one JSON line each.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::harness::layout::Layout;
use crate::measure::sampler::SamplerConfig;
use crate::model::profile::{Profile, ProfileRequest};
use crate::model::{Calibration, ClockInfo, CounterStatus, Fact, ProbeCount, Sample, StopReason};

/// What the parent asks a worker to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub experiment: String,
    pub params: BTreeMap<String, String>,
    pub cpus: Vec<usize>,
    /// Another CPU the experiment may use (cross-CPU placements).
    #[serde(default)]
    pub other_cpu: Option<usize>,
    /// The CPUs an unpinned experiment leaves to the scheduler (`Plan::free_cpus`).
    #[serde(default)]
    pub free_cpus: Vec<usize>,
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
    /// One of several copies measured at once (`--copies`, processes): after setup the worker
    /// says [`Message::Ready`] and waits for the parent's `go` line on stdin; after its last
    /// message it keeps running the routine, untimed, until stdin closes, so every copy's
    /// samples are taken while all the copies run.
    #[serde(default)]
    pub synced: bool,
    /// `--copy-mode threads`: the CPU of each copy, the measured thread's first; the worker
    /// runs a companion thread on each of the others (`measure::companions`).
    #[serde(default)]
    pub copy_cpus: Vec<Option<usize>>,
    /// A directory every copy of the configuration shares (`Context::shared_dir`).
    #[serde(default)]
    pub shared_dir: Option<std::path::PathBuf>,
    /// A duet (`harness::duet`): the parameters of the paired configuration, which the worker
    /// sets up beside the job's own and samples in turn with it (`sampler::sample_duet`);
    /// everything it sends of the partner comes as [`Message::Partner`].
    #[serde(default)]
    pub partner: Option<BTreeMap<String, String>>,
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
    /// Set up and waiting for the parent's `go` (`Job::synced`).
    Ready,
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
    /// A duet partner's calibration, sample, probes or facts (`Job::partner`).
    Partner {
        message: Box<Message>,
    },
}

impl Message {
    /// What kind of message it is, as its JSON line's `kind` says, for an error that names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Counters { .. } => "counters",
            Message::Ready => "ready",
            Message::Calibration(_) => "calibration",
            Message::Sample(_) => "sample",
            Message::Probes { .. } => "probes",
            Message::Facts { .. } => "facts",
            Message::Profile(_) => "profile",
            Message::Done { .. } => "done",
            Message::Traced { .. } => "traced",
            Message::Unsupported { .. } => "unsupported",
            Message::Failed { .. } => "failed",
            Message::Partner { .. } => "partner",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_names_its_kind_as_its_json_line_does() {
        let messages = [
            Message::Ready,
            Message::Done {
                stop_reason: StopReason::Precision,
            },
            Message::Failed { reason: "x".into() },
            Message::Partner {
                message: Box::new(Message::Ready),
            },
        ];
        for m in messages {
            let json = serde_json::to_value(&m).expect("a message serializes");
            assert_eq!(json["kind"], m.kind(), "{json}");
        }
    }
}

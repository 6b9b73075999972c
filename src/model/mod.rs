//! The records that flow one way through oslab: the worker produces [`Sample`]s, the runner
//! gathers them into an [`ExperimentResult`], the store keeps a [`Run`], and every presenter
//! reads a `Run` back from the store. Nothing here does I/O.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod copies;
pub mod env;
pub mod equivalence;
pub mod errno;
pub mod error;
pub mod host;
pub mod identity;
pub mod maps;
pub mod midr;
pub mod os;
pub mod pairs;
pub mod passes;
pub mod profile;
pub mod reclaim;
pub mod routine;
pub mod rusage;
pub mod setup;
pub mod trace;

pub use os::Os;
pub use rusage::Rusage;
pub use setup::SetupError;

use crate::model::env::Environment;

/// One perf event's count over one sample.
///
/// `value` is scaled for multiplexing: `raw * enabled_ns / running_ns` (perf_event_open(2),
/// "time_enabled/time_running"). It is `None` when the event never ran during the sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CounterValue {
    pub value: Option<f64>,
    pub raw: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
}

/// One timed batch of operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Operations in the batch.
    pub ops: u64,
    /// Wall time of the batch as read from the clock, nothing subtracted.
    pub elapsed_ns: f64,
    /// The figure analysed: `(elapsed_ns - timer overhead) / ops - loop overhead per op`
    /// (the loop overhead only for experiments that subtract it).
    pub ns_per_op: f64,
    pub rusage: Rusage,
    /// The other side of a two-process experiment (a partner process), read by
    /// `platform::rusage::of_task` around the sample: its switches and faults are not in
    /// `rusage`. (A partner thread is already in `rusage`, which covers the whole process.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<Rusage>,
    /// Children reaped during the sample (getrusage(RUSAGE_CHILDREN) delta): what a forked
    /// child cost, kept apart from the parent's own figures. `None` when no child was reaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Rusage>,
    /// Counter name → count over this sample (only the counters that could be opened).
    #[serde(default)]
    pub counters: BTreeMap<String, CounterValue>,
}

/// Whether a counter could be counted in this experiment's worker, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterStatus {
    pub name: String,
    pub supported: bool,
    /// Why the counter is unsupported (the errno and what it means here).
    pub reason: Option<String>,
}

/// A counter read over untimed batches run after the samples, for an event whose counting
/// would change what is timed: the `raw_syscalls:sys_enter` tracepoint sends every system call
/// through the kernel's slow path (measured: +95 ns on a raw getppid, +130 ns through glibc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeCount {
    pub name: String,
    /// Operations performed while it counted.
    pub ops: u64,
    pub count: CounterValue,
}

/// The outcome of one expectation check (see `validate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub check: String,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured, and every expectation held.
    Ok,
    /// Measured, but a counter contradicts what the experiment claims to measure.
    Suspect,
    /// The worker crashed, was killed, timed out or reported an error.
    Failed,
    /// The experiment cannot run here (missing feature, permission, CPU count); not an error.
    Unsupported,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Suspect => "suspect",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Some(match s {
            "ok" => Status::Ok,
            "suspect" => Status::Suspect,
            "failed" => Status::Failed,
            "unsupported" => Status::Unsupported,
            _ => return None,
        })
    }
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The 95% CI of the median reached the target half-width.
    Precision,
    /// The experiment's time budget ran out first.
    Budget,
    /// The maximum sample count was reached first.
    MaxSamples,
    /// Timed passes (`model::passes`): every pass was run.
    Passes,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Precision => "precision",
            StopReason::Budget => "budget",
            StopReason::MaxSamples => "max_samples",
            StopReason::Passes => "passes",
        }
    }

    pub fn parse(s: &str) -> Option<StopReason> {
        Some(match s {
            "precision" => StopReason::Precision,
            "budget" => StopReason::Budget,
            "max_samples" => StopReason::MaxSamples,
            "passes" => StopReason::Passes,
            _ => return None,
        })
    }
}

/// A figure an experiment measured besides its timed operation (see `Routine::facts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// A stable name, e.g. `munmap_ns_per_page`.
    pub name: String,
    /// NaN when it could not be measured (the note says why). JSON has no NaN: it is written
    /// as `null` and read back as NaN.
    #[serde(deserialize_with = "nan_from_null")]
    pub value: f64,
    /// `ns/page`, `kB`, `blocks`…
    pub unit: String,
    /// How it was measured, in one line.
    pub note: String,
}

fn nan_from_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl Fact {
    pub fn new(name: &str, value: f64, unit: &str, note: impl Into<String>) -> Fact {
        Fact {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            note: note.into(),
        }
    }
}

/// The background load one experiment ran beside, and what it found (`--load memory`
/// records its cgroup limits and the memory pressure before and after).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// `cpu`, `cpu:all`, `memory`.
    pub kind: String,
    /// Named details, in the order shown.
    #[serde(default)]
    pub details: Vec<(String, String)>,
}

/// How one experiment was timed in its worker: stored so any figure can be re-derived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Operations per sample chosen by batch sizing.
    pub ops_per_sample: u64,
    /// Cost of one timer read pair, subtracted from every sample's elapsed time.
    pub timer_overhead_ns: f64,
    /// Per-operation cost of the empty loop, subtracted when the experiment asks for it.
    pub loop_overhead_ns: Option<f64>,
    /// Per-operation cost of the experiment's own baseline (see `Routine::run_baseline`),
    /// subtracted from every sample.
    #[serde(default)]
    pub baseline_ns: Option<f64>,
    /// Time spent warming up before the first sample.
    pub warmup_ns: f64,
    /// CPUs the worker was pinned to.
    pub cpus: Vec<usize>,
}

/// Everything measured for one experiment with one parameter set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentResult {
    /// `family.variant`.
    pub experiment: String,
    /// Every parameter with the value used (defaults filled in).
    pub params: BTreeMap<String, String>,
    /// The unit of one operation's time, e.g. `ns/call`.
    pub unit: String,
    pub status: Status,
    /// Why the result is suspect, failed or unsupported.
    pub reason: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub calibration: Calibration,
    pub samples: Vec<Sample>,
    /// Counts taken after sampling, outside the timed samples (see [`ProbeCount`]).
    #[serde(default)]
    pub probes: Vec<ProbeCount>,
    pub counters: Vec<CounterStatus>,
    pub validation: Vec<Check>,
    /// Figures measured besides the timed operation (see [`Fact`]).
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// The name a suite gave this configuration (`--suite mmap-lab`: "file shared populate").
    #[serde(default)]
    pub label: Option<String>,
    /// The background load this experiment ran beside, if any.
    #[serde(default)]
    pub load: Option<LoadRecord>,
    /// How busy the CPUs other than the measured one were while the worker ran (0–1, from
    /// `platform::cpustat`): a cross-CPU figure depends on it (FINDINGS: waking an idle vCPU is slow).
    #[serde(default)]
    pub other_cpus_busy: Option<f64>,
    /// The medians of this configuration in the store's earlier runs on this machine with the
    /// same settings, oldest first (at most `analysis::processes::MAX_EARLIER_RUNS`), as the
    /// store held them when this run began: what reruns have given here. They floor the
    /// interval of the pooled median (`analysis::processes::rerun_interval`); every process of
    /// a configuration carries the same list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_medians: Vec<f64>,
    /// The medians of the earlier runs among the most recent that sat wholly in a slow kernel
    /// phase of the host (`analysis::host::slow_runs`), oldest first: left out of
    /// `earlier_medians`, which floor the interval at the host's usual level, as a slow
    /// phase's processes are left out of a run's figures. Empty for an experiment whose
    /// figures keep slow phases in (`experiment::phase_bound`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_slow_medians: Vec<f64>,
    /// The kernel canaries of the runs of `earlier_medians` that read one (the median over the
    /// samples their figures count, ns per call), oldest first: what this run's is held
    /// against to tell whether the host was in a slow phase through it
    /// (`analysis::host::slow_against_earlier`), when it ends and whenever it is shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_kernel_canaries: Vec<f64>,
    /// The stacks a profile pass sampled after the timed samples (`oslab profile`; one
    /// process of a configuration profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<profile::Profile>,
    /// The user-mode emulator this result was measured under (`Environment::emulation`), if
    /// any: its times are the emulator's, not a CPU's, and the expectations emulation cannot
    /// honour are not checked (`analysis::validate::EMULATION_BLIND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<String>,
    /// Unix time in seconds when the worker started, and the wall time it took.
    pub started_at: f64,
    pub duration_s: f64,
}

impl ExperimentResult {
    /// An `ok` result of `experiment` at `params` whose samples timed `values` ns per
    /// operation, `ops` operations each, with nothing else measured: the smallest result every
    /// view reads, which the tests' fixtures start from.
    pub fn from_values(
        experiment: &str,
        params: &[(&str, &str)],
        values: &[f64],
        ops: u64,
    ) -> ExperimentResult {
        ExperimentResult {
            experiment: experiment.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            unit: "ns/call".into(),
            status: Status::Ok,
            reason: None,
            stop_reason: None,
            calibration: Calibration::default(),
            samples: values
                .iter()
                .map(|&v| Sample {
                    ops,
                    elapsed_ns: v * ops as f64,
                    ns_per_op: v,
                    rusage: Rusage::default(),
                    partner: None,
                    children: None,
                    counters: BTreeMap::new(),
                })
                .collect(),
            probes: vec![],
            counters: vec![],
            validation: vec![],
            facts: vec![],
            label: None,
            load: None,
            other_cpus_busy: None,
            earlier_medians: vec![],
            earlier_slow_medians: vec![],
            earlier_kernel_canaries: vec![],
            profile: None,
            emulation: None,
            started_at: 0.0,
            duration_s: 0.0,
        }
    }
}

/// The clock every sample of a run was timed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    /// `tsc`, `cntvct_el0`, or the system's clock: `clock_monotonic_raw` (Linux, macOS),
    /// `clock_monotonic_precise` (FreeBSD), `query_performance_counter` (Windows).
    pub source: String,
    /// Why this source was chosen (and why the CPU's counter was not, when it was not).
    pub reason: String,
    /// The CPU counter's ticks per second, when it is used (the TSC's, CNTVCT_EL0's; the
    /// name predates aarch64 and is kept for the stored schema).
    pub tsc_hz: Option<f64>,
    /// Average cost of one read pair (start + stop), ns.
    pub overhead_ns: f64,
    /// Smallest non-zero difference between two successive reads, ns.
    pub resolution_ns: f64,
}

impl ClockInfo {
    /// The counter and its rate ("TSC at 2.450 GHz", "CNTVCT_EL0 at 25.000 MHz"), or the
    /// source's name when no counter was used.
    pub fn describe(&self) -> String {
        match self.tsc_hz {
            Some(hz) if hz >= 1e9 => {
                format!("{} at {:.3} GHz", self.source.to_uppercase(), hz / 1e9)
            }
            Some(hz) => format!("{} at {:.3} MHz", self.source.to_uppercase(), hz / 1e6),
            None => self.source.clone(),
        }
    }
}

/// How the run was asked to measure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSettings {
    pub quick: bool,
    /// Target half-width of the 95% CI of the median, as a fraction of the median.
    pub precision: f64,
    /// Time budget per experiment, seconds (shared among its processes).
    pub budget_s: f64,
    /// Worker processes per configuration (`--repeat`); runs stored before it was recorded
    /// read as 1.
    #[serde(default = "one_process")]
    pub processes: u32,
    /// The most worker processes a configuration could get, when the run added them as it
    /// went (`--max-processes`, `analysis::adaptive`); `None`: each had `processes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u32>,
    /// Minimum sampling time per experiment, seconds.
    pub min_time_s: f64,
    /// Hard time limit per worker, seconds.
    pub timeout_s: f64,
    pub cpus: Vec<usize>,
    /// The CPUs the worker processes took in turn, when `--cpu` did not pin them (empty:
    /// every process on `cpus`).
    pub cpu_turns: Vec<usize>,
    /// Why the workers ran on `cpus`, when oslab chose the CPU (without `--cpu`): "the fewest
    /// device interrupts since boot (28,652; CPU 1: 12,376,441)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_choice: Option<String>,
    /// Why the workers could not be pinned at all (macOS has no CPU affinity); `None` where
    /// they were.
    pub unpinned: Option<String>,
    /// Background load run beside every experiment (`cpu`, `cpu:all`), if any.
    pub load: Option<String>,
    /// The swap area made for the run (`--swap`): kind, size and path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap: Option<String>,
    /// The directory file experiments worked in (`--dir`), when the run had any.
    pub dir: Option<String>,
    /// What that directory is on: file system type, backing device, mount point and mount
    /// options (from the mount table), e.g. `ext4 on /dev/vda at / (rw,relatime)`.
    pub dir_mount: Option<String>,
    /// The command line, for the record.
    pub argv: Vec<String>,
}

fn one_process() -> u32 {
    1
}

impl RunSettings {
    /// Whether a run with `other`'s settings measured each configuration as these would: the
    /// same precision, budget, processes, minimum time, CPUs, load, swap made or not, and directory with its file
    /// system where both worked in one (a run without file experiments records none). The tag,
    /// the time limit and the command line's wording do not count.
    pub fn measures_like(&self, other: &RunSettings) -> bool {
        fn both_or_either<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
            a.is_none() || b.is_none() || a == b
        }
        self.quick == other.quick
            && self.precision == other.precision
            && self.budget_s == other.budget_s
            && self.processes == other.processes
            && self.max_processes == other.max_processes
            && self.min_time_s == other.min_time_s
            && self.cpus == other.cpus
            && self.load == other.load
            && self.swap.is_some() == other.swap.is_some()
            && both_or_either(&self.dir, &other.dir)
            && both_or_either(&self.dir_mount, &other.dir_mount)
    }
}

/// One invocation of `oslab run`: the unit stored, shown and compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Database id, 0 before the run is stored.
    pub id: i64,
    /// The run's identity wherever it goes (export, import, the fleet store): a UUID in its
    /// hyphenated lower-case form, given when the run starts. Empty only in a document written
    /// before oslab gave runs one; `oslab import` derives it from the run's fingerprint then,
    /// so the same old document imported on two machines is still one run.
    #[serde(default)]
    pub uuid: String,
    pub started_at: f64,
    pub finished_at: Option<f64>,
    pub tag: Option<String>,
    pub oslab_version: String,
    pub settings: RunSettings,
    pub clock: ClockInfo,
    pub environment: Environment,
    pub results: Vec<ExperimentResult>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_measure_alike_whatever_the_tag_and_the_file_experiments() {
        let a = RunSettings {
            precision: 0.01,
            processes: 3,
            argv: vec!["oslab".into(), "run".into()],
            ..RunSettings::default()
        };
        let b = RunSettings {
            argv: vec!["oslab".into(), "run".into(), "--tag".into(), "x".into()],
            timeout_s: 99.0,
            dir: Some("/tmp".into()),
            ..a.clone()
        };
        assert!(a.measures_like(&b) && b.measures_like(&a));
        let elsewhere = RunSettings {
            dir: Some("/srv".into()),
            ..b.clone()
        };
        assert!(!b.measures_like(&elsewhere));
        let quick = RunSettings {
            quick: true,
            ..a.clone()
        };
        assert!(!a.measures_like(&quick));
        let more = RunSettings {
            processes: 5,
            ..a.clone()
        };
        assert!(!a.measures_like(&more));
    }

    #[test]
    fn a_fact_that_was_not_measured_survives_json() {
        let fact = Fact::new("anon_huge_pages_kb", f64::NAN, "kB", "smaps unreadable");
        let text = serde_json::to_string(&fact).unwrap();
        assert!(text.contains("\"value\":null"), "{text}");
        let back: Fact = serde_json::from_str(&text).unwrap();
        assert!(back.value.is_nan());
        let measured: Fact =
            serde_json::from_str(r#"{"name":"n","value":2.5,"unit":"kB","note":""}"#).unwrap();
        assert_eq!(measured.value, 2.5);
    }
}

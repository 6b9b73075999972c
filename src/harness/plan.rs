//! The run's plan: how every experiment of one `oslab run` is measured (sampler settings,
//! CPUs, load, work directory, clock, time limit). Built by the CLI, read by the runner and by
//! the code that drives one worker.

use std::path::PathBuf;
use std::time::Duration;

use crate::harness::layout::Layout;
use crate::measure::load::Load;
use crate::measure::sampler::SamplerConfig;
use crate::model::ClockInfo;
use crate::model::profile::ProfileRequest;

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
    /// How many worker processes measure each configuration (`--repeat`); `sampler` is what
    /// each of them gets (see `SamplerConfig::per_process`).
    pub processes: u32,
    /// The seed the processes' layouts derive from: a new one for every run.
    pub layout_seed: u64,
    /// The CPUs the processes take in turn when the user did not pin them with `--cpu`
    /// (empty: every process on `cpus`).
    pub cpu_turns: Vec<usize>,
    /// The CPUs an experiment that runs unpinned (`placement=free`, as UnixBench runs its
    /// tests) leaves to the scheduler: the CPUs of `--cpu`, else every CPU the processes may
    /// take in turn.
    pub free_cpus: Vec<usize>,
    /// This process's layout; set by [`Plan::for_process`].
    pub layout: Option<Layout>,
    /// This process counts the probe events after its samples (`syscalls`, `tasks`; see
    /// [`Plan::for_process`]).
    pub probes: bool,
    /// Profile each configuration (`oslab profile`); only the last process does, as with
    /// the probes: the stacks are the routine's code, the same in every process.
    pub profile: Option<ProfileRequest>,
    /// The user-mode emulator this run measures under (`Environment::emulation`), carried by
    /// every result: its expectations are then not checked.
    pub emulation: Option<String>,
    /// Measure each pair of configurations made to be compared (`model::pairs`) in one worker,
    /// their samples in turn (`harness::duet`, `--duet`); else each in workers of its own.
    pub duet: bool,
}

/// How many times the default worker limit an emulated run gets ([`Plan::default_timeout`]).
pub const EMULATED_LIMIT: f64 = 4.0;

impl Plan {
    /// The plan of the `process`-th worker of each configuration (from 0): its own layout
    /// and, when the CPUs are the harness's choice, the next CPU in turn (the other side of a
    /// cross-CPU experiment: the highest other one). Only the last of the `processes` every
    /// configuration starts with counts the probe events (a process added later does not:
    /// `--max-processes`): what they count (the system calls and tasks of an operation) is the routine's
    /// code, the same in every process, while closing the tracepoint events costs a worker
    /// ~60 ms here (the kernel waits for RCU grace periods to unregister them) — 8 s of the
    /// default suite when every process paid it.
    pub fn for_process(&self, process: u32) -> Plan {
        let mut plan = self.clone();
        plan.layout = Some(Layout::for_process(self.layout_seed, process));
        plan.probes = process + 1 == self.processes;
        plan.profile = self.profile.filter(|_| plan.probes);
        if let Some(cpu) = cpu_in_turn(&self.cpu_turns, process) {
            plan.cpus = vec![cpu];
            plan.other_cpu = self.cpu_turns.iter().rev().copied().find(|&c| c != cpu);
        }
        plan
    }

    /// The CPUs `processes` processes take in turn from `turns`, each once, in the order they
    /// take them: what a run records of [`Plan::for_process`]'s choices.
    pub fn cpus_taken(turns: &[usize], processes: u32) -> Vec<usize> {
        let mut taken = Vec::new();
        for cpu in (0..processes).filter_map(|k| cpu_in_turn(turns, k)) {
            if !taken.contains(&cpu) {
                taken.push(cpu);
            }
        }
        taken
    }

    /// A worker's limit when `--timeout` is not given: twice the budget plus 20 s for its
    /// start and setup, times [`EMULATED_LIMIT`] when `emulated` (a user-mode emulator runs
    /// the setup, the calibration and a pass's own preparation 10–50 times slower, and a
    /// second emulated program on the other CPU slows it further: a two-copy Whetstone of
    /// `--suite unixbench --quick` took more than its 22 s under qemu-user beside another).
    pub fn default_timeout(sampler: &SamplerConfig, emulated: bool) -> Duration {
        let native = sampler.budget_s * 2.0 + 20.0;
        Duration::from_secs_f64(if emulated {
            native * EMULATED_LIMIT
        } else {
            native
        })
    }
}

/// The CPU process `process` takes from `turns`, from the last one down; `None` without turns.
fn cpu_in_turn(turns: &[usize], process: u32) -> Option<usize> {
    (!turns.is_empty()).then(|| turns[turns.len() - 1 - process as usize % turns.len()])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn plan(cpu_turns: Vec<usize>) -> Plan {
        Plan {
            sampler: SamplerConfig::quick(),
            cpus: vec![3],
            other_cpu: Some(2),
            load: None,
            dir: PathBuf::from("."),
            clock: ClockInfo {
                source: "tsc".into(),
                reason: String::new(),
                tsc_hz: None,
                overhead_ns: 0.0,
                resolution_ns: 1.0,
            },
            timeout: Duration::from_secs(1),
            stretch_timeout: true,
            processes: 3,
            free_cpus: vec![2, 3],
            layout_seed: 7,
            cpu_turns,
            layout: None,
            probes: true,
            profile: Some(ProfileRequest {
                frequency_hz: 999,
                seconds: 0.1,
            }),
            emulation: None,
            duet: true,
        }
    }

    #[test]
    fn an_emulated_worker_gets_four_times_the_default_limit() {
        let mut sampler = SamplerConfig::quick();
        sampler.budget_s = 1.0;
        assert_eq!(
            Plan::default_timeout(&sampler, false),
            Duration::from_secs(22)
        );
        assert_eq!(
            Plan::default_timeout(&sampler, true),
            Duration::from_secs(88)
        );
    }

    #[test]
    fn processes_take_the_cpus_in_turn_from_the_last() {
        let p = plan(vec![0, 2, 3]);
        let cpus: Vec<(Vec<usize>, Option<usize>)> = (0..4)
            .map(|k| {
                let q = p.for_process(k);
                (q.cpus, q.other_cpu)
            })
            .collect();
        assert_eq!(
            cpus,
            [
                (vec![3], Some(2)),
                (vec![2], Some(3)),
                (vec![0], Some(3)),
                (vec![3], Some(2))
            ]
        );
        assert_eq!(p.for_process(1).layout.map(|l| l.process), Some(1));
        let probing: Vec<bool> = (0..5).map(|k| p.for_process(k).probes).collect();
        assert_eq!(
            probing,
            [false, false, true, false, false],
            "the last process of the three every configuration starts with counts probes, \
             not one added later"
        );
        let profiling: Vec<bool> = (0..3).map(|k| p.for_process(k).profile.is_some()).collect();
        assert_eq!(profiling, [false, false, true], "and profiles");
        assert_eq!(Plan::cpus_taken(&[0, 2, 3], 2), [3, 2]);
        assert_eq!(Plan::cpus_taken(&[0, 2, 3], 7), [3, 2, 0]);
        assert_eq!(Plan::cpus_taken(&[], 3), Vec::<usize>::new());
    }

    #[test]
    fn pinned_cpus_stay_and_one_cpu_has_no_other() {
        let pinned = plan(Vec::new()).for_process(2);
        assert_eq!((pinned.cpus, pinned.other_cpu), (vec![3], Some(2)));
        let alone = plan(vec![5]).for_process(1);
        assert_eq!((alone.cpus, alone.other_cpu), (vec![5], None));
    }
}

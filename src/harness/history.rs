//! What reruns have given on this machine: for each configuration a run plans, its pooled
//! median in the store's earlier runs measured on the same machine with the same settings
//! (`Environment::same_machine`, `RunSettings::measures_like`). Each result of the new run
//! carries them (`ExperimentResult::earlier_medians`), and their spread floors the interval
//! of its pooled median (`analysis::processes::rerun_interval`): host phases that last longer
//! than one run move all of a run's processes alike, which no spread inside the run shows.
//! Their kernel canaries beside them say whether this run's kernel entry was slower than the
//! earlier runs' (`analysis::host::slow_against_earlier`): a phase as long as the run. An
//! earlier run that sat wholly in such a phase is set apart and floors nothing
//! (`analysis::host::slow_runs`): the floor is the spread of reruns at the host's usual level.

use std::collections::{BTreeMap, HashMap};

use crate::analysis::host::slow_runs;
use crate::analysis::pool::pool;
use crate::analysis::processes::MAX_EARLIER_RUNS;
use crate::experiment;
use crate::model::{ExperimentResult, Run, Status};
use crate::store::{Store, StoreError};

/// Earlier runs looked at, newest first, before giving up on finding more that match.
const RUNS_SCANNED: usize = 200;
/// Matching runs read whole, at most: each costs a read of all its samples.
const RUNS_READ: usize = 2 * MAX_EARLIER_RUNS;

/// A configuration: experiment, parameters and suite label.
pub type Configuration = (String, BTreeMap<String, String>, Option<String>);

/// The configuration of `experiment` at `params` under the suite's `label`.
pub fn configuration(
    experiment: &str,
    params: &BTreeMap<String, String>,
    label: Option<&str>,
) -> Configuration {
    (
        experiment.to_string(),
        params.clone(),
        label.map(str::to_string),
    )
}

/// The configuration a result measured.
pub fn configuration_of(r: &ExperimentResult) -> Configuration {
    configuration(&r.experiment, &r.params, r.label.as_deref())
}

/// What the earlier runs gave for one configuration, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Earlier {
    /// Each run's pooled median.
    pub medians: Vec<f64>,
    /// The median of each of those runs' kernel canaries over the configuration's samples, ns
    /// per call, where they read one (`HostFigures::kernel_canary_median_ns`).
    pub kernel_canaries: Vec<f64>,
    /// The pooled medians of the runs among the most recent that sat wholly in a slow kernel
    /// phase of the host (`analysis::host::slow_runs`), left out of `medians`: of experiments
    /// whose figures leave out slow phases (`experiment::phase_bound`) only.
    pub slow_medians: Vec<f64>,
}

impl Earlier {
    /// `runs` (each run's median and kernel canary, oldest first) for `experiment`: those in
    /// a slow kernel phase set apart where its figures leave slow phases out.
    fn of(experiment: &str, runs: &[(f64, Option<f64>)]) -> Earlier {
        let canaries: Vec<Option<f64>> = runs.iter().map(|r| r.1).collect();
        let slow = if experiment::phase_bound(experiment) {
            slow_runs(&canaries)
        } else {
            vec![false; runs.len()]
        };
        let mut earlier = Earlier::default();
        for (&(median, canary), slow) in runs.iter().zip(slow) {
            if slow {
                earlier.slow_medians.push(median);
            } else {
                earlier.medians.push(median);
                earlier.kernel_canaries.extend(canary);
            }
        }
        earlier
    }
}

/// What each of `planned` gave in the runs stored before `run` (whose id it has) that measured
/// like it, oldest first, at most [`MAX_EARLIER_RUNS`] each. A configuration an earlier run
/// measured as failed, unsupported or suspect, or without a median, is not one of them.
pub fn earlier_runs(
    store: &Store,
    run: &Run,
    planned: &[Configuration],
) -> Result<HashMap<Configuration, Earlier>, StoreError> {
    // Each configuration's runs, newest first: median and kernel canary.
    let mut found: HashMap<Configuration, Vec<(f64, Option<f64>)>> =
        planned.iter().map(|c| (c.clone(), Vec::new())).collect();
    let mut read = 0;
    for id in store.run_ids_before(run.id, RUNS_SCANNED)? {
        let full = found.values().all(|e| e.len() >= MAX_EARLIER_RUNS);
        if read >= RUNS_READ || full {
            break;
        }
        let header = store.load_run_header(id)?;
        if !(header.environment.same_machine(&run.environment)
            && header.settings.measures_like(&run.settings))
        {
            continue;
        }
        read += 1;
        let earlier = store.load_run(id)?;
        for pooled in pool(
            &earlier.results,
            &experiment::expectations_of,
            experiment::phase_bound,
        ) {
            let Some(runs) = found.get_mut(&configuration_of(&pooled.result)) else {
                continue;
            };
            let usable = |m: &f64| pooled.result.status == Status::Ok && m.is_finite() && *m > 0.0;
            if let Some(m) = pooled.median().filter(usable)
                && runs.len() < MAX_EARLIER_RUNS
            {
                // Under a user-mode emulator the null call is the emulator's: no phase of
                // the host's is told by it.
                let canary = pooled.host().and_then(|h| h.kernel_canary_median_ns);
                runs.push((m, canary.filter(|_| pooled.result.emulation.is_none())));
            }
        }
    }
    Ok(found
        .into_iter()
        .filter(|(_, runs)| !runs.is_empty())
        .map(|(configuration, mut runs)| {
            runs.reverse();
            let earlier = Earlier::of(&configuration.0, &runs);
            (configuration, earlier)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::run;

    fn getppid(median: f64) -> ExperimentResult {
        ExperimentResult::from_values("syscall.getppid", &[], &[median, median], 100)
    }

    fn planned() -> Vec<Configuration> {
        vec![
            configuration_of(&getppid(1.0)),
            configuration_of(&ExperimentResult::from_values(
                "syscall.stat",
                &[],
                &[1.0],
                1,
            )),
        ]
    }

    /// `run` stored with its results.
    fn store_run(store: &mut Store, run: &Run) -> i64 {
        store.begin_run(run).unwrap()
    }

    #[test]
    fn only_earlier_runs_that_measured_alike_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.db")).unwrap();
        let mut suspect = getppid(300.0);
        suspect.status = Status::Suspect;
        let mut elsewhere = run(None, 4.0, vec![getppid(400.0)]);
        elsewhere.environment.hostname = Some("lab-2".into());
        let mut quick = run(None, 5.0, vec![getppid(500.0)]);
        quick.settings.quick = true;
        for r in [
            run(None, 1.0, vec![getppid(100.0)]),
            run(Some("tagged"), 2.0, vec![getppid(200.0)]),
            run(None, 3.0, vec![suspect]),
            elsewhere,
            quick,
            run(None, 6.0, vec![getppid(600.0)]),
        ] {
            store_run(&mut store, &r);
        }
        let mut now = run(None, 7.0, vec![]);
        now.id = store_run(&mut store, &now);
        store_run(&mut store, &run(None, 8.0, vec![getppid(800.0)]));

        let found = earlier_runs(&store, &now, &planned()).unwrap();
        assert_eq!(found.len(), 1, "stat was never measured: {found:?}");
        assert_eq!(found[&planned()[0]].medians, vec![100.0, 200.0, 600.0]);
    }

    /// A store with three runs of `experiment` whose samples read a null call of 170 ns, 250
    /// ns and none, their medians 100, 200 and 300; what the run after them finds.
    fn earlier_with_canaries(experiment: &str) -> Earlier {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.db")).unwrap();
        for (k, canary) in [(1, Some(170.0)), (2, Some(250.0)), (3, None)] {
            let mut result = getppid(100.0 * k as f64);
            result.experiment = experiment.into();
            for s in result.samples.iter_mut().filter(|_| canary.is_some()) {
                let value = crate::model::CounterValue {
                    value: canary,
                    raw: canary.unwrap_or(0.0) as u64,
                    enabled_ns: 0,
                    running_ns: 0,
                };
                s.counters
                    .insert(crate::model::host::KERNEL_CANARY.into(), value);
                // A CPU canary too, as every measured sample has.
                let cpu = crate::model::CounterValue {
                    value: Some(5000.0),
                    raw: 5000,
                    ..value
                };
                s.counters.insert(crate::model::host::CANARY.into(), cpu);
            }
            store_run(&mut store, &run(None, k as f64, vec![result]));
        }
        let mut now = run(None, 4.0, vec![]);
        now.id = store_run(&mut store, &now);
        let mut planned = configuration_of(&getppid(1.0));
        planned.0 = experiment.into();
        earlier_runs(&store, &now, std::slice::from_ref(&planned)).unwrap()[&planned].clone()
    }

    #[test]
    fn an_earlier_run_wholly_in_a_slow_kernel_phase_is_set_apart() {
        // Its null call 250 ns against the fastest run's 170: 1.47 times.
        let found = earlier_with_canaries("syscall.getppid");
        assert_eq!(found.medians, vec![100.0, 300.0]);
        assert_eq!(found.kernel_canaries, vec![170.0]);
        assert_eq!(found.slow_medians, vec![200.0]);
    }

    #[test]
    fn an_experiment_that_stays_in_user_space_keeps_every_earlier_run() {
        let found = earlier_with_canaries("syscall.function_call");
        assert_eq!(found.medians, vec![100.0, 200.0, 300.0]);
        assert_eq!(found.kernel_canaries, vec![170.0, 250.0]);
        assert!(found.slow_medians.is_empty());
    }

    #[test]
    fn the_most_recent_runs_count_and_oldest_come_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.db")).unwrap();
        for k in 1..=12 {
            store_run(&mut store, &run(None, k as f64, vec![getppid(k as f64)]));
        }
        let mut now = run(None, 13.0, vec![]);
        now.id = store_run(&mut store, &now);
        let found = earlier_runs(&store, &now, &planned()).unwrap();
        let expect: Vec<f64> = (4..=12).map(f64::from).collect();
        assert_eq!(found[&planned()[0]].medians, expect);
    }
}

//! The steps around a worker, in the parent: a new result, `unsupported` where the
//! experiment does not run on this system (`ExperimentInfo::not_here`), the load started,
//! and the result settled from how the worker ended and judged against its expectations. A
//! worker that crashes, is killed or times out becomes a failed result with its reason, and
//! the run goes on. `harness::copies::workers` runs them in order around one worker or N.

use crate::analysis::validate;
use crate::experiment::params::parse_size;
use crate::experiment::selection::Planned;
use crate::experiment::{ExperimentInfo, Params, SetupError};
use crate::harness::drive::Outcome;
use crate::harness::plan::Plan;
use crate::harness::scratch;
use crate::measure::load::{self, Load};
use crate::model::{Calibration, ExperimentResult, Status};

/// An experiment that does not run on this system (its cell in the equivalence table) is
/// `unsupported`, with the reason: `true`.
pub(super) fn refused_here(result: &mut ExperimentResult, info: &ExperimentInfo) -> bool {
    let Some(why) = info.not_here() else {
        return false;
    };
    result.status = Status::Unsupported;
    result.reason = Some(why);
    true
}

/// A failed result with nothing measured yet, started now (under the run's emulator, if any).
pub(super) fn new_result(planned: &Planned, plan: &Plan) -> ExperimentResult {
    ExperimentResult {
        experiment: planned.info.name.to_string(),
        params: planned.params.as_map().clone(),
        unit: planned.info.unit(),
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
        earlier_medians: Vec::new(),
        earlier_slow_medians: Vec::new(),
        earlier_kernel_canaries: Vec::new(),
        profile: None,
        emulation: plan.emulation.clone(),
        started_at: unix_now(),
        duration_s: 0.0,
    }
}

/// Start the background load the experiment runs beside, if any. A configuration's own load
/// (a suite's) replaces the run's --load. The load runs for exactly the worker's lifetime:
/// started first, killed when it drops. A memory load sizes its cgroup from the experiment's
/// size. `Err`: the load could not start, and `result` says why.
pub(super) fn start_load(
    planned: &Planned,
    plan: &Plan,
    result: &mut ExperimentResult,
) -> Result<Option<load::Running>, ()> {
    let wanted = match planned.load {
        Some(name) => match Load::parse(name) {
            Some(l) => Some(l),
            None => {
                result.reason = Some(format!("unknown load `{name}`"));
                return Err(());
            }
        },
        None => plan.load.clone(),
    };
    let Some(l) = &wanted else {
        return Ok(None);
    };
    let size_hint = planned.params.get("size").and_then(parse_size);
    let measured = plan.cpus.first().copied();
    // An I/O load's directory is made here, in --dir, named so a killed oslab's is swept.
    let io_dir = match l {
        Load::Io => match scratch::create(&plan.dir, scratch::WORK_PREFIX) {
            Ok(dir) => Some(dir),
            Err(e) => {
                let dir = plan.dir.display();
                result.reason = Some(format!(
                    "--load io: cannot create a directory in {dir}: {e}"
                ));
                return Err(());
            }
        },
        _ => None,
    };
    match load::Running::start(l, (measured, plan.other_cpu), size_hint, io_dir) {
        Ok(running) => Ok(Some(running)),
        Err(SetupError::Unsupported(reason)) => {
            result.status = Status::Unsupported;
            result.reason = Some(format!("--load {}: {reason}", l.name()));
            Err(())
        }
        Err(SetupError::Failed(reason)) => {
            let name = l.name();
            result.reason = Some(format!("cannot start the --load {name} load: {reason}"));
            Err(())
        }
    }
}

/// The result's status and reason from how the worker ended.
pub(super) fn settle(
    info: &ExperimentInfo,
    params: &Params,
    outcome: Outcome,
    result: &mut ExperimentResult,
) {
    match outcome {
        Outcome::Done(stop) if result.samples.is_empty() => {
            result.stop_reason = Some(stop);
            result.reason = Some("the worker finished without a sample".into());
        }
        Outcome::Done(stop) => {
            result.stop_reason = Some(stop);
            judge(info, params, result);
        }
        Outcome::Unsupported(reason) => {
            result.status = Status::Unsupported;
            result.reason = Some(reason);
        }
        Outcome::Failed(reason) => {
            result.reason = Some(reason);
        }
    }
}

/// Check the expectations and settle the status of a measured result. A median time per
/// operation at or below zero is `failed`, whatever the checks say: no operation takes no time.
pub fn judge(info: &ExperimentInfo, params: &Params, result: &mut ExperimentResult) {
    let expectations = (info.expectations)(params);
    result.validation = validate::check(
        &expectations,
        &result.samples,
        &result.probes,
        &result.counters,
        &result.facts,
        result.emulation.as_deref(),
    );
    if let Some(reason) = validate::non_positive_reason(&result.samples, &result.calibration) {
        result.status = Status::Failed;
        result.reason = Some(reason);
        return;
    }
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

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(values: &[f64]) -> ExperimentResult {
        let info = crate::experiment::find("syscall.function_call").expect("registered");
        let mut result = ExperimentResult::from_values(info.name, &[], values, 1000);
        result.calibration.loop_overhead_ns = Some(0.5);
        judge(info, &Params::from_pairs(&[]), &mut result);
        result
    }

    #[test]
    fn a_median_at_or_below_zero_fails_with_the_reason() {
        // What pagefault.cow stored once: the baseline taken off outweighed the samples.
        for values in [
            vec![-11031.0, -240.0, 5.0],
            vec![0.0, 0.0, 1.0],
            vec![f64::NAN],
        ] {
            let result = judged(&values);
            assert_eq!(result.status, Status::Failed, "{values:?}");
            let reason = result.reason.expect("a reason");
            assert!(reason.contains("not above 0"), "{reason}");
            assert!(reason.contains("the empty loop's 0.5 ns"), "{reason}");
        }
        // A few negative samples under a positive median are noise, not a failure.
        let result = judged(&[-3.0, 100.0, 101.0]);
        assert_ne!(result.status, Status::Failed, "{:?}", result.reason);
    }
}

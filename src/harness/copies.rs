//! `--copies`: a configuration measured by N copies at once, one per CPU, the way
//! will-it-scale and UnixBench's multi-copy runs ask whether a kernel path scales.
//!
//! In processes (the default) every copy is a worker process of its own, each pinned to its
//! CPU and each a result of its own (the configuration's processes, pooled like `--repeat`'s).
//! The copies meet twice: no copy starts sampling before every copy is set up (each says
//! `Ready` and waits for the parent's `go`), and a copy that has finished keeps running its
//! routine, untimed, until every copy has finished, so each copy's samples are taken while
//! all N run. A copy that fails leaves both meetings at once, so the others go on.
//!
//! In threads the worker runs the copies itself (`measure::companions`): one result, whose
//! facts give each other copy's time per operation.

use std::time::Instant;

use crate::experiment::selection::Planned;
use crate::harness::drive::{Outcome, drive_worker};
use crate::harness::gate::{Gate, Role};
use crate::harness::plan::Plan;
use crate::harness::runner::{new_result, refused_here, settle, start_load};
use crate::harness::scratch;
use crate::measure::load;
use crate::model::{ExperimentResult, Sample};
use crate::platform::cpu;
use crate::platform::cpustat::CpuTimes;
use tempfile::TempDir;

/// The CPU of each of `count` copies: from the measured CPU on, through the CPUs the run may
/// use (those it takes in turn, else every allowed one), round again when there are more
/// copies than CPUs. `None` each where threads cannot be pinned.
pub fn copy_cpus(plan: &Plan, count: usize) -> Vec<Option<usize>> {
    if plan.cpus.is_empty() {
        return vec![None; count];
    }
    let pool = if plan.cpu_turns.len() > 1 {
        plan.cpu_turns.clone()
    } else {
        cpu::allowed()
    };
    let start = plan.cpus[0];
    let from = pool.iter().position(|&c| c == start);
    let pool: Vec<usize> = match from {
        Some(i) => pool[i..].iter().chain(&pool[..i]).copied().collect(),
        None => std::iter::once(start).chain(pool).collect(),
    };
    (0..count).map(|i| Some(pool[i % pool.len()])).collect()
}

/// One configuration's workers, measured: one worker process per entry of `cpus` (one: the
/// plain run, the plan as it is; more: copies in processes, each on its CPU, meeting at the
/// gate, sharing one directory), beside one load, each judged into a result. `threads` are
/// the CPUs of `--copy-mode threads` copies that a single worker runs itself.
pub(super) fn workers(
    planned: &Planned,
    plan: &Plan,
    (cpus, threads): (&[Option<usize>], Vec<Option<usize>>),
    partner: Option<&Planned>,
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Vec<ExperimentResult> {
    let start = Instant::now();
    let mut results: Vec<ExperimentResult> =
        cpus.iter().map(|_| new_result(planned, plan)).collect();
    // A duet's partner (`harness::duet`): measured by the one worker, its result last.
    results.extend(partner.map(|p| new_result(p, plan)));
    let refused = refused_here(&mut results[0], planned.info);
    let running_load = match refused {
        true => Err(()),
        false => start_load(planned, plan, &mut results[0]),
    };
    let copies = &mut results[..cpus.len()];
    let (Ok(running_load), Ok(shared)) = (running_load, shared_dir(planned, plan, copies)) else {
        // Every result says what stopped the first, each with its own parameters.
        let (first, rest) = results.split_first_mut().expect("one result at least");
        for result in rest {
            result.status = first.status;
            result.reason.clone_from(&first.reason);
        }
        return results;
    };
    let cgroup_procs = running_load.as_ref().and_then(load::Running::cgroup_procs);
    let cpu_times = CpuTimes::now();
    let (busy, outcomes): (Vec<usize>, Vec<Outcome>) = if cpus.len() == 1 {
        // One worker (with its copies' threads, or a duet's partner).
        let busy: Vec<usize> = plan
            .cpus
            .iter()
            .chain(threads.iter().flatten())
            .copied()
            .collect();
        let role = Role {
            copy_cpus: threads,
            ..Role::default()
        };
        let (info, params) = (planned.info, &planned.params);
        let outcome = drive_worker(
            info,
            params,
            plan,
            cgroup_procs,
            role,
            &mut results,
            on_sample,
        );
        (busy, vec![outcome; results.len()])
    } else {
        let outcomes = in_processes(
            planned,
            plan,
            cpus,
            cgroup_procs,
            shared.as_ref(),
            &mut results,
            on_sample,
        );
        (cpus.iter().flatten().copied().collect(), outcomes)
    };
    let other_cpus_busy = cpu_times.busy_since(&CpuTimes::now(), &busy);
    let record = running_load.as_ref().map(load::Running::record);
    drop(running_load);
    drop(shared);
    let params = std::iter::repeat_n(&planned.params, cpus.len()).chain(partner.map(|p| &p.params));
    for ((result, outcome), params) in results.iter_mut().zip(outcomes).zip(params) {
        result.other_cpus_busy = other_cpus_busy;
        result.load = record.clone();
        result.duration_s = start.elapsed().as_secs_f64();
        settle(planned.info, params, outcome, result);
    }
    results
}

/// Copies in processes: every copy's worker driven on a thread of its own (the first on this
/// one, which shows the progress), all meeting at one gate.
fn in_processes(
    planned: &Planned,
    plan: &Plan,
    cpus: &[Option<usize>],
    cgroup_procs: Option<std::path::PathBuf>,
    shared: Option<&TempDir>,
    results: &mut [ExperimentResult],
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Vec<Outcome> {
    let gate = Gate::new(cpus.len());
    std::thread::scope(|s| {
        let mut rest = Vec::new();
        let (first, others) = results.split_first_mut().expect("one copy at least");
        for (i, result) in others.iter_mut().enumerate() {
            let plan = copy_plan(plan, cpus[i + 1], false);
            let role = role(&gate, shared);
            let cgroup_procs = cgroup_procs.clone();
            rest.push(s.spawn(move || {
                let (info, params) = (planned.info, &planned.params);
                let result = std::slice::from_mut(result);
                drive_worker(info, params, &plan, cgroup_procs, role, result, &mut |_| {})
            }));
        }
        let plan0 = copy_plan(plan, cpus[0], true);
        let role = role(&gate, shared);
        let (info, params) = (planned.info, &planned.params);
        let first = std::slice::from_mut(first);
        let first = drive_worker(info, params, &plan0, cgroup_procs, role, first, on_sample);
        let mut outcomes = vec![first];
        outcomes.extend(rest.into_iter().map(|t| {
            t.join()
                .unwrap_or_else(|_| Outcome::Failed("this copy's driver panicked".into()))
        }));
        outcomes
    })
}

fn role<'a>(gate: &'a Gate, shared: Option<&TempDir>) -> Role<'a> {
    Role {
        gate: Some(gate),
        copy_cpus: Vec::new(),
        shared_dir: shared.map(|d| d.path().to_path_buf()),
    }
}

/// One copy's plan: its CPU; only the first copy counts the probes and profiles, as only the
/// last of `--repeat`'s processes does (the routine's code is the same in every copy).
fn copy_plan(plan: &Plan, cpu: Option<usize>, first: bool) -> Plan {
    let mut plan = plan.clone();
    plan.cpus = cpu.into_iter().collect();
    plan.probes &= first;
    plan.profile = plan.profile.filter(|_| first);
    plan
}

/// For an experiment with a work directory measured by copies in processes: the directory
/// they share, in `--dir`.
/// `Err`: it could not be made, and every result says why.
fn shared_dir(
    planned: &Planned,
    plan: &Plan,
    results: &mut [ExperimentResult],
) -> Result<Option<TempDir>, ()> {
    if !planned.info.work_dir || results.len() < 2 {
        return Ok(None);
    }
    scratch::create(&plan.dir, scratch::WORK_PREFIX)
        .map(Some)
        .map_err(|e| {
            results[0].reason = Some(format!(
                "cannot create the copies' shared directory in {}: {e}",
                plan.dir.display()
            ));
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_take_the_cpus_in_turn_from_the_measured_one() {
        let plan = |cpus: Vec<usize>, turns: Vec<usize>| Plan {
            cpus,
            cpu_turns: turns,
            ..crate::harness::plan::tests::plan(Vec::new())
        };
        assert_eq!(
            copy_cpus(&plan(vec![2], vec![0, 1, 2, 3]), 5),
            [Some(2), Some(3), Some(0), Some(1), Some(2)]
        );
        assert_eq!(copy_cpus(&plan(Vec::new(), Vec::new()), 2), [None, None]);
    }
}

//! The run's rounds: every configuration in `plan.processes` fresh workers, interleaved (each
//! round runs every configuration once, with that round's layout and CPU), then, where the run
//! adds processes as it goes (`--max-processes`), more rounds of the configurations whose
//! interval more processes would narrow (`analysis::adaptive`), until none is left or each has
//! the most. Every result is stored as it finishes.

use super::*;
use crate::analysis::adaptive;
use crate::model::ExperimentResult;
use crate::model::passes::Passes;

/// How far the rounds may go: the adaptive rule's limits, whose `most` is `plan.processes`
/// when the count is fixed.
pub(super) type Rounds = adaptive::Limits;

/// One configuration's processes so far, as stored.
type Measured = Vec<ExperimentResult>;

/// Run every job's rounds (see the module), each result stored as it finishes with what earlier
/// runs gave for its configuration; an interruption (Ctrl-C) ends the loop before the next job.
pub(super) fn run_all(
    jobs: &[Planned],
    plan: &Plan,
    rounds: Rounds,
    store: &mut Store,
    run_id: i64,
    earlier: &HashMap<Configuration, Earlier>,
) -> Result<()> {
    let mut measured: Vec<Measured> = vec![Vec::new(); jobs.len()];
    let mut total = (0..plan.processes)
        .map(|process| jobs.iter().filter(|job| runs(process, job)).count())
        .sum::<usize>();
    let mut done = 0;
    let mut progress =
        report::progress::Progress::new(std::io::stderr().is_terminal(), plan.sampler.precision);
    for process in 0..(rounds.most as u32).max(plan.processes) {
        let chosen: Vec<usize> = (0..jobs.len())
            .filter(|&j| runs(process, &jobs[j]))
            .filter(|&j| process < plan.processes || wants_more(&measured[j], rounds))
            .collect();
        if chosen.is_empty() {
            break;
        }
        if process >= plan.processes {
            total += chosen.len();
        }
        let plan = plan.for_process(process);
        for step in steps(jobs, &chosen, plan.duet) {
            if crate::platform::interrupt::requested().is_some() {
                return Ok(());
            }
            let name = |j: usize| {
                let job = &jobs[j];
                report::ladder::label_of(job.info.name, job.params.as_map(), job.label.as_deref())
            };
            let measured_now = match step {
                Step::Alone(j) => {
                    done += 1;
                    progress.start(format!("[{done}/{total}] {}", name(j)));
                    let on_sample = &mut |samples: &[_]| progress.sample(samples);
                    vec![(j, harness::run(&jobs[j], &plan, on_sample))]
                }
                Step::Duet(a, b) => {
                    done += 2;
                    let both = format!("{} with {}", name(a), name(b));
                    progress.start(format!("[{}-{done}/{total}] {both}", done - 1));
                    let on_sample = &mut |samples: &[_]| progress.sample(samples);
                    let mut results = harness::duet::run(&jobs[a], &jobs[b], &plan, on_sample);
                    let partner = results.split_off(1);
                    vec![(a, results), (b, partner)]
                }
            };
            let mut lines = Vec::new();
            for (j, results) in measured_now {
                for mut result in results.iter().cloned() {
                    if let Some(e) = earlier.get(&history::configuration_of(&result)) {
                        result.earlier_medians.clone_from(&e.medians);
                        result.earlier_slow_medians.clone_from(&e.slow_medians);
                        result
                            .earlier_kernel_canaries
                            .clone_from(&e.kernel_canaries);
                    }
                    store.add_result(run_id, &result)?;
                    measured[j].push(result);
                }
                lines.extend(results.first().map(progress_line));
            }
            progress.finish(&format!("[{done}/{total}] {}", lines.join("; ")));
        }
    }
    Ok(())
}

/// One worker's share of a round: a configuration alone, or a pair of them in one worker
/// (`harness::duet`), the baseline first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Alone(usize),
    Duet(usize, usize),
}

/// The round's workers, in the jobs' order: each of `chosen` alone, but (with `duet`) a pair of
/// configurations made to be compared goes together, where the first of the two stands.
fn steps(jobs: &[Planned], chosen: &[usize], duet: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut taken = vec![false; jobs.len()];
    for &j in chosen {
        if taken[j] {
            continue;
        }
        taken[j] = true;
        let duet_with = |k: usize| {
            let (a, b) = (&jobs[j], &jobs[k]);
            if harness::duet::pairable(a, b) {
                Some(Step::Duet(j, k))
            } else {
                harness::duet::pairable(b, a).then_some(Step::Duet(k, j))
            }
        };
        let duet_step = chosen
            .iter()
            .copied()
            .filter(|&k| duet && !taken[k])
            .find_map(|k| duet_with(k).map(|step| (k, step)));
        steps.push(match duet_step {
            Some((k, step)) => {
                taken[k] = true;
                step
            }
            None => Step::Alone(j),
        });
    }
    steps
}

/// Whether a process of `job` runs in round `process`: every round, but a configuration sampled
/// in timed passes runs them in one worker (as UnixBench runs its passes in one process; with
/// copies, one per copy).
fn runs(process: u32, job: &Planned) -> bool {
    process == 0 || Passes::of(job.params.as_map()).is_none()
}

/// Whether a configuration measured by `measured` gets another process: the adaptive rule over
/// its pooled processes, as `show` applies it afterwards (`report::levels::stopped`).
fn wants_more(measured: &Measured, rounds: Rounds) -> bool {
    let pooled = report::pool::pool(measured);
    let widths = pooled.first().and_then(report::levels::widths);
    adaptive::next(widths.as_ref(), rounds).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Params;

    fn job(entry: &str, size: &str) -> Planned {
        let map = [("entry", entry), ("size", size)]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Planned {
            info: crate::experiment::REGISTRY[0],
            params: Params::from_map(map),
            label: None,
            load: None,
        }
    }

    #[test]
    fn a_round_pairs_what_is_compared_the_baseline_first() {
        let jobs = [
            job("call", "1"),
            job("inline", "2"),
            job("inline", "1"),
            job("call", "3"),
        ];
        let all = [0, 1, 2, 3];
        assert_eq!(
            steps(&jobs, &all, true),
            [Step::Duet(2, 0), Step::Alone(1), Step::Alone(3)]
        );
        assert_eq!(
            steps(&jobs, &all, false),
            all.map(Step::Alone),
            "without --duet: each alone"
        );
        // A round that did not choose the partner (an added process) runs it alone.
        assert_eq!(
            steps(&jobs, &[0, 1], true),
            [Step::Alone(0), Step::Alone(1)]
        );
    }
}

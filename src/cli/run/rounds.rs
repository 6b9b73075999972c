//! The run's rounds: every configuration in `plan.processes` fresh workers, interleaved (each
//! round runs every configuration once, with that round's layout and CPU), then, where the run
//! adds processes as it goes (`--max-processes`), more rounds of the configurations whose
//! interval more processes would narrow (`analysis::adaptive`), until none is left or each has
//! the most. Every result is stored as it finishes.

use super::*;
use crate::analysis::adaptive;
use crate::model::ExperimentResult;
use crate::model::passes::Passes;

/// How far the rounds may go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rounds {
    /// The most processes a configuration may get (`plan.processes` when the count is fixed).
    pub(super) most: u32,
    /// The precision target of the rerun interval, a fraction of the median.
    pub(super) target: f64,
}

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
    earlier: &HashMap<Configuration, Vec<f64>>,
) -> Result<()> {
    let mut measured: Vec<Measured> = vec![Vec::new(); jobs.len()];
    let mut total = (0..plan.processes)
        .map(|process| jobs.iter().filter(|job| runs(process, job)).count())
        .sum::<usize>();
    let mut done = 0;
    let mut progress =
        report::progress::Progress::new(std::io::stderr().is_terminal(), plan.sampler.precision);
    for process in 0..rounds.most.max(plan.processes) {
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
        for j in chosen {
            if crate::platform::interrupt::requested().is_some() {
                return Ok(());
            }
            let job = &jobs[j];
            done += 1;
            let name =
                report::ladder::label_of(job.info.name, job.params.as_map(), job.label.as_deref());
            progress.start(format!("[{done}/{total}] {name}"));
            let results = harness::run(job, &plan, &mut |samples| progress.sample(samples));
            for mut result in results.iter().cloned() {
                result.earlier_medians = earlier
                    .get(&history::configuration_of(&result))
                    .cloned()
                    .unwrap_or_default();
                store.add_result(run_id, &result)?;
                measured[j].push(result);
            }
            let result = &results[0];
            progress.finish(&format!("[{done}/{total}] {}", progress_line(result)));
        }
    }
    Ok(())
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
    adaptive::next(widths.as_ref(), rounds.target, rounds.most as usize).is_none()
}

//! The harness: the parent side of a run and the child that measures in a fresh process.
//!
//! One entry, [`run`]: a planned configuration ([`Planned`], the selection's) and how to
//! measure it ([`plan::Plan`]: CPUs, sampler, layout, load) go to its workers — one worker, or
//! `--copies` N at once (`copies`: in processes, each on its CPU, meeting at a `gate`; in
//! threads, one worker running them all) — each started and followed in `drive` (its scratch
//! and work directories from `scratch`, the message stream, the time limit, wait4) and judged
//! in `runner` (unsupported here, the load, the result's status and checks); the CLI stores
//! each result with what earlier runs gave (`history`). `worker` is the child's side: the
//! hidden `oslab worker`. Beside them: `maps` (the children `oslab maps` maps), `traced` (one
//! worker's pass under the system-call tracer, for `oslab trace --experiment`), `layout` (what
//! differs between the processes that measure one configuration).

use crate::experiment::selection::Planned;
use crate::model::copies::{Copies, Mode};
use crate::model::{ExperimentResult, Sample};

pub mod copies;
mod drive;
pub mod duet;
mod gate;
pub mod history;
pub mod layout;
pub mod maps;
pub mod plan;
pub mod runner;
pub mod scratch;
pub mod traced;
pub mod worker;

/// Measure one planned configuration with as many copies as its parameters ask (one when
/// they name none): one result per worker process, each judged.
pub fn run(
    planned: &Planned,
    plan: &plan::Plan,
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Vec<ExperimentResult> {
    let copies = Copies::of(planned.params.as_map());
    let cpus = copies::copy_cpus(plan, copies.count as usize);
    match copies.mode {
        _ if copies.count == 1 => {
            copies::workers(planned, plan, (&[None], vec![]), None, on_sample)
        }
        Mode::Threads => {
            let mut plan = plan.clone();
            plan.sampler.own_thread = true;
            copies::workers(planned, &plan, (&[None], cpus), None, on_sample)
        }
        Mode::Processes => copies::workers(planned, plan, (&cpus, vec![]), None, on_sample),
    }
}

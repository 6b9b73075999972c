//! unixbench.spawn: UnixBench's "Process Creation" (`spawn.c`): fork, the child exits at
//! once with `exit(0)` (the C library's exit: its exit handlers and stdio flush, then
//! exit_group), the parent waits for it and checks its status. Parent and child run where the
//! scheduler puts them, as UnixBench's do (`placement=free`, the default; `same` keeps both on
//! the worker's CPU). oslab's own figure for the same loop, pinned and with `_exit`, is
//! `process.fork`.

use super::*;
use crate::experiment::process::{ChildExit, Fork};

fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    place(params, ctx)?;
    // spawn.c's loop: fork, the child exit(0)s, the parent waits.
    Ok(Box::new(Fork {
        exit: ChildExit::Library,
        label: "spawn",
    }))
}

fn expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Counter("tasks"),
            Bound::Near {
                value: 1.0,
                tolerance: 0.05,
            },
            "one loop creates exactly one process (sched_process_fork fires once per fork)",
        ),
        children_fault(),
        no_major_faults(),
        Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Below(1.05),
            "the parent sleeps at most once per loop, waiting for its child; more voluntary \
             switches mean it also slept for something else",
        ),
    ]
}

pub static SPAWN: ExperimentInfo = ExperimentInfo {
    name: "unixbench.spawn",
    os: crate::experiment::UNIX,
    summary: "UnixBench's Process Creation: fork(), the child exits, the parent waits, per loop",
    op: "loop",
    path: "glibc fork() (clone) + exit + waitpid (wait4), unpinned by default",
    params: &[PLACEMENT_FREE_SAME],
    // The child's set_robust_list is glibc's fork (as process.fork_exec claims it).
    syscalls: |_| crate::experiment::each(&["clone", "set_robust_list", "exit_group", "wait4"]),
    subtract_loop_overhead: false,
    default_suite: false,
    ladder: false,
    counters_in_samples: true,
    work_dir: false,
    expectations,
    setup,
    preflight: None,
    batch: crate::experiment::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

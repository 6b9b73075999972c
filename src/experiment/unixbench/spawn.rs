//! unixbench.spawn: UnixBench's "Process Creation" (`spawn.c`): fork, the child exits at
//! once, the parent waits for it. UnixBench's child calls `exit(0)`, which runs the C
//! library's exit handlers and flushes stdio; oslab's calls `_exit(0)` (all a child of a
//! forked Rust process may safely call), a difference of a few user-space instructions.

use super::*;

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
    path: "glibc fork() (clone) + _exit + waitpid (wait4)",
    params: &[],
    // The child's set_robust_list is glibc's fork (as process.fork_exec claims it).
    syscalls: |_| crate::experiment::each(&["clone", "set_robust_list", "exit_group", "wait4"]),
    subtract_loop_overhead: false,
    default_suite: false,
    ladder: false,
    counters_in_samples: true,
    work_dir: false,
    expectations,
    // The same loop as process.fork: glibc fork, the child _exit(0)s, the parent waitpid()s.
    setup: crate::experiment::process::setup_fork,
    preflight: None,
    batch: crate::experiment::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

//! unixbench.spawn: UnixBench's "Process Creation" (`spawn.c`): fork, the child exits at
//! once with `exit(0)` (the C library's exit: its exit handlers and stdio flush, then
//! exit_group), the parent waits for it and checks its status. Parent and child run where the
//! scheduler puts them, as UnixBench's do (`placement=free`, the default; `same` keeps both on
//! the worker's CPU). oslab's own figure for the same loop, pinned and with `_exit`, is
//! `process.fork`.

use super::*;
use crate::experiment::process::reap;

/// spawn.c's loop: fork, the child `exit(0)`s, the parent waits.
struct Spawn;

impl Routine for Spawn {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            // SAFETY: fork has no memory-safety preconditions. The child calls the C library's
            // exit(0), as UnixBench's does: glibc's fork has reset its stdio and malloc locks
            // in the child, the worker registers no C exit handlers, and the child touches
            // nothing the parent shares.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: exit never returns; see above.
                unsafe { libc::exit(0) };
            }
            if pid < 0 {
                return Err(last_os_error("fork"));
            }
            reap(pid, "spawn")?;
        }
        Ok(())
    }
}

fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    place(params, ctx)?;
    Ok(Box::new(Spawn))
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

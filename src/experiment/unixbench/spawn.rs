//! unixbench.spawn: UnixBench's "Process Creation" (`spawn.c`): fork, the child exits at
//! once with `exit(0)` (the C library's exit: its exit handlers and stdio flush, then
//! exit_group), the parent waits for it and checks its status. Parent and child run where the
//! scheduler puts them, as UnixBench's do (`placement=free`, the default; `same` keeps both on
//! the worker's CPU).
//!
//! Who forks (`forker`): a fork's cost grows with the forking process's address space, and
//! oslab's worker is larger than UnixBench's small C program (measured: forking from the
//! worker took 25–30% longer a loop, docs/unixbench.md). `forker=c`, the default where
//! oslab was built for Linux with a C compiler, runs the loop in `c/spawn.c`, a dynamically
//! linked C program of UnixBench's spawn's size, started by the worker once per batch: a
//! batch of N loops is one fork and exec of that program, which forks N times; the same
//! start with no loops is the baseline subtracted. `forker=worker` forks from the worker
//! (the default elsewhere). oslab's own figure for the pinned loop with `_exit` is
//! `process.fork`.

use super::*;

crate::experiment::unix_setups!(routines => setup);

/// Where the forking C program was linked in, `c`; elsewhere the worker forks.
const DEFAULT_FORKER: &str = if cfg!(oslab_spawn_helper) {
    "c"
} else {
    "worker"
};

const FORKER_PARAM: ParamSpec = ParamSpec {
    name: "forker",
    kind: ParamKind::Choice(&["c", "worker"]),
    default: DEFAULT_FORKER,
    help: "c: a small dynamically linked C program forks, as UnixBench's spawn (one start of \
           it per batch, subtracted; the default where oslab was built for Linux with a C \
           compiler); worker: oslab's worker process forks (a larger address space: each \
           fork copies more; the default elsewhere)",
};

fn worker_forks(params: &Params) -> bool {
    params.get("forker").unwrap_or(DEFAULT_FORKER) == "worker"
}

fn expectations(params: &Params) -> Vec<Expectation> {
    let waits = if worker_forks(params) {
        Expectation::new(
            Metric::TypicalRusage("nvcsw"),
            Bound::Below(1.05),
            "the parent sleeps at most once per loop, waiting for its child; more voluntary \
             switches in most samples mean it also slept for something else (judged on the \
             median sample: in an emulated FreeBSD guest, 3 of 34 one-loop samples slept \
             twice, 2026-12-04)",
        )
    } else {
        Expectation::new(
            Metric::Children("nvcsw"),
            Bound::Below(2.05),
            "the forking program sleeps once per loop, waiting for its child, and each child's \
             last switch at its exit counts as voluntary (2.00 measured); more mean something \
             else slept",
        )
    };
    let mut expectations = vec![children_fault(), no_major_faults(), waits];
    if worker_forks(params) {
        // The worker's counters see its own forks only: with forker=c the program's forks
        // are its (it checks each child's exit status; the children's faults show they ran).
        expectations.push(Expectation::new(
            Metric::Counter("tasks"),
            Bound::Near {
                value: 1.0,
                tolerance: 0.05,
            },
            "one loop creates exactly one process (sched_process_fork fires once per fork)",
        ));
    }
    expectations
}

pub static SPAWN: ExperimentInfo = ExperimentInfo::new(
    "unixbench.spawn",
    "UnixBench's Process Creation: fork(), the child exits, the parent waits, per \
     loop; forked by a small C program as UnixBench's (forker=c), or by the worker",
    "loop",
    "glibc fork() (clone) + exit + waitpid (wait4), unpinned by default",
    setup,
)
.params(&[PLACEMENT_FREE_SAME, FORKER_PARAM])
// The child's set_robust_list is glibc's fork (as process.fork_exec claims it); with
// forker=c, the program's execve and start-up once per batch.
.syscalls(|params| {
    let names = ["clone", "set_robust_list", "exit_group", "wait4"];
    if worker_forks(params) {
        crate::experiment::each(&names)
    } else {
        let mut claims = crate::experiment::process::with_dynamic_start_up_per_batch(&names);
        claims.push(crate::experiment::Claim::any_number("execve"));
        claims
    }
})
.outside_default_suite()
.expectations(expectations)
.cells(crate::experiment::unixbench::UNIXBENCH_FAMILY_CELLS);

/// The routine, POSIX's: fork from the worker or from the C program.
#[cfg(unix)]
mod routines {
    use super::super::program::Counted;
    use super::*;
    use crate::experiment::process::{ChildExit, Fork};

    /// The fewest loops a batch of `forker=c` holds: the program's own fork, exec and start-up
    /// (about a millisecond here) stay a few per cent of a batch, and the baseline's noise
    /// smaller still.
    const MIN_LOOPS: u64 = 200;

    /// The C program that forks: `spawn COUNT`.
    #[cfg(oslab_spawn_helper)]
    fn forker_image() -> Result<Vec<u8>, SetupError> {
        Ok(include_bytes!(concat!(env!("OUT_DIR"), "/oslab-spawn")).to_vec())
    }

    #[cfg(not(oslab_spawn_helper))]
    fn forker_image() -> Result<Vec<u8>, SetupError> {
        Err(SetupError::Unsupported(
            "the forking C program was not linked when oslab was built (it is built for Linux \
             targets; see the build's warnings); forker=worker forks from oslab's worker"
                .into(),
        ))
    }

    pub(super) fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        place(params, ctx)?;
        if worker_forks(params) {
            // spawn.c's loop in the worker: fork, the child exit(0)s, the parent waits.
            return Ok(Box::new(Fork {
                exit: ChildExit::Library,
                label: "spawn",
            }));
        }
        // `forker=c`: the C program runs the loops, `spawn COUNT`.
        let image = forker_image()?;
        Ok(Box::new(Counted::install(
            ctx,
            &image,
            "spawn",
            &[],
            MIN_LOOPS,
        )?))
    }
}

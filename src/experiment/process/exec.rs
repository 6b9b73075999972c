//! process.fork_exec and process.posix_spawn: a child that executes the program, reaped.

use super::*;

crate::experiment::unix_setups!(routines => setup_fork_exec, setup_posix_spawn);

pub(super) const TARGET_PARAM: ParamSpec = ParamSpec {
    name: "target",
    kind: ParamKind::Choice(&["static", "dynamic"]),
    default: "static",
    help: "program the child executes: `static`, a static ELF of under 200 bytes that only calls \
           exit_group(0), written to a private temporary directory (the kernel's exec alone); \
           `dynamic`, /bin/true (adds the dynamic loader and libc start-up)",
};

// --- process.fork_exec ---

/// What `target=dynamic` (/bin/true) adds in the child, once each at least: the dynamic
/// loader mapping libc (glibc 2.36 on x86-64: `access` of /etc/ld.so.preload, `openat`,
/// `read`, `pread64`, `newfstatat`, `mmap`, `mprotect`, `munmap`, `close`), the thread's set-up
/// (`brk`, `arch_prctl`, `set_tid_address`, `set_robust_list`, `rseq`) and libc's start-up
/// (`prlimit64`). Another C library or loader may make others: the trace then says which.
const DYNAMIC_START_UP: &[&str] = &[
    "access",
    "openat",
    "read",
    "pread64",
    "newfstatat",
    "mmap",
    "mprotect",
    "munmap",
    "close",
    "brk",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "prlimit64",
];

/// `names`, plus the dynamic program's start-up for `target=dynamic`, each once.
fn with_target(params: &Params, names: &[&'static str]) -> Vec<crate::experiment::Claim> {
    if params.get("target") == Some("dynamic") {
        with_dynamic_start_up(names)
    } else {
        crate::experiment::each(names)
    }
}

/// `names`, plus what a dynamically linked program's start-up makes (`DYNAMIC_START_UP`),
/// each once.
pub(crate) fn with_dynamic_start_up(names: &[&'static str]) -> Vec<crate::experiment::Claim> {
    with_start_up(names, crate::experiment::Claim::each)
}

/// `names`, plus what a dynamically linked program's start-up makes, for a program started
/// once per batch: claimed any number of times (one start in a batch of N is 1/N per op).
pub(crate) fn with_dynamic_start_up_per_batch(
    names: &[&'static str],
) -> Vec<crate::experiment::Claim> {
    with_start_up(names, crate::experiment::Claim::any_number)
}

fn with_start_up(
    names: &[&'static str],
    start_up: fn(&'static str) -> crate::experiment::Claim,
) -> Vec<crate::experiment::Claim> {
    let mut claims = crate::experiment::each(names);
    for &name in DYNAMIC_START_UP {
        if !names.contains(&name) {
            claims.push(start_up(name));
        }
    }
    claims
}

/// The parent's clone and wait4, the child's set_robust_list (glibc's fork), execve and
/// exit_group; the dynamic program's start-up too.
fn fork_exec_calls(params: &Params) -> Vec<crate::experiment::Claim> {
    let names = ["clone", "set_robust_list", "execve", "exit_group", "wait4"];
    with_target(params, &names)
}

/// The parent's posix_spawn (the child's stack mapped and unmapped, signals blocked around
/// clone3) and wait4; the child resets every signal's disposition (`rt_sigaction`, ~120 per
/// spawn on x86-64) before its execve; the dynamic program's start-up too.
fn spawn_calls(params: &Params) -> Vec<crate::experiment::Claim> {
    let names = [
        "clone3",
        "mmap",
        "munmap",
        "rt_sigprocmask",
        "rt_sigaction",
        "execve",
        "exit_group",
        "wait4",
    ];
    with_target(params, &names)
}

pub static FORK_EXEC: ExperimentInfo = ExperimentInfo::new(
    "process.fork_exec",
    "fork(), the child execve()s a tiny program (a static exit(0) unless \
     target=dynamic), the parent waitpid()s: starting a new program",
    "fork+exec+wait",
    "glibc fork() (clone) + execve + waitpid (wait4), empty environment",
    setup_fork_exec,
)
.params(&[TARGET_PARAM])
.syscalls(fork_exec_calls)
.ladder()
.expectations(fork_expectations)
.cells(crate::experiment::process::FORK_CELLS);

// --- process.posix_spawn ---

pub static POSIX_SPAWN: ExperimentInfo = ExperimentInfo::new(
    "process.posix_spawn",
    "posix_spawn() of the same tiny program, then waitpid(): a new program without \
     copying the parent's page tables",
    "spawn+wait",
    "glibc posix_spawn (clone3 CLONE_VM|CLONE_VFORK + execve) + waitpid (wait4), empty \
     environment",
    setup_posix_spawn,
)
.params(&[TARGET_PARAM])
.syscalls(spawn_calls)
.expectations(spawn_expectations)
.cells(crate::experiment::process::FORK_CELLS);

/// The routines, POSIX's: fork and execve, posix_spawn.
#[cfg(unix)]
pub(super) mod routines {
    use super::*;
    use crate::experiment::{Context, Routine, RoutineError, SetupError};

    /// `fork()`, the child `execve`s the target (and `_exit(127)`s if that fails), the parent
    /// `waitpid`s.
    pub(crate) struct ForkExec {
        pub(crate) program: Program,
    }

    impl Routine for ForkExec {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let path = self.program.path.as_ptr();
            let argv = self.program.argv.as_ptr() as *const *const c_char;
            let envp = self.program.envp.as_ptr() as *const *const c_char;
            for _ in 0..ops {
                // SAFETY: as in `Fork`; the child calls only execve and _exit (both
                // async-signal-safe) with pointers prepared before the fork.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    // SAFETY: `path`, `argv`, `envp` are valid NUL-/null-terminated arrays in
                    // this (copied) address space; execve returns only on failure.
                    unsafe {
                        libc::execve(path, argv, envp);
                        libc::_exit(127);
                    }
                }
                if pid < 0 {
                    return Err(RoutineError::last_os("fork"));
                }
                reap(pid, "fork+exec")?;
            }
            Ok(())
        }
    }

    pub(super) fn setup_fork_exec(
        params: &Params,
        context: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        Ok(Box::new(ForkExec {
            program: program(params, context)?,
        }))
    }

    /// glibc's `posix_spawn`: a `clone(CLONE_VM | CLONE_VFORK)` on a freshly mapped stack, the
    /// child resets its signal dispositions and `execve`s; an exec failure is reported to the
    /// parent through the shared memory, so no `_exit(127)` round is needed to see it.
    pub(super) struct Spawn {
        pub(super) program: Program,
    }

    impl Routine for Spawn {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                self.program.spawn_and_reap()?;
            }
            Ok(())
        }
    }

    pub(super) fn setup_posix_spawn(
        params: &Params,
        context: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        Ok(Box::new(Spawn {
            program: program(params, context)?,
        }))
    }
}

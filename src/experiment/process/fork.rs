//! process.fork and process.vfork: a child that exits at once, reaped with waitpid.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup_fork, setup_vfork);
#[cfg(unix)]
pub(crate) use routines::{ChildExit, Fork};

// --- process.fork ---

pub static FORK: ExperimentInfo = ExperimentInfo::new(
    "process.fork",
    "fork(), the child _exit(0)s, the parent waitpid()s: a process created and reaped \
     (parent and child share the worker's CPU)",
    "fork+wait",
    "glibc fork() (clone) + _exit + waitpid (wait4)",
    setup_fork,
)
// The child's set_robust_list: glibc's fork registers the child's robust futex list anew.
.syscalls(|_| crate::experiment::each(&["clone", "set_robust_list", "exit_group", "wait4"]))
.ladder()
.expectations(fork_expectations)
.cells(crate::experiment::process::FORK_CELLS);

// --- process.vfork ---

/// aarch64 has no vfork system call: its wrapper makes a clone.
#[cfg(unix)]
pub(super) const VFORK_SYSCALLS: &[&str] =
    &[crate::platform::raw::VFORK_SYSCALL, "exit_group", "wait4"];
/// Claimed where the raw path is not built (never traced there).
#[cfg(not(unix))]
pub(super) const VFORK_SYSCALLS: &[&str] = &["vfork", "exit_group", "wait4"];

pub static VFORK: ExperimentInfo = ExperimentInfo::new(
    "process.vfork",
    "vfork(), the child exits at once, the parent waitpid()s: a process that borrows \
     the parent's memory instead of copying its page tables",
    "vfork+wait",
    "raw vfork syscall in an asm wrapper (aarch64: clone CLONE_VM|CLONE_VFORK) + \
     exit_group + waitpid (wait4)",
    setup_vfork,
)
.syscalls(|_| crate::experiment::each(VFORK_SYSCALLS))
.expectations(vfork_expectations)
.cells(eq::Cells {
    linux: eq::noted(
        "raw vfork in assembly",
        "x86-64: vfork; arm64: clone with CLONE_VM and CLONE_VFORK",
    ),
    freebsd: eq::noted("raw vfork in assembly", "vfork (66), x86-64"),
    macos: eq::Cell::No("not available: no raw system calls"),
    windows: eq::Cell::No("not available: Windows has no fork"),
});

/// The routines, POSIX's: fork and vfork.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::{Context, Routine, RoutineError, SetupError};
    use crate::platform::raw;

    /// How a forked child ends.
    #[derive(Clone, Copy)]
    pub(crate) enum ChildExit {
        /// `_exit(0)`: straight to exit_group, nothing of the C library runs (process.fork).
        Immediate,
        /// The C library's `exit(0)`: its exit handlers and stdio flush, then exit_group, as
        /// UnixBench's spawn.c does (unixbench.spawn).
        Library,
    }

    /// `fork()` through glibc (a `clone` with CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD,
    /// plus the atfork handlers), the child exits at once as `exit` says, the parent `waitpid`s;
    /// `label` names the loop in a failed reap's message.
    pub(crate) struct Fork {
        pub(crate) exit: ChildExit,
        pub(crate) label: &'static str,
    }

    impl Routine for Fork {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                // SAFETY: fork has no memory-safety preconditions; what the child may do is in
                // `exit_child`.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    exit_child(self.exit);
                }
                if pid < 0 {
                    return Err(RoutineError::last_os("fork"));
                }
                reap(pid, self.label)?;
            }
            Ok(())
        }
    }

    /// Ends a child of `fork` at once.
    fn exit_child(exit: ChildExit) -> ! {
        match exit {
            // SAFETY: the child of this process may only call async-signal-safe functions
            // (fork(2), signal-safety(7)); _exit is one and never returns, so no destructor,
            // allocator or lock runs in it.
            ChildExit::Immediate => unsafe { libc::_exit(0) },
            // SAFETY: exit is not async-signal-safe, but glibc's fork has reset its stdio and
            // malloc locks in the child, the worker registers no C exit handlers, and the child
            // touches nothing the parent shares; exit never returns.
            ChildExit::Library => unsafe { libc::exit(0) },
        }
    }

    pub(crate) fn setup_fork(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
        Ok(Box::new(Fork {
            exit: ChildExit::Immediate,
            label: "fork",
        }))
    }

    /// A vfork whose child exits at once (`platform::raw::vfork_exit0`, an assembly wrapper:
    /// the child of a plain `vfork()` call could corrupt the stack it shares with its parent),
    /// reaped with waitpid.
    pub(super) struct Vfork;

    impl Routine for Vfork {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                let pid = raw::vfork_exit0();
                if pid < 0 {
                    return Err(RoutineError::Os {
                        call: "vfork".into(),
                        source: std::io::Error::from_raw_os_error(-pid as i32),
                    });
                }
                reap(pid as libc::pid_t, "vfork")?;
            }
            Ok(())
        }
    }

    pub(super) fn setup_vfork(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
        if !raw::SUPPORTED {
            return Err(SetupError::Unsupported(format!(
                "process.vfork needs its assembly wrapper, written for x86_64 and aarch64 only (this \
                 is {})",
                std::env::consts::ARCH
            )));
        }
        Ok(Box::new(Vfork))
    }
}

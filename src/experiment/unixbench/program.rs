//! The C programs of UnixBench's tests that run as processes of their own (`c/execl.c`,
//! `c/spawn.c`, `c/cpu.c`; build.rs links them, oslab embeds them): written to a private
//! helper directory, started from the worker with fork and exec, reaped; and the routine of
//! the programs that run a batch's loops themselves (`Counted`).

use crate::experiment::RoutineError;
use std::ffi::{CString, c_char};

use super::*;
use crate::experiment::process::{HelperFile, helper_dirs, reap};

/// A program written out to run.
pub(super) struct Program {
    path: CString,
    /// Pass the worker's environment (the dynamic loader reads it, as UnixBench's programs
    /// get theirs); `false`: an empty one.
    environment: bool,
    /// What the program is, for messages ("execl countdown": "the execl countdown program").
    what: &'static str,
    helper: HelperFile,
}

impl Program {
    /// Write `image` to the first helper directory where it can be written and run, trying
    /// it there with `check` (which runs it).
    pub(super) fn install(
        ctx: &Context,
        image: &[u8],
        environment: bool,
        what: &'static str,
        check: impl Fn(&Program) -> Result<(), RoutineError>,
    ) -> Result<Program, SetupError> {
        let mut refused = Vec::new();
        for dir in helper_dirs(ctx) {
            let helper = match HelperFile::create(&dir, image) {
                Ok(helper) => helper,
                Err(e) => {
                    refused.push(format!("{}: {e}", dir.display()));
                    continue;
                }
            };
            let path = CString::new(helper.path.as_os_str().as_encoded_bytes()).map_err(|_| {
                SetupError::Failed(format!("the {what} program's path has a NUL byte"))
            })?;
            let program = Program {
                path,
                environment,
                what,
                helper,
            };
            match check(&program) {
                Ok(()) => return Ok(program),
                Err(e) => refused.push(format!("{}: {e}", program.helper.dir.display())),
            }
        }
        Err(SetupError::Unsupported(format!(
            "no directory where the {what} program can be written and executed: {} (set TMPDIR to an \
             executable directory)",
            refused.join("; ")
        )))
    }

    /// Fork; the child execs the program with `args` after its path; wait for it to exit
    /// with status 0.
    pub(super) fn run(&self, args: &[&CString]) -> Result<(), RoutineError> {
        let mut argv: Vec<*const c_char> = vec![self.path.as_ptr()];
        argv.extend(args.iter().map(|a| a.as_ptr()));
        argv.push(std::ptr::null());
        let empty: [*const c_char; 1] = [std::ptr::null()];
        // SAFETY: the child calls only execve/execv and _exit (async-signal-safe) with
        // arrays built before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: `argv` and `empty` are null-terminated arrays of NUL-terminated strings
            // that live in this (copied) address space; exec returns only on failure.
            unsafe {
                if self.environment {
                    libc::execv(self.path.as_ptr(), argv.as_ptr());
                } else {
                    libc::execve(self.path.as_ptr(), argv.as_ptr(), empty.as_ptr());
                }
                libc::_exit(127);
            }
        }
        if pid < 0 {
            return Err(RoutineError::last_os("fork"));
        }
        reap(pid, self.what)
    }
}

/// A routine whose batch is one start of a program that runs the batch's loops itself,
/// `PROGRAM ARGS… COUNT` (spawn's forks, the cpu program's Dhrystone or Whetstone): the same
/// start with COUNT 0 is the baseline, paid once per batch; a batch holds at least `min`
/// loops, so that start stays a small share of it.
pub(super) struct Counted {
    program: Program,
    args: Vec<CString>,
    min: u64,
}

impl Counted {
    /// Install `image` (with the worker's environment: the loader reads it, as UnixBench's
    /// programs get theirs), checked by running three loops.
    pub(super) fn install(
        ctx: &Context,
        image: &[u8],
        what: &'static str,
        args: &[&str],
        min: u64,
    ) -> Result<Counted, SetupError> {
        let args = args
            .iter()
            .map(|a| CString::new(*a).expect("an argument has no NUL"))
            .collect::<Vec<_>>();
        let program = Program::install(ctx, image, true, what, |program| loops(program, &args, 3))?;
        Ok(Counted { program, args, min })
    }
}

/// Start the program for `count` loops and wait for it.
fn loops(program: &Program, args: &[CString], count: u64) -> Result<(), RoutineError> {
    let count = CString::new(count.to_string()).expect("digits have no NUL");
    let mut all: Vec<&CString> = args.iter().collect();
    all.push(&count);
    program.run(&all)
}

impl Routine for Counted {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        loops(&self.program, &self.args, ops)
    }

    fn run_baseline(&mut self, _ops: u64) -> Option<Result<(), RoutineError>> {
        Some(loops(&self.program, &self.args, 0))
    }

    fn baseline_per_batch(&self) -> bool {
        true
    }

    fn min_batch(&self) -> Option<u64> {
        Some(self.min)
    }
}

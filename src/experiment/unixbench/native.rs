//! The C builds of Dhrystone and Whetstone (`c/`, compiled by build.rs with UnixBench's
//! `-O3 -ffast-math`): what UnixBench's `dhry2reg` and `whetstone-double` run, so that their
//! figures land where UnixBench's do. The Rust ports stay as `language=rust`.
//!
//! The C code keeps its state in process-wide globals (as Weicker's and Longbottom's
//! programs do); a worker process measures one configuration, so one routine per process
//! uses them.

use super::*;
#[cfg(oslab_unixbench_c)]
use crate::experiment::RoutineError;

/// The cpu program's routine, POSIX's (a fork and exec per batch).
#[cfg(unix)]
mod program;
#[cfg(not(unix))]
pub(super) use crate::experiment::unixbench::not_posix as in_program_routine;
#[cfg(unix)]
pub(super) use program::in_program_routine;

/// `language=c|rust`: UnixBench's C, or oslab's Rust port.
pub(super) const LANGUAGE_PARAM: ParamSpec = ParamSpec {
    name: "language",
    kind: ParamKind::Choice(&["c", "rust"]),
    default: "c",
    help: "c: the benchmark in C, built with UnixBench's -O3 -ffast-math (what UnixBench's \
           figure measures); rust: oslab's Rust port (the same algorithm, another compiler)",
};

/// `language=rust`.
pub(super) fn rust(params: &Params) -> bool {
    params.get("language") == Some("rust")
}

/// Where the cpu program (`c/cpu.c`) was linked in, `program`; elsewhere the worker.
const DEFAULT_RUNNER: &str = if cfg!(oslab_cpu_helper) {
    "program"
} else {
    "worker"
};

/// `runner=program|worker`: who runs the C loops.
pub(super) const RUNNER_PARAM: ParamSpec = ParamSpec {
    name: "runner",
    kind: ParamKind::Choice(&["program", "worker"]),
    default: DEFAULT_RUNNER,
    help: "language=c only. program: a small dynamically linked C program runs the loops, as \
           UnixBench's dhry2reg and whetstone-double run theirs (started once per batch, the \
           start subtracted; the default where oslab was built for Linux with a C compiler); \
           worker: oslab's worker calls the same C code, its stack and data elsewhere (4% \
           slower for Dhrystone here; the default elsewhere)",
};

/// `runner=program` with `language=c`: the C program runs the loops.
pub(super) fn in_program(params: &Params) -> bool {
    !rust(params) && params.get("runner").unwrap_or(DEFAULT_RUNNER) == "program"
}

/// The routine of a benchmark built both ways, once the worker is placed (`placement`, as
/// every test of the family): the Rust port with `language=rust`, the C in the cpu program
/// (`runner=program`, the program's `mode`, started from the placed worker), else the C
/// called from the worker.
pub(super) fn routine(
    params: &Params,
    ctx: &Context,
    mode: &'static str,
    port: fn() -> Box<dyn Routine>,
    in_worker: fn() -> Result<Box<dyn Routine>, SetupError>,
) -> Result<Box<dyn Routine>, SetupError> {
    place(params, ctx)?;
    if rust(params) {
        Ok(port())
    } else if in_program(params) {
        in_program_routine(mode, ctx)
    } else {
        in_worker()
    }
}

/// The system calls of a loop: none; with the program, the worker's fork and wait and the
/// program's exec and start-up, once per batch.
pub(super) fn claims(params: &Params) -> Vec<crate::experiment::Claim> {
    if !in_program(params) {
        return Vec::new();
    }
    let mut claims = crate::experiment::process::with_dynamic_start_up_per_batch(&[]);
    for name in ["clone", "execve", "exit_group", "wait4"] {
        claims.push(crate::experiment::Claim::any_number(name));
    }
    claims
}

/// The worker's system calls per loop: none, or with the program its start once per batch.
pub(super) fn syscalls_expectation(params: &Params, what: &'static str) -> Expectation {
    if in_program(params) {
        Expectation::new(
            Metric::Counter("syscalls"),
            Bound::Below(0.5),
            "the worker only starts the program (fork, wait) once per batch of many loops; \
             the loops themselves run in user space",
        )
    } else {
        super::syscalls_near(0.0, what)
    }
}

#[cfg(oslab_unixbench_c)]
mod ffi {
    unsafe extern "C" {
        pub fn oslab_dhry_init();
        pub fn oslab_dhry_run(loops: u64);
        #[cfg(test)]
        pub fn oslab_dhry_globals(
            int_glob: *mut libc::c_long,
            bool_glob: *mut libc::c_int,
            ch_1: *mut libc::c_char,
            ch_2: *mut libc::c_char,
            arr_1_8: *mut libc::c_long,
            arr_2_8_7: *mut libc::c_long,
        );
        pub fn oslab_whets_pass(passes: u64);
        #[cfg(test)]
        pub fn oslab_whets_check() -> f64;
    }
}

#[cfg(oslab_unixbench_c)]
mod built {
    use super::*;

    /// Dhrystone 2.1 in C.
    struct CDhrystone;

    /// Whetstone in C.
    struct CWhetstone;

    impl Routine for CDhrystone {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            // SAFETY: initialised in `dhrystone()`; the globals are this process's alone.
            unsafe { ffi::oslab_dhry_run(ops) };
            Ok(())
        }
    }

    impl Routine for CWhetstone {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            // SAFETY: plain computation on the C file's own globals.
            unsafe { ffi::oslab_whets_pass(ops) };
            Ok(())
        }
    }

    pub(in super::super) fn dhrystone() -> Result<Box<dyn Routine>, SetupError> {
        static INIT: std::sync::Once = std::sync::Once::new();
        // SAFETY: allocates and sets Weicker's globals, once per process.
        INIT.call_once(|| unsafe { ffi::oslab_dhry_init() });
        Ok(Box::new(CDhrystone))
    }

    pub(in super::super) fn whetstone() -> Result<Box<dyn Routine>, SetupError> {
        Ok(Box::new(CWhetstone))
    }

    /// Weicker's globals after the runs so far: (Int_Glob, Bool_Glob, Ch_1_Glob, Ch_2_Glob,
    /// Arr_1_Glob[8], Arr_2_Glob[8][7]).
    #[cfg(test)]
    // c_long is i64 on the 64-bit targets, i32 elsewhere: the conversion is needed somewhere.
    #[allow(clippy::useless_conversion)]
    pub(in super::super) fn dhrystone_globals() -> (i64, bool, u8, u8, i64, i64) {
        let (mut int_glob, mut bool_glob, mut ch_1, mut ch_2, mut a1, mut a2) = (0, 0, 0, 0, 0, 0);
        // SAFETY: six valid, writable out-pointers.
        unsafe {
            ffi::oslab_dhry_globals(
                &mut int_glob,
                &mut bool_glob,
                &mut ch_1,
                &mut ch_2,
                &mut a1,
                &mut a2,
            )
        };
        // c_long and c_char differ between targets (i32 or i64, i8 or u8).
        (
            i64::from(int_glob),
            bool_glob != 0,
            ch_1.to_ne_bytes()[0],
            ch_2.to_ne_bytes()[0],
            i64::from(a1),
            i64::from(a2),
        )
    }

    /// A value the Whetstone passes so far computed.
    #[cfg(test)]
    pub(in super::super) fn whetstone_check() -> f64 {
        // SAFETY: reads the C file's globals.
        unsafe { ffi::oslab_whets_check() }
    }
}

#[cfg(oslab_unixbench_c)]
pub(super) use built::*;

#[cfg(not(oslab_unixbench_c))]
fn not_built(what: &str) -> SetupError {
    SetupError::Unsupported(format!(
        "{what} in C was not built (the C compiler failed when oslab was built: see the build's \
         warnings); language=rust runs oslab's Rust port"
    ))
}

#[cfg(not(oslab_unixbench_c))]
pub(super) fn dhrystone() -> Result<Box<dyn Routine>, SetupError> {
    Err(not_built("Dhrystone"))
}

#[cfg(not(oslab_unixbench_c))]
pub(super) fn whetstone() -> Result<Box<dyn Routine>, SetupError> {
    Err(not_built("Whetstone"))
}

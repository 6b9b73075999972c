//! `runner=program`: Dhrystone and Whetstone in the cpu program (`c/cpu.c`, a small dynamically
//! linked C program, as UnixBench's dhry2reg and whetstone-double are), started by the worker
//! once per batch: a batch of N loops is one fork and exec of `cpu BENCHMARK N`; the same start
//! with no loops is the baseline subtracted.

use std::ffi::CString;

use super::super::program::Program;
use super::*;

/// The fewest loops of a batch: the program's fork, exec and start-up (about a millisecond)
/// stay a few per cent of a batch, and the baseline's noise smaller still. Dhrystone: 2
/// million loops (about 36 ms here); Whetstone: 50 passes (about 55 ms).
fn min_loops(benchmark: &str) -> u64 {
    if benchmark == "dhrystone" {
        2_000_000
    } else {
        50
    }
}

/// The cpu program: `cpu dhrystone|whetstone COUNT`.
#[cfg(oslab_cpu_helper)]
fn image() -> Result<Vec<u8>, SetupError> {
    Ok(include_bytes!(concat!(env!("OUT_DIR"), "/oslab-cpu")).to_vec())
}

#[cfg(not(oslab_cpu_helper))]
fn image() -> Result<Vec<u8>, SetupError> {
    Err(SetupError::Unsupported(
        "the cpu program (Dhrystone and Whetstone in a process of their own) was not linked \
         when oslab was built (it is built for Linux targets; see the build's warnings); \
         runner=worker runs the same C code in oslab's worker"
            .into(),
    ))
}

struct InProgram {
    program: Program,
    benchmark: CString,
    min: u64,
}

impl InProgram {
    fn loops(&self, count: u64) -> Result<(), String> {
        let count = CString::new(count.to_string()).expect("digits have no NUL");
        self.program.run(&[&self.benchmark, &count])
    }
}

impl Routine for InProgram {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        self.loops(ops)
    }

    fn run_baseline(&mut self, _ops: u64) -> Option<Result<(), String>> {
        Some(self.loops(0))
    }

    fn baseline_per_batch(&self) -> bool {
        true
    }

    fn min_batch(&self) -> Option<u64> {
        Some(self.min)
    }
}

/// The routine that runs `benchmark` ("dhrystone" or "whetstone") in the cpu program, with
/// the worker's environment (the loader reads it and it places the program's stack, as
/// UnixBench's programs get theirs).
pub(in super::super) fn in_program_routine(
    benchmark: &'static str,
    ctx: &Context,
) -> Result<Box<dyn Routine>, SetupError> {
    let image = image()?;
    let name = CString::new(benchmark).expect("a name has no NUL");
    let one = CString::new("1").expect("digits have no NUL");
    let program = Program::install(ctx, &image, true, "cpu", |program| {
        program.run(&[&name, &one])
    })?;
    Ok(Box::new(InProgram {
        program,
        benchmark: name,
        min: min_loops(benchmark),
    }))
}

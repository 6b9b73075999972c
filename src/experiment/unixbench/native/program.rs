//! `runner=program`: Dhrystone and Whetstone in the cpu program (`c/cpu.c`, a small dynamically
//! linked C program, as UnixBench's dhry2reg and whetstone-double are), started by the worker
//! once per batch: a batch of N loops is one fork and exec of `cpu BENCHMARK N`; the same start
//! with no loops is the baseline subtracted.

use super::super::program::Counted;
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

/// The routine that runs `benchmark` ("dhrystone" or "whetstone") in the cpu program, `cpu
/// BENCHMARK COUNT`, with the worker's environment (it places the program's stack, as
/// UnixBench's programs get theirs).
pub(in super::super) fn in_program_routine(
    benchmark: &'static str,
    ctx: &Context,
) -> Result<Box<dyn Routine>, SetupError> {
    let image = image()?;
    let routine = Counted::install(ctx, &image, "cpu", &[benchmark], min_loops(benchmark))?;
    Ok(Box::new(routine))
}

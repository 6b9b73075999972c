//! unixbench.whetstone: the double-precision Whetstone benchmark (H. J. Curnow and B. A.
//! Wichmann, "A synthetic benchmark", The Computer Journal 19(1), 1976), in the form of Roy
//! Longbottom's `whets.c` (C/C++ Whetstone, with Al Aburto's timers) that UnixBench runs as
//! "Double-Precision Whetstone", ported to Rust from that published algorithm.
//!
//! One operation is one pass with `x100 = 100`: the eight sections N1–N8 once each, the loop
//! counts of whets.c (12, 14, 345, 210, 32, 899, 616, 93 × 100). whets.c runs section N1 ten
//! times as often and divides its time by ten; running it once gives the time it counts.
//! A pass is 10 million Whetstone instructions (whets.c's MWIPS = passes × 100 / (10 ×
//! seconds)), so MWIPS = 1e10 / ns per pass. As in whets.c, `t` alternates between
//! 0.49999975 and 0.50000025 from one pass to the next, and the array `e1` and the results
//! carry over. A Rust port is not C compiled with UnixBench's `-O3 -ffast-math`: comparable
//! in kind, not to the digit (`black_box` keeps every section's result alive).

use crate::experiment::RoutineError;
use std::hint::black_box;

use super::*;
use crate::experiment::unixbench::native;

const X100: i64 = 100;
const T0: f64 = 0.499_999_75;
const T1: f64 = 0.500_000_25;
const T2: f64 = 2.0;

pub(super) struct Whetstone {
    e1: [f64; 4],
    t: f64,
    /// The sum of the sections' check values after the last pass (whets.c's `Check`).
    pub(super) check: f64,
}

impl Whetstone {
    pub(super) fn new() -> Whetstone {
        Whetstone {
            e1: [1.0, -1.0, -1.0, -1.0],
            t: T0,
            check: 0.0,
        }
    }

    /// One pass of the eight sections.
    #[inline(never)]
    pub(super) fn pass(&mut self) {
        let t = black_box(self.t);
        let (n1, n2, n3, n4, n5, n6, n7, n8) = (
            12 * X100,
            14 * X100,
            345 * X100,
            210 * X100,
            32 * X100,
            899 * X100,
            616 * X100,
            93 * X100,
        );
        let mut check = 0.0;
        // N1: array elements.
        let e1 = &mut self.e1;
        for _ in 0..n1 {
            e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
            e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
            e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
            e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
        }
        check += black_box(e1[3]);
        // N2: array as parameter.
        for _ in 0..n2 {
            pa(e1, t, T2);
        }
        check += black_box(e1[3]);
        // N3: conditional jumps.
        let mut j: i64 = 1;
        for _ in 0..n3 {
            j = if black_box(j) == 1 { 2 } else { 3 };
            j = if j > 2 { 0 } else { 1 };
            j = if j < 1 { 1 } else { 0 };
        }
        check += j as f64;
        // N4: integer arithmetic.
        let (mut j, mut k, mut l): (i64, i64, i64) = (black_box(1), black_box(2), black_box(3));
        for _ in 0..n4 {
            j = j * (k - j) * (l - k);
            k = l * k - (l - j) * k;
            l = (l - k) * (k + j);
            e1[(l - 2) as usize] = (j + k + l) as f64;
            e1[(k - 2) as usize] = (j * k * l) as f64;
            black_box(&e1);
        }
        check += e1[0] + e1[1];
        // N5: trigonometric functions.
        let (mut x, mut y) = (0.5f64, 0.5f64);
        for _ in 1..n5 {
            x = t * (T2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
            y = t * (T2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        }
        check += black_box(y);
        // N6: procedure calls.
        let (mut x, mut y, mut z) = (1.0f64, 1.0f64, 1.0f64);
        for _ in 0..n6 {
            p3(&mut x, &mut y, &mut z, t, T1, T2);
        }
        check += black_box(z);
        // N7: array references.
        let (j, k, l) = (0usize, 1usize, 2usize);
        e1[0] = 1.0;
        e1[1] = 2.0;
        e1[2] = 3.0;
        for _ in 0..n7 {
            po(e1, black_box(j), k, l);
        }
        check += e1[2];
        // N8: standard functions.
        let mut x = 0.75f64;
        for _ in 0..n8 {
            x = ((x.ln() / T1).exp()).sqrt();
        }
        check += black_box(x);
        self.check = check;
        self.t = 1.0 - t;
    }
}

#[inline(never)]
fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

#[inline(never)]
fn po(e1: &mut [f64; 4], j: usize, k: usize, l: usize) {
    e1[j] = e1[k];
    e1[k] = e1[l];
    e1[l] = e1[j];
}

#[inline(never)]
fn p3(x: &mut f64, y: &mut f64, z: &mut f64, t: f64, t1: f64, t2: f64) {
    *x = *y;
    *y = *z;
    *x = t * (*x + *y);
    *y = t1 * (*x + *y);
    *z = (*x + *y) / t2;
}

impl Routine for Whetstone {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            self.pass();
        }
        black_box(self.check);
        Ok(())
    }
}

fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    native::routine(
        params,
        ctx,
        "whetstone",
        || Box::new(Whetstone::new()),
        native::whetstone,
    )
}

fn expectations(params: &Params) -> Vec<Expectation> {
    vec![
        native::syscalls_expectation(
            params,
            "Whetstone runs in user space only: no system call in a pass",
        ),
        Expectation::new(
            Metric::Faults,
            Bound::Below(0.5),
            "a pass works on a few registers and a four-element array; a pass lasts \
             milliseconds, so the worker's own bookkeeping between samples shows as a few \
             hundredths of a fault per pass (measured 0.04), and a fault in most passes means \
             the pass itself touched new memory",
        ),
    ]
}

pub static WHETSTONE: ExperimentInfo = ExperimentInfo::new(
    "unixbench.whetstone",
    "UnixBench's Double-Precision Whetstone: one pass (10 million Whetstone \
     instructions) of Curnow and Wichmann's Whetstone as in Longbottom's whets.c, in C \
     at UnixBench's -O3 -ffast-math, or oslab's Rust port",
    "pass",
    "user space only (libm's sin, cos, atan, exp, log, sqrt)",
    setup,
)
.params(&[
    native::LANGUAGE_PARAM,
    native::RUNNER_PARAM,
    PLACEMENT_FREE_SAME,
])
.syscalls(native::claims)
.user_space()
.outside_default_suite()
.expectations(expectations)
.cells(crate::experiment::unixbench::UNIXBENCH_FAMILY_CELLS);

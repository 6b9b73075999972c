//! unixbench.dhrystone: Dhrystone 2.1, ported to Rust from the published algorithm
//! (Reinhold P. Weicker, "Dhrystone: a synthetic systems programming benchmark", CACM 27(10),
//! 1984; version 2.1 of 1988 as distributed in netlib's `dhry-c` and used by UnixBench's
//! `dhry_1.c`/`dhry_2.c` as "Dhrystone 2 using register variables"). One operation is one
//! run of the main loop (`Run_Index`), what UnixBench counts in lps.
//!
//! The records Weicker allocates with malloc are two slots of an array here, the pointer
//! between them an index; the strings are 31-byte arrays copied and compared whole, as
//! strcpy and strcmp do. UnixBench compiles `dhry_1.c` and `dhry_2.c` separately, so its
//! procedures are real calls; `#[inline(never)]` keeps them calls here, and `black_box` keeps
//! the compiler from folding the loop into constants. A Rust port is not C compiled with
//! UnixBench's flags (`-O3 -ffast-math` and the machine's gcc): the score is comparable in
//! kind to UnixBench's, not to the digit.

use crate::experiment::RoutineError;
use std::hint::black_box;

use super::*;
use crate::experiment::unixbench::native;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ident {
    One,
    Two,
    Three,
    Four,
    // Weicker's enumeration has five values; the benchmark never produces the fifth.
    #[allow(dead_code)]
    Five,
}

type Str30 = [u8; 31];

const fn str30(text: &[u8; 30]) -> Str30 {
    let mut s = [0u8; 31];
    let mut i = 0;
    while i < 30 {
        s[i] = text[i];
        i += 1;
    }
    s
}

const SOME_STRING: Str30 = str30(b"DHRYSTONE PROGRAM, SOME STRING");
const FIRST_STRING: Str30 = str30(b"DHRYSTONE PROGRAM, 1'ST STRING");
const SECOND_STRING: Str30 = str30(b"DHRYSTONE PROGRAM, 2'ND STRING");
const THIRD_STRING: Str30 = str30(b"DHRYSTONE PROGRAM, 3'RD STRING");

#[derive(Clone, Copy, Debug)]
struct Record {
    /// Index of the record `Ptr_Comp` points to.
    ptr_comp: usize,
    discr: Ident,
    enum_comp: Ident,
    int_comp: i64,
    // Copied with the record (Weicker's structassign), never read back.
    #[allow(dead_code)]
    str_comp: Str30,
}

/// Dhrystone's globals.
pub(super) struct Dhrystone {
    /// `Ptr_Glob` is record 0, `Next_Ptr_Glob` record 1.
    records: [Record; 2],
    int_glob: i64,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i64; 50],
    arr_2_glob: Box<[[i64; 50]; 50]>,
    run_index: i64,
}

const PTR_GLOB: usize = 0;

impl Dhrystone {
    pub(super) fn new() -> Dhrystone {
        let next = Record {
            ptr_comp: 1,
            discr: Ident::One,
            enum_comp: Ident::One,
            int_comp: 0,
            str_comp: [0; 31],
        };
        let glob = Record {
            ptr_comp: 1,
            discr: Ident::One,
            enum_comp: Ident::Three,
            int_comp: 40,
            str_comp: SOME_STRING,
        };
        let mut arr_2_glob = Box::new([[0i64; 50]; 50]);
        arr_2_glob[8][7] = 10;
        Dhrystone {
            records: [glob, next],
            int_glob: 0,
            bool_glob: false,
            ch_1_glob: 0,
            ch_2_glob: 0,
            arr_1_glob: [0; 50],
            arr_2_glob,
            run_index: 0,
        }
    }

    /// One run of Dhrystone's main loop.
    #[inline(never)]
    pub(super) fn run_once(&mut self) {
        self.run_index += 1;
        let str_1_loc: Str30 = black_box(FIRST_STRING);
        let mut str_2_loc: Str30;
        self.proc_5();
        self.proc_4();
        let mut int_1_loc: i64 = 2;
        let mut int_2_loc: i64 = 3;
        str_2_loc = black_box(SECOND_STRING);
        let mut enum_loc = Ident::Two;
        self.bool_glob = !self.func_2(&str_1_loc, &str_2_loc);
        let mut int_3_loc: i64 = 0;
        while int_1_loc < int_2_loc {
            // Weicker computes this, then Proc_7 overwrites it.
            black_box(5 * int_1_loc - int_2_loc);
            int_3_loc = proc_7(int_1_loc, int_2_loc);
            int_1_loc += 1;
        }
        self.proc_8(int_1_loc, int_3_loc);
        self.proc_1(PTR_GLOB);
        let mut ch_index = b'A';
        while ch_index <= self.ch_2_glob {
            if enum_loc == self.func_1(ch_index, b'C') {
                enum_loc = self.proc_6(Ident::One);
                str_2_loc = black_box(THIRD_STRING);
                int_2_loc = self.run_index;
                self.int_glob = self.run_index;
            }
            ch_index += 1;
        }
        int_2_loc *= int_1_loc;
        int_1_loc = int_2_loc / black_box(int_3_loc);
        int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
        self.proc_2(&mut int_1_loc);
        black_box((int_1_loc, int_2_loc, &str_2_loc, enum_loc));
    }

    #[inline(never)]
    fn proc_1(&mut self, ptr_val_par: usize) {
        let next_record = self.records[ptr_val_par].ptr_comp;
        self.records[next_record] = self.records[PTR_GLOB];
        self.records[ptr_val_par].int_comp = 5;
        self.records[next_record].int_comp = self.records[ptr_val_par].int_comp;
        self.records[next_record].ptr_comp = self.records[ptr_val_par].ptr_comp;
        self.records[next_record].ptr_comp = self.proc_3(self.records[next_record].ptr_comp);
        if self.records[next_record].discr == Ident::One {
            self.records[next_record].int_comp = 6;
            self.records[next_record].enum_comp = self.proc_6(self.records[ptr_val_par].enum_comp);
            self.records[next_record].ptr_comp = self.records[PTR_GLOB].ptr_comp;
            self.records[next_record].int_comp = proc_7(self.records[next_record].int_comp, 10);
        } else {
            self.records[ptr_val_par] = self.records[self.records[ptr_val_par].ptr_comp];
        }
    }

    #[inline(never)]
    fn proc_2(&mut self, int_par_ref: &mut i64) {
        let mut int_loc = *int_par_ref + 10;
        let mut enum_loc = Ident::Two;
        loop {
            if self.ch_1_glob == b'A' {
                int_loc -= 1;
                *int_par_ref = int_loc - self.int_glob;
                enum_loc = Ident::One;
            }
            if enum_loc == Ident::One {
                break;
            }
        }
    }

    /// Returns the new value of the pointer passed by reference.
    #[inline(never)]
    fn proc_3(&mut self, ptr_ref_par: usize) -> usize {
        let result = black_box(self.records[PTR_GLOB].ptr_comp);
        self.records[PTR_GLOB].int_comp = proc_7(10, self.int_glob);
        let _ = ptr_ref_par;
        result
    }

    #[inline(never)]
    fn proc_4(&mut self) {
        let bool_loc = self.ch_1_glob == b'A';
        self.bool_glob |= bool_loc;
        self.ch_2_glob = b'B';
    }

    #[inline(never)]
    fn proc_5(&mut self) {
        self.ch_1_glob = b'A';
        self.bool_glob = false;
    }

    /// Returns what Weicker's version stores through `Enum_Ref_Par`.
    #[inline(never)]
    fn proc_6(&self, enum_val_par: Ident) -> Ident {
        let mut enum_ref_par = enum_val_par;
        if !func_3(enum_val_par) {
            enum_ref_par = Ident::Four;
        }
        match enum_val_par {
            Ident::One => Ident::One,
            Ident::Two => {
                if self.int_glob > 100 {
                    Ident::One
                } else {
                    Ident::Four
                }
            }
            Ident::Three => Ident::Two,
            Ident::Four => enum_ref_par,
            Ident::Five => Ident::Three,
        }
    }

    #[inline(never)]
    fn proc_8(&mut self, int_1_par_val: i64, int_2_par_val: i64) {
        let int_loc = (int_1_par_val + 5) as usize;
        self.arr_1_glob[int_loc] = int_2_par_val;
        self.arr_1_glob[int_loc + 1] = self.arr_1_glob[int_loc];
        self.arr_1_glob[int_loc + 30] = int_loc as i64;
        for int_index in int_loc..=int_loc + 1 {
            self.arr_2_glob[int_loc][int_index] = int_loc as i64;
        }
        self.arr_2_glob[int_loc][int_loc - 1] += 1;
        self.arr_2_glob[int_loc + 20][int_loc] = self.arr_1_glob[int_loc];
        self.int_glob = 5;
    }

    #[inline(never)]
    fn func_1(&mut self, ch_1_par_val: u8, ch_2_par_val: u8) -> Ident {
        let ch_1_loc = ch_1_par_val;
        let ch_2_loc = ch_1_loc;
        if ch_2_loc != ch_2_par_val {
            Ident::One
        } else {
            self.ch_1_glob = ch_1_loc;
            Ident::Two
        }
    }

    #[inline(never)]
    fn func_2(&mut self, str_1_par_ref: &Str30, str_2_par_ref: &Str30) -> bool {
        let mut int_loc = 2usize;
        let mut ch_loc = b'A';
        while int_loc <= 2 {
            if self.func_1(str_1_par_ref[int_loc], str_2_par_ref[int_loc + 1]) == Ident::One {
                ch_loc = b'A';
                int_loc += 1;
            }
        }
        if (b'W'..b'Z').contains(&ch_loc) {
            int_loc = 7;
        }
        if ch_loc == b'R' {
            true
        } else if black_box(str_1_par_ref)[..] > black_box(str_2_par_ref)[..] {
            int_loc += 7;
            self.int_glob = int_loc as i64;
            true
        } else {
            false
        }
    }

    /// The globals Weicker's program prints at the end, with the values it says they should
    /// have (for tests).
    #[cfg(all(test, unix))]
    pub(super) fn globals(&self) -> (i64, bool, u8, u8, i64, i64, [i64; 2]) {
        (
            self.int_glob,
            self.bool_glob,
            self.ch_1_glob,
            self.ch_2_glob,
            self.arr_1_glob[8],
            self.arr_2_glob[8][7],
            [self.records[0].int_comp, self.records[1].int_comp],
        )
    }
}

#[inline(never)]
fn proc_7(int_1_par_val: i64, int_2_par_val: i64) -> i64 {
    let int_loc = int_1_par_val + 2;
    int_2_par_val + int_loc
}

#[inline(never)]
fn func_3(enum_par_val: Ident) -> bool {
    enum_par_val == Ident::Three
}

impl Routine for Dhrystone {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            self.run_once();
        }
        black_box(&self.records);
        Ok(())
    }
}

fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    native::routine(
        params,
        ctx,
        "dhrystone",
        || Box::new(Dhrystone::new()),
        native::dhrystone,
    )
}

fn expectations(params: &Params) -> Vec<Expectation> {
    vec![
        native::syscalls_expectation(
            params,
            "Dhrystone runs in user space only: no system call in the loop",
        ),
        no_faults("the loop touches the same few hundred bytes of memory every time"),
    ]
}

pub static DHRYSTONE: ExperimentInfo = ExperimentInfo::new(
    "unixbench.dhrystone",
    "UnixBench's Dhrystone 2: one loop of Weicker's Dhrystone 2.1 (integer, string \
     and record work in user space), in C at UnixBench's -O3 -ffast-math, or oslab's \
     Rust port",
    "loop",
    "user space only (no system call)",
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

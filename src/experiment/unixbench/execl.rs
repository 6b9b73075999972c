//! unixbench.execl: UnixBench's "Execl Throughput" (`execl.c`): a program that execs itself,
//! counting the execs, until its time is up; one exec is one loop.
//!
//! `variant=dynamic` (the default, UnixBench's figure): the program is `c/execl.c`, linked
//! by build.rs as a dynamic executable against the build machine's C library, as UnixBench's
//! is, and embedded in oslab; each of its images runs the dynamic loader, maps libc, runs
//! libc's start-up and does what UnixBench's image does (atoi, sscanf, sprintf, time, execl
//! with UnixBench's five arguments), counting down where UnixBench watches the clock.
//!
//! `variant=static` (oslab's own figure: the kernel's exec alone, several times cheaper): a
//! static ELF of 72 bytes of machine code that decrements the 20-digit decimal counter in
//! its `argv[1]` in place and `execve`s `argv[0]` with the same arguments and an empty
//! environment, or exits with status 0 when the counter reads zero. x86-64 only (the code is
//! written out by hand); elsewhere that variant is unsupported.
//!
//! Either is written to a private directory (the way `process.fork_exec` writes its exit(0)
//! helper). A batch of N loops is one fork of the worker whose child execs the program with
//! a count of N-1, so N execs in all; the fork and the wait are paid once per batch.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup);
#[cfg(all(test, unix))]
pub(super) use routines::counter;

/// `variant=dynamic|static`: UnixBench's dynamically linked program, or the kernel's exec
/// alone.
const VARIANT_PARAM: ParamSpec = ParamSpec {
    name: "variant",
    kind: ParamKind::Choice(&["dynamic", "static"]),
    default: "dynamic",
    help: "dynamic: a C program linked against the system's C library, as UnixBench's execl \
           (the dynamic loader and libc's start-up in every exec); static: a 248-byte static \
           program, the kernel's exec alone (x86-64)",
};

fn expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Children("minflt"),
            Bound::AtLeast(1.0),
            "each exec builds a new address space, which faults at least once (its stack and \
             its code); none means the execs did not happen",
        ),
        no_major_faults(),
    ]
}

pub static EXECL: ExperimentInfo = ExperimentInfo::new(
    "unixbench.execl",
    "UnixBench's Execl Throughput: a dynamically linked C program execs itself, \
     counting down, as UnixBench's does (variant=static: a 248-byte static program, \
     the kernel's exec alone); one execve per loop",
    "loop",
    "execve of the program, chained; one fork and waitpid per batch",
    setup,
)
.params(&[VARIANT_PARAM, PLACEMENT_FREE_SAME])
// Each image of the dynamic program also runs the loader and libc's start-up (its time()
// is the vDSO's: no system call).
.syscalls(|params| match params.get("variant") {
    Some("static") => crate::experiment::each(&["execve"]),
    _ => crate::experiment::process::with_dynamic_start_up(&["execve"]),
})
.outside_default_suite()
.expectations(expectations)
.cells(eq::Cells {
    linux: eq::noted(
        "execve chain of a dynamically linked C program",
        "variant=static: a static helper, x86-64 machine code with Linux's call numbers",
    ),
    freebsd: eq::Cell::No(
        "not enabled yet: build.rs links the dynamic program for Linux targets, and the \
             static helper is Linux x86-64 machine code",
    ),
    macos: eq::Cell::No(
        "not enabled yet: build.rs links the dynamic program for Linux targets, and macOS \
             runs no static ELF programs",
    ),
    windows: eq::NOT_WINDOWS_UNIXBENCH,
});

/// The routine, POSIX's: a fork, then a chain of execs of a program that execs itself.
#[cfg(unix)]
mod routines {
    use super::super::program::Program;
    use super::*;
    use crate::experiment::RoutineError;
    use crate::experiment::process::elf;
    use std::ffi::CString;

    /// How many decimal digits the counter in `argv[1]` has.
    const DIGITS: usize = 20;

    /// x86-64 machine code, entered with the stack as the kernel sets it up (argc, argv…,
    /// NULL, envp…):
    ///
    /// ```text
    ///  0  48 8b 74 24 10   mov  rsi, [rsp+16]        ; argv[1]
    ///  5  48 8d 7e 13      lea  rdi, [rsi+19]        ; its last digit
    ///  9  48 39 f7         cmp  rdi, rsi             ; loop: every digit was 0?
    /// 12  72 31            jb   63                   ;   then exit(0)
    /// 14  80 3f 30         cmp  byte [rdi], '0'
    /// 17  75 08            jne  27
    /// 19  c6 07 39         mov  byte [rdi], '9'      ; borrow
    /// 22  48 ff cf         dec  rdi
    /// 25  eb ee            jmp  9
    /// 27  fe 0f            dec  byte [rdi]
    /// 29  48 8b 7c 24 08   mov  rdi, [rsp+8]         ; execve(argv[0],
    /// 34  48 8d 74 24 08   lea  rsi, [rsp+8]         ;        argv,
    /// 39  48 8d 54 24 20   lea  rdx, [rsp+32]        ;        envp) (argc is 2)
    /// 44  b8 3b 00 00 00   mov  eax, 59
    /// 49  0f 05            syscall
    /// 51  bf 01 00 00 00   mov  edi, 1               ; execve failed: exit(1)
    /// 56  b8 e7 00 00 00   mov  eax, 231
    /// 61  0f 05            syscall
    /// 63  31 ff            xor  edi, edi             ; exit_group(0)
    /// 65  b8 e7 00 00 00   mov  eax, 231
    /// 70  0f 05            syscall
    /// ```
    const X86_64_COUNTDOWN: &[u8] = &[
        0x48, 0x8b, 0x74, 0x24, 0x10, 0x48, 0x8d, 0x7e, 0x13, 0x48, 0x39, 0xf7, 0x72, 0x31, 0x80,
        0x3f, 0x30, 0x75, 0x08, 0xc6, 0x07, 0x39, 0x48, 0xff, 0xcf, 0xeb, 0xee, 0xfe, 0x0f, 0x48,
        0x8b, 0x7c, 0x24, 0x08, 0x48, 0x8d, 0x74, 0x24, 0x08, 0x48, 0x8d, 0x54, 0x24, 0x20, 0xb8,
        0x3b, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xbf, 0x01, 0x00, 0x00, 0x00, 0xb8, 0xe7, 0x00, 0x00,
        0x00, 0x0f, 0x05, 0x31, 0xff, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05,
    ];

    /// The counter `argv[1]` starts at for `execs` execs in all (the first is the worker's
    /// child's, each following one decrements the counter by one; zero exits).
    pub(crate) fn counter(execs: u64) -> String {
        format!("{:0width$}", execs.saturating_sub(1), width = DIGITS)
    }

    pub(super) fn countdown_image() -> Option<Vec<u8>> {
        cfg!(target_arch = "x86_64").then(|| elf::exit0_image(elf::EM_X86_64, X86_64_COUNTDOWN))
    }

    /// The dynamic program build.rs linked from `c/execl.c`.
    #[cfg(oslab_execl_helper)]
    fn dynamic_image() -> Result<Vec<u8>, SetupError> {
        Ok(include_bytes!(concat!(env!("OUT_DIR"), "/oslab-execl")).to_vec())
    }

    #[cfg(not(oslab_execl_helper))]
    fn dynamic_image() -> Result<Vec<u8>, SetupError> {
        Err(SetupError::Unsupported(
            "the dynamic execl program was not linked when oslab was built (see the build's \
             warnings; it is built for Linux targets); variant=static runs the kernel's exec alone"
                .into(),
        ))
    }

    struct Execl {
        program: Program,
        /// UnixBench's arguments after the count (duration, images so far, start time) for the
        /// dynamic program; none for the static one.
        rest: Vec<CString>,
    }

    /// Fork; the child execs the countdown for `execs` execs, with `rest` after the count;
    /// wait for the last image to exit.
    fn chain(program: &Program, rest: &[CString], execs: u64) -> Result<(), RoutineError> {
        let count = CString::new(counter(execs)).expect("digits have no NUL");
        let mut args = vec![&count];
        args.extend(rest);
        program.run(&args)
    }

    impl Routine for Execl {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            if ops == 0 {
                return Ok(());
            }
            chain(&self.program, &self.rest, ops)
        }
    }

    /// UnixBench's arguments after the count: its duration ("30"), the images run so far, and
    /// the start time in seconds.
    fn unixbench_arguments() -> Vec<CString> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        ["30".to_string(), "0".to_string(), now.to_string()]
            .into_iter()
            .map(|a| CString::new(a).expect("digits have no NUL"))
            .collect()
    }

    pub(super) fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        place(params, ctx)?;
        let dynamic = params.get("variant") != Some("static");
        let image = if dynamic {
            dynamic_image()?
        } else {
            countdown_image().ok_or_else(|| {
                SetupError::Unsupported(format!(
                    "the self-exec'ing countdown is x86-64 machine code; this is {} \
                     (variant=dynamic runs everywhere oslab was built with a C compiler)",
                    std::env::consts::ARCH
                ))
            })?
        };
        let rest = if dynamic {
            unixbench_arguments()
        } else {
            Vec::new()
        };
        // The dynamic program gets the worker's environment (the loader reads it, as UnixBench's
        // execl passes it on); the static one an empty one.
        let program = Program::install(ctx, &image, dynamic, "execl countdown", |program| {
            chain(program, &rest, 3)
        })?;
        Ok(Box::new(Execl { program, rest }))
    }
}

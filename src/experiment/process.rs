//! What creating a task costs: a process with `fork`, `vfork` and `posix_spawn`, a new
//! program with `fork` + `execve`, a thread with `pthread_create`. Every operation ends with
//! the parent reaping what it created (`waitpid`, `pthread_join`), so one operation is one
//! whole life cycle and nothing accumulates between samples: no zombie, no thread left.
//!
//! This is lmbench's `lat_proc` (McVoy & Staelin, USENIX 1996: `fork` with the child calling
//! `exit`, `fork` + `execve` of a tiny `hello` program, optionally linked statically) and the
//! loop of the kernel's own `tools/testing/selftests/powerpc/benchmarks/fork.c`
//! (`fork`, child `_exit(0)`, parent `waitpid`).
//!
//! Placement: the worker is pinned to one CPU and a child inherits the affinity mask
//! (sched_setaffinity(2): "A child created via fork(2) inherits its parent's CPU affinity
//! mask"), so parent and child share that CPU. The figures therefore include the switches
//! from parent to child and back, and no cross-CPU wake-up (which costs ~30 µs on a VM whose
//! idle vCPU halts: FINDINGS).
//!
//! What each result counts, besides the time:
//! - `tasks` (the `sched:sched_process_fork` tracepoint, counted in untimed batches after the
//!   samples): exactly one new task per operation, whatever the path (fork, vfork, the
//!   clone3 of posix_spawn or of a thread). The tracepoint fires in the parent's context in
//!   `kernel_clone()`, so the worker's own counter sees it.
//! - The worker's getrusage: the parent's side (after a fork, its next write to each shared
//!   page is a copy-on-write fault of its own).
//! - RUSAGE_CHILDREN: the reaped children's faults and CPU time, reported separately
//!   (`children_rusage`), because the faults of a fork are mostly the child's.
//! - `syscalls`: the worker's own kernel entries — 2 per fork, vfork or fork+exec (clone or
//!   vfork, wait4), 6 per posix_spawn (glibc maps and unmaps the child's stack and blocks
//!   signals around clone3), 4 per thread (clone3 between two rt_sigprocmask, a futex wait
//!   in join) — plus the probe's own reads, 3 per untimed batch, which matter here because a
//!   batch holds only a few operations. No expectation is declared on it for that reason.
//!
//! The children's CPU time (`utime_us + stime_us` of `children_rusage`) is their run time,
//! but its split between user and system is meaningless: a child that lives less than a
//! tick has no tick samples, and `cputime_adjust()` (kernel/sched/cputime.c) then reports
//! all of its run time as user time — 100 µs of "user" time per child that executed three
//! instructions in user space.
//!
//! Voluntary switches of the parent, measured pinned to one CPU (Linux 6.18, EEVDF, 2 vCPUs):
//! - fork, fork+exec, thread: 0.99–1.00 per operation. `fork` returns to the parent first
//!   (the new task is only made runnable; the `kernel.sched_child_runs_first` sysctl, which
//!   defaulted to 0, no longer exists on this kernel), so the parent reaches `wait4` or
//!   `pthread_join` before the child has run and sleeps there once.
//! - vfork, posix_spawn: 1.98–1.99. The parent first sleeps until the CLONE_VFORK child
//!   exits or execs; woken while the child is still exiting (or running the new program),
//!   it runs, finds no zombie in `wait4` and sleeps a second time.
//!
//! Those counts follow from where the parent can sleep, so they are an upper bound
//! (expectation: below 1.05 or 2.05). Fewer is legitimate (a child placed on another CPU
//! may be done before the parent waits); more means the parent slept for something else.

#[cfg(unix)]
use std::ffi::{CString, c_char, c_void};
#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::path::{Path, PathBuf};

#[cfg(unix)]
use super::{Context, RoutineError, SetupError};
use super::{ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::equivalence as eq;

mod fork;
pub use fork::*;
/// The program a child executes, POSIX's.
#[cfg(unix)]
mod program;
#[cfg(unix)]
pub use program::*;
mod exec;
pub use exec::*;
mod thread;
pub use thread::*;

// --- expectations ---

/// Exactly one task per operation: the tracepoint counts creations, not system calls, so
/// the counter's own reads add nothing and the figure is an exact ratio of two counts.
/// 0.05 leaves room only for a creation the worker did not make itself (none is expected).
fn one_task() -> Expectation {
    Expectation::new(
        Metric::Counter("tasks"),
        Bound::Near {
            value: 1.0,
            tolerance: 0.05,
        },
        "one operation creates exactly one task (sched_process_fork fires once per fork, \
         vfork or clone)",
    )
}

fn no_major_faults() -> Expectation {
    Expectation::new(
        Metric::Rusage("majflt"),
        Bound::Below(0.01),
        "the worker's memory is resident and creating a task reads nothing from disk, so a \
         major fault in the parent means its memory was swapped or evicted meanwhile",
    )
}

/// A child with an address space of its own faults at least once: a forked child's first
/// write to its stack is a copy-on-write fault, an exec'd child faults in its new stack
/// and its first instruction.
fn children_fault() -> Expectation {
    Expectation::new(
        Metric::Children("minflt"),
        Bound::AtLeast(1.0),
        "each child has an address space of its own and faults at least once in it (a \
         copy-on-write of its stack after fork, its new stack and text after exec); none \
         means the children's faults were not reported",
    )
}

/// The parent sleeps once per wait for a child: in `wait4` until the child is a zombie, or
/// in `pthread_join` until the thread has exited. Pinned with its child to one CPU it sleeps
/// about once per operation (measured 0.99–1.00). It cannot sleep more often without
/// sleeping for something else (reclaim, I/O, a lock), which the time would include; fewer
/// sleeps (a child done before the parent waits) are fine. 0.05 leaves room for a rare
/// wait on a lock (kdamond or khugepaged walking this mm).
fn sleeps_once() -> Expectation {
    Expectation::new(
        Metric::Rusage("nvcsw"),
        Bound::Below(1.05),
        "the parent sleeps at most once per operation, waiting for its child; more \
         voluntary switches mean it also slept for something else (reclaim, I/O, a lock)",
    )
}

/// A thread's voluntary switches are the process's: the parent's one sleep in
/// `pthread_join`, plus, where the kernel counts an exiting thread's last switch as voluntary
/// and adds it to the process (FreeBSD: `platform::rusage::THREAD_EXIT_COUNTS_VOLUNTARY`),
/// the child's exit.
fn thread_sleeps() -> Expectation {
    if !crate::platform::rusage::THREAD_EXIT_COUNTS_VOLUNTARY {
        return sleeps_once();
    }
    Expectation::new(
        Metric::Rusage("nvcsw"),
        Bound::Below(2.05),
        "the parent sleeps at most once per operation, in pthread_join, and this kernel adds \
         the exiting thread's last switch, counted voluntary, to the process's (FreeBSD's \
         thread_exit): two per operation; more mean something else slept (reclaim, I/O, a \
         lock)",
    )
}

/// With CLONE_VFORK the parent also sleeps until the child exits or execs, then possibly
/// again in `wait4` if it ran before the child had become a zombie (measured 1.98–1.99).
fn sleeps_twice() -> Expectation {
    Expectation::new(
        Metric::Rusage("nvcsw"),
        Bound::Below(2.05),
        "the parent sleeps at most twice per operation: until the vfork child releases the \
         memory (exit or exec), then in waitpid; more voluntary switches mean it also slept \
         for something else (reclaim, I/O, a lock)",
    )
}

fn fork_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        one_task(),
        children_fault(),
        no_major_faults(),
        sleeps_once(),
    ]
}

fn spawn_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        one_task(),
        children_fault(),
        no_major_faults(),
        sleeps_twice(),
    ]
}

fn vfork_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        one_task(),
        Expectation::new(
            Metric::Children("minflt"),
            Bound::Below(0.5),
            "a vfork child borrows the parent's address space and touches only the registers \
             before exit_group, so it cannot fault; faults mean it copied memory like fork",
        ),
        no_major_faults(),
        sleeps_twice(),
    ]
}

fn thread_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        one_task(),
        Expectation::new(
            Metric::Children("minflt"),
            Bound::Below(0.5),
            "a thread is joined, not reaped as a child process: no child rusage may appear",
        ),
        no_major_faults(),
        thread_sleeps(),
    ]
}

// --- shared pieces ---

#[cfg(unix)]
/// `what` failed with `errno` (a call that returns its error rather than setting errno).
fn os_error(what: &str, errno: i32) -> RoutineError {
    RoutineError::Os {
        call: what.to_string(),
        source: io::Error::from_raw_os_error(errno),
    }
}

#[cfg(unix)]
/// Reap `pid` and check it exited with status 0: a child that failed (127 after a failed
/// execve, a signal) makes the operation an error, not a measurement.
pub(crate) fn reap(pid: libc::pid_t, what: &str) -> Result<(), RoutineError> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; `pid` is our own unreaped child.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if ret < 0 && err.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return Err(RoutineError::Os {
            call: format!("waitpid after {what}"),
            source: err,
        });
    }
    exit_status(status, what)
}

#[cfg(unix)]
fn exit_status(status: libc::c_int, what: &str) -> Result<(), RoutineError> {
    let why = if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            0 => return Ok(()),
            127 => format!("the {what} child exited with status 127: its execve failed"),
            code => format!("the {what} child exited with status {code}"),
        }
    } else if libc::WIFSIGNALED(status) {
        format!(
            "the {what} child was killed by {}",
            crate::platform::interrupt::signal_name(libc::WTERMSIG(status))
        )
    } else {
        format!("the {what} child ended with wait status {status:#x}")
    };
    Err(RoutineError::Check(why))
}

/// The smallest static executables that exit with status 0, and a reader of just enough of
/// ELF (the System V gABI, `elf(5)`) to check them and to tell a dynamically linked program.
#[cfg(unix)]
pub(crate) mod elf {
    const EHDR_SIZE: usize = 64;
    const PHDR_SIZE: usize = 56;
    const ET_EXEC: u16 = 2;
    pub const EM_X86_64: u16 = 62;
    pub const EM_AARCH64: u16 = 183;
    pub const PT_LOAD: u32 = 1;
    pub const PT_INTERP: u32 = 3;
    pub const PT_GNU_STACK: u32 = 0x6474_e551;
    const PF_X: u32 = 1;
    const PF_W: u32 = 2;
    const PF_R: u32 = 4;
    /// Where the file is mapped: the classic non-PIE base, far above `vm.mmap_min_addr`.
    pub const BASE: u64 = 0x40_0000;
    /// Segment alignment: 64 KiB, so the image also loads on arm64 kernels with 64 KiB pages.
    const ALIGN: u64 = 0x1_0000;

    /// The helper for the system and architecture this binary runs on, if there is one.
    pub fn exit0_image_for_this_arch() -> Option<Vec<u8>> {
        let program = crate::platform::raw::EXIT0?;
        let machine = if cfg!(target_arch = "x86_64") {
            EM_X86_64
        } else if cfg!(target_arch = "aarch64") {
            EM_AARCH64
        } else {
            return None;
        };
        Some(image(machine, program.osabi, program.code))
    }

    /// [`image`] for Linux (ELFOSABI_SYSV).
    pub fn exit0_image(machine: u16, code: &[u8]) -> Vec<u8> {
        image(machine, 0, code)
    }

    /// An ELF64 little-endian ET_EXEC with two program headers — one read+execute PT_LOAD
    /// covering the whole file, and a PT_GNU_STACK asking for a non-executable stack as
    /// every toolchain-built program does (without it, some kernels give the process
    /// READ_IMPLIES_EXEC) — followed by `code`, the entry point. No interpreter, no
    /// sections: the kernel maps one page and jumps to the code. `osabi` is the
    /// `EI_OSABI` byte (0 for System V, 9 for FreeBSD).
    pub fn image(machine: u16, osabi: u8, code: &[u8]) -> Vec<u8> {
        let code_offset = EHDR_SIZE + 2 * PHDR_SIZE;
        let size = (code_offset + code.len()) as u64;
        let mut b = Vec::with_capacity(size as usize);
        // e_ident: magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, EI_OSABI, padding.
        b.extend_from_slice(&[
            0x7f, b'E', b'L', b'F', 2, 1, 1, osabi, 0, 0, 0, 0, 0, 0, 0, 0,
        ]);
        b.extend_from_slice(&ET_EXEC.to_le_bytes()); // e_type
        b.extend_from_slice(&machine.to_le_bytes()); // e_machine
        b.extend_from_slice(&1u32.to_le_bytes()); // e_version
        b.extend_from_slice(&(BASE + code_offset as u64).to_le_bytes()); // e_entry
        b.extend_from_slice(&(EHDR_SIZE as u64).to_le_bytes()); // e_phoff
        b.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
        b.extend_from_slice(&0u32.to_le_bytes()); // e_flags
        b.extend_from_slice(&(EHDR_SIZE as u16).to_le_bytes()); // e_ehsize
        b.extend_from_slice(&(PHDR_SIZE as u16).to_le_bytes()); // e_phentsize
        b.extend_from_slice(&2u16.to_le_bytes()); // e_phnum
        b.extend_from_slice(&64u16.to_le_bytes()); // e_shentsize
        b.extend_from_slice(&0u16.to_le_bytes()); // e_shnum
        b.extend_from_slice(&0u16.to_le_bytes()); // e_shstrndx
        debug_assert_eq!(b.len(), EHDR_SIZE);
        // PT_LOAD: file offset 0 to the end, mapped at BASE, read + execute.
        b.extend_from_slice(&PT_LOAD.to_le_bytes());
        b.extend_from_slice(&(PF_R | PF_X).to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes()); // p_offset
        b.extend_from_slice(&BASE.to_le_bytes()); // p_vaddr
        b.extend_from_slice(&BASE.to_le_bytes()); // p_paddr
        b.extend_from_slice(&size.to_le_bytes()); // p_filesz
        b.extend_from_slice(&size.to_le_bytes()); // p_memsz
        b.extend_from_slice(&ALIGN.to_le_bytes()); // p_align
        // PT_GNU_STACK: read + write, no execute.
        b.extend_from_slice(&PT_GNU_STACK.to_le_bytes());
        b.extend_from_slice(&(PF_R | PF_W).to_le_bytes());
        b.extend_from_slice(&[0; 40]); // offset, vaddr, paddr, filesz, memsz
        b.extend_from_slice(&16u64.to_le_bytes()); // p_align
        debug_assert_eq!(b.len(), code_offset);
        b.extend_from_slice(code);
        b
    }

    /// One program header, as read back.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Segment {
        pub kind: u32,
        pub flags: u32,
        pub offset: u64,
        pub vaddr: u64,
        pub filesz: u64,
        pub memsz: u64,
    }

    /// Why a file is not an ELF image this module can read.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    pub enum ElfError {
        #[error("not an ELF file")]
        NotElf,
        #[error("not a 64-bit little-endian ELF file")]
        NotElf64Le,
        #[error("truncated ELF header")]
        ShortHeader,
        #[error("program header entries of {0} bytes")]
        SmallEntries(usize),
        #[error("program header offset overflows")]
        Overflow,
        #[error("program header {0} lies outside the file")]
        SegmentOutside(usize),
    }

    /// The parts of an ELF64 little-endian header this module needs.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Header {
        pub kind: u16,
        pub machine: u16,
        pub entry: u64,
        pub segments: Vec<Segment>,
    }

    pub fn parse(b: &[u8]) -> Result<Header, ElfError> {
        if b.len() < EHDR_SIZE || b[..4] != [0x7f, b'E', b'L', b'F'] {
            return Err(ElfError::NotElf);
        }
        if b[4] != 2 || b[5] != 1 {
            return Err(ElfError::NotElf64Le);
        }
        let u16_at = |o: usize| b.get(o..o + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
        let u32_at = |o: usize| {
            b.get(o..o + 4)
                .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
        };
        let u64_at = |o: usize| {
            b.get(o..o + 8)
                .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
        };
        let short = ElfError::ShortHeader;
        let phoff = u64_at(32).ok_or(short.clone())? as usize;
        let phentsize = u16_at(54).ok_or(short.clone())? as usize;
        let phnum = u16_at(56).ok_or(short.clone())? as usize;
        if phentsize < PHDR_SIZE {
            return Err(ElfError::SmallEntries(phentsize));
        }
        let mut segments = Vec::with_capacity(phnum);
        for i in 0..phnum {
            let at = phoff.checked_add(i * phentsize).ok_or(ElfError::Overflow)?;
            let truncated = ElfError::SegmentOutside(i);
            segments.push(Segment {
                kind: u32_at(at).ok_or(truncated.clone())?,
                flags: u32_at(at + 4).ok_or(truncated.clone())?,
                offset: u64_at(at + 8).ok_or(truncated.clone())?,
                vaddr: u64_at(at + 16).ok_or(truncated.clone())?,
                filesz: u64_at(at + 32).ok_or(truncated.clone())?,
                memsz: u64_at(at + 40).ok_or(truncated)?,
            });
        }
        Ok(Header {
            kind: u16_at(16).ok_or(short.clone())?,
            machine: u16_at(18).ok_or(short.clone())?,
            entry: u64_at(24).ok_or(short)?,
            segments,
        })
    }

    /// Whether the program names a program interpreter (PT_INTERP): dynamically linked.
    pub fn interpreter(b: &[u8]) -> Result<bool, ElfError> {
        Ok(parse(b)?.segments.iter().any(|s| s.kind == PT_INTERP))
    }
}

/// Where `process.fork`, `process.fork_exec`, `process.posix_spawn` run and how (the equivalence table's row).
pub(crate) const FORK_CELLS: eq::Cells = eq::Cells {
    linux: eq::runs("fork, fork+execve, posix_spawn"),
    freebsd: eq::runs("fork, fork+execve, posix_spawn"),
    macos: eq::runs("fork, fork+execve, posix_spawn"),
    windows: eq::Cell::No(
        "not available: Windows has no fork or posix_spawn; process.create_process is \
             CreateProcessW",
    ),
};

/// Where `process.thread` run and how (the equivalence table's row).
pub(crate) const THREAD_CELLS: eq::Cells = eq::Cells {
    linux: eq::runs("pthread_create + pthread_join"),
    freebsd: eq::runs("pthread_create + pthread_join"),
    macos: eq::runs("pthread_create + pthread_join"),
    windows: eq::runs("CreateThread + WaitForSingleObject"),
};

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[
    &FORK,
    &VFORK,
    &FORK_EXEC,
    &POSIX_SPAWN,
    // Windows builds its own (`winapi`: CreateThread).
    #[cfg(unix)]
    &THREAD,
];

#[cfg(all(test, unix))]
mod tests;

//! process.fork and process.vfork: a child that exits at once, reaped with waitpid.

use super::*;

// --- process.fork ---

/// `fork()` through glibc (a `clone` with CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD,
/// plus the atfork handlers), the child `_exit(0)`, the parent `waitpid`.
pub(super) struct Fork;

impl Routine for Fork {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            // SAFETY: fork has no memory-safety preconditions. The child of this process
            // may only call async-signal-safe functions (fork(2), signal-safety(7)); it
            // calls `_exit` and nothing else, so no destructor, allocator or lock runs in it.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: _exit is async-signal-safe and never returns.
                unsafe { libc::_exit(0) };
            }
            if pid < 0 {
                return Err(last_os_error("fork"));
            }
            reap(pid, "fork")?;
        }
        Ok(())
    }
}

pub(super) fn setup_fork(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(Box::new(Fork))
}

pub static FORK: ExperimentInfo = ExperimentInfo {
    name: "process.fork",
    os: crate::experiment::LINUX,
    summary: "fork(), the child _exit(0)s, the parent waitpid()s: a process created and reaped \
              (parent and child share the worker's CPU)",
    op: "fork+wait",
    path: "glibc fork() (clone) + _exit + waitpid (wait4)",
    params: &[],
    syscalls: &["clone", "exit_group", "wait4"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: fork_expectations,
    setup: setup_fork,
    preflight: None,
    batch: crate::experiment::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- process.vfork ---

/// `vfork()` whose child exits at once, written in assembly so that the child never runs
/// compiled Rust code on the stack it shares with its suspended parent. Rust has no
/// `returns_twice` attribute, so the compiler may keep a value in a stack slot that a
/// child returning from a plain `vfork()` call would overwrite: the libc crate deprecated
/// its `vfork` for causing memory corruption (rust-lang/libc#1596), and its maintainer's
/// advice is an assembly wrapper. Here the child executes two instructions and
/// `exit_group(0)`; it touches no memory at all.
///
/// Returns the child's pid, or `-errno`.
#[cfg(target_arch = "x86_64")]
pub(super) fn vfork_exit0() -> i64 {
    let ret: i64;
    // SAFETY: the vfork system call suspends this thread until the child exits. The child
    // shares our memory and stack; it runs only `test`, `jnz`, `xor`, `mov` and the
    // exit_group system call, all on registers, so it reads and writes no memory and never
    // returns here. The parent resumes after the first `syscall` with rax = pid or -errno;
    // `syscall` clobbers rcx and r11, and rdi is declared clobbered for the child's path.
    unsafe {
        core::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor edi, edi",
            "mov eax, {exit_group}",
            "syscall",
            "ud2",
            "2:",
            exit_group = const libc::SYS_exit_group,
            inlateout("rax") libc::SYS_vfork => ret,
            out("rdi") _,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// aarch64 has no vfork system call: glibc's `vfork` is `clone(CLONE_VM | CLONE_VFORK |
/// SIGCHLD)`, and so is this. The child (x0 = 0) exits with x0 still 0.
#[cfg(target_arch = "aarch64")]
pub(super) fn vfork_exit0() -> i64 {
    const FLAGS: i64 = (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as i64;
    let ret: i64;
    // SAFETY: as on x86_64: clone with CLONE_VM|CLONE_VFORK and a null stack (the child
    // keeps sp) suspends this thread until the child exits; the child runs `cbnz`, `mov`
    // and exit_group on registers only and never returns here.
    unsafe {
        core::arch::asm!(
            "svc #0",
            "cbnz x0, 2f",
            "mov x8, #{exit_group}",
            "svc #0",
            "udf #0",
            "2:",
            exit_group = const libc::SYS_exit_group,
            inlateout("x0") FLAGS => ret,
            in("x1") 0i64,
            in("x2") 0i64,
            in("x3") 0i64,
            in("x4") 0i64,
            inlateout("x8") libc::SYS_clone => _,
            options(nostack),
        );
    }
    ret
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) struct Vfork;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
impl Routine for Vfork {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            let pid = vfork_exit0();
            if pid < 0 {
                return Err(os_error("vfork", -pid as i32));
            }
            reap(pid as libc::pid_t, "vfork")?;
        }
        Ok(())
    }
}

pub(super) fn setup_vfork(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        Ok(Box::new(Vfork))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err(SetupError::Unsupported(format!(
            "process.vfork needs its assembly wrapper, written for x86_64 and aarch64 only (this \
             is {})",
            std::env::consts::ARCH
        )))
    }
}

#[cfg(target_arch = "aarch64")]
pub(super) const VFORK_SYSCALLS: &[&str] = &["clone", "exit_group", "wait4"];
#[cfg(not(target_arch = "aarch64"))]
pub(super) const VFORK_SYSCALLS: &[&str] = &["vfork", "exit_group", "wait4"];

pub static VFORK: ExperimentInfo = ExperimentInfo {
    name: "process.vfork",
    os: crate::experiment::LINUX,
    summary: "vfork(), the child exits at once, the parent waitpid()s: a process that borrows \
              the parent's memory instead of copying its page tables",
    op: "vfork+wait",
    path: "raw vfork syscall in an asm wrapper (aarch64: clone CLONE_VM|CLONE_VFORK) + \
           exit_group + waitpid (wait4)",
    params: &[],
    syscalls: VFORK_SYSCALLS,
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: false,
    expectations: vfork_expectations,
    setup: setup_vfork,
    preflight: None,
    batch: crate::experiment::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

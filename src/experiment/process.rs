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

use std::ffi::{CString, c_char, c_void};
use std::io;
use std::path::{Path, PathBuf};

use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::validate::{Bound, Expectation, Metric};

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
        sleeps_once(),
    ]
}

// --- shared pieces ---

fn os_error(what: &str, errno: i32) -> String {
    format!("{what} failed: {}", io::Error::from_raw_os_error(errno))
}

fn last_os_error(what: &str) -> String {
    format!("{what} failed: {}", io::Error::last_os_error())
}

/// Reap `pid` and check it exited with status 0: a child that failed (127 after a failed
/// execve, a signal) makes the operation an error, not a measurement.
fn reap(pid: libc::pid_t, what: &str) -> Result<(), String> {
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
        return Err(format!("waitpid after {what} failed: {err}"));
    }
    exit_status(status, what)
}

fn exit_status(status: libc::c_int, what: &str) -> Result<(), String> {
    if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            0 => Ok(()),
            127 => Err(format!(
                "the {what} child exited with status 127: its execve failed"
            )),
            code => Err(format!("the {what} child exited with status {code}")),
        }
    } else if libc::WIFSIGNALED(status) {
        Err(format!(
            "the {what} child was killed by signal {}",
            libc::WTERMSIG(status)
        ))
    } else {
        Err(format!(
            "the {what} child ended with wait status {status:#x}"
        ))
    }
}

// --- process.fork ---

/// `fork()` through glibc (a `clone` with CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD,
/// plus the atfork handlers), the child `_exit(0)`, the parent `waitpid`.
struct Fork;

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

fn setup_fork(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
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
    batch: super::Batch::Sized,
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
fn vfork_exit0() -> i64 {
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
fn vfork_exit0() -> i64 {
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
struct Vfork;

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

fn setup_vfork(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
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
const VFORK_SYSCALLS: &[&str] = &["clone", "exit_group", "wait4"];
#[cfg(not(target_arch = "aarch64"))]
const VFORK_SYSCALLS: &[&str] = &["vfork", "exit_group", "wait4"];

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
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- the program a child executes ---

const TARGET_PARAM: ParamSpec = ParamSpec {
    name: "target",
    kind: ParamKind::Choice(&["static", "dynamic"]),
    default: "static",
    help: "program the child executes: `static`, a static ELF of under 200 bytes that only calls \
           exit_group(0), written to a private temporary directory (the kernel's exec alone); \
           `dynamic`, /bin/true (adds the dynamic loader and libc start-up)",
};

/// Where `target=dynamic` execs: a small dynamically linked program every Unix has.
const DYNAMIC_TARGET: &str = "/bin/true";

/// A program to execute, with its argument and (empty) environment vectors built before any
/// child exists: between fork and execve the child may only call async-signal-safe
/// functions, so it must not allocate.
struct Program {
    path: CString,
    /// Owns the strings `argv` points into.
    _args: Vec<CString>,
    argv: Vec<*mut c_char>,
    /// An empty environment: the user's (LD_PRELOAD, LD_LIBRARY_PATH, its size) would change
    /// what the loader does and what execve copies.
    envp: Vec<*mut c_char>,
    /// The static helper, removed when the routine is dropped.
    _helper: Option<HelperFile>,
}

impl Program {
    fn new(path: &Path, arg0: &str, helper: Option<HelperFile>) -> Result<Program, SetupError> {
        let path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| SetupError::Failed(format!("{} contains a NUL byte", path.display())))?;
        let args = vec![CString::new(arg0).expect("no NUL in arg0")];
        let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        argv.push(std::ptr::null_mut());
        Ok(Program {
            path,
            _args: args,
            argv,
            envp: vec![std::ptr::null_mut()],
            _helper: helper,
        })
    }

    /// posix_spawn it and reap it: Ok when it exited with 0.
    fn spawn_and_reap(&self) -> Result<(), String> {
        let pid = self
            .spawn()
            .map_err(|errno| os_error("posix_spawn", errno))?;
        reap(pid, "posix_spawn")
    }

    /// posix_spawn it: the child's pid, or the errno of the spawn or of the child's execve.
    fn spawn(&self) -> Result<libc::pid_t, i32> {
        let mut pid: libc::pid_t = 0;
        // SAFETY: `path`, `argv` and `envp` are NUL-terminated strings and null-terminated
        // pointer arrays owned by `self`; null file actions and attributes are allowed.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.path.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        if rc != 0 { Err(rc) } else { Ok(pid) }
    }

    /// Run it once at setup, retrying while the file is busy: ETXTBSY means a descriptor
    /// open for writing still exists, which can only be a copy inherited by a child that
    /// another thread forked while the file was being written (never in a worker, which
    /// has one thread; possible in a multi-threaded test binary).
    fn check_runs(&self) -> Result<(), String> {
        for _ in 0..100 {
            match self.spawn() {
                Ok(pid) => return reap(pid, "posix_spawn"),
                Err(libc::ETXTBSY) => std::thread::sleep(std::time::Duration::from_millis(10)),
                Err(libc::EACCES) => {
                    return Err(format!(
                        "{} (mounted noexec?)",
                        os_error("posix_spawn", libc::EACCES)
                    ));
                }
                Err(errno) => return Err(os_error("posix_spawn", errno)),
            }
        }
        Err(os_error("posix_spawn", libc::ETXTBSY))
    }
}

/// The program `target` names, checked to run once here (exit status 0).
fn program(params: &Params, context: &Context) -> Result<Program, SetupError> {
    match params.str("target") {
        "dynamic" => dynamic_program(Path::new(DYNAMIC_TARGET)),
        _ => static_program(&helper_dirs(context)),
    }
}

fn dynamic_program(path: &Path) -> Result<Program, SetupError> {
    let bytes = std::fs::read(path).map_err(|e| {
        SetupError::Unsupported(format!(
            "target=dynamic execs {}, which cannot be read here: {e}",
            path.display()
        ))
    })?;
    match elf::interpreter(&bytes) {
        Ok(true) => {}
        Ok(false) => {
            return Err(SetupError::Unsupported(format!(
                "target=dynamic needs a dynamically linked {}, but it has no program \
                 interpreter (statically linked) here",
                path.display()
            )));
        }
        Err(why) => {
            return Err(SetupError::Unsupported(format!(
                "target=dynamic needs {} to be an ELF64 executable: {why}",
                path.display()
            )));
        }
    }
    let arg0 = path
        .file_name()
        .map_or("true".into(), |n| n.to_string_lossy());
    let program = Program::new(path, &arg0, None)?;
    program.check_runs().map_err(|e| {
        SetupError::Unsupported(format!("{} does not run here: {e}", path.display()))
    })?;
    Ok(program)
}

/// Write the static helper into the first directory where it can be executed.
fn static_program(dirs: &[PathBuf]) -> Result<Program, SetupError> {
    let Some(image) = elf::exit0_image_for_this_arch() else {
        return Err(SetupError::Unsupported(format!(
            "target=static writes machine code for x86_64 or aarch64; this is {} (use \
             target=dynamic)",
            std::env::consts::ARCH
        )));
    };
    let mut refused = Vec::new();
    for dir in dirs {
        let helper = match HelperFile::create(dir, &image) {
            Ok(h) => h,
            Err(e) => {
                refused.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        let program = Program::new(&helper.path.clone(), "exit0", Some(helper))?;
        match program.check_runs() {
            Ok(()) => return Ok(program),
            // Dropping `program` removes the helper.
            Err(e) => refused.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(SetupError::Unsupported(format!(
        "no directory where the static exec helper can be written and executed: {} (set TMPDIR \
         to an executable directory, or use target=dynamic)",
        refused.join("; ")
    )))
}

/// Candidate directories for the helper: the worker's scratch directory (the parent removes
/// it even when the worker is killed), the temporary directory (TMPDIR or /tmp), then the
/// per-user runtime directory, then the current directory — /tmp is mounted `noexec` on
/// some hardened systems.
fn helper_dirs(context: &Context) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = context.scratch_dir.iter().cloned().collect();
    dirs.push(std::env::temp_dir());
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(run));
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    dirs.dedup();
    dirs
}

/// Prefix of the helper's private directory; the integration tests look for leftovers by it.
pub const HELPER_DIR_PREFIX: &str = "oslab-process-";
const HELPER_NAME: &str = "exit0";

/// The static helper in a private directory (mode 0700) of its own, both removed on drop.
struct HelperFile {
    dir: PathBuf,
    path: PathBuf,
}

impl HelperFile {
    fn create(parent: &Path, image: &[u8]) -> io::Result<HelperFile> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut attempt = 0u32;
        let dir = loop {
            let dir = parent.join(format!(
                "{HELPER_DIR_PREFIX}{}-{nanos}-{attempt}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let helper = HelperFile {
            path: dir.join(HELPER_NAME),
            dir,
        };
        // The descriptor is closed (end of this block) before anything executes the file:
        // execve of a file open for writing fails with ETXTBSY. No other thread exists in
        // the worker to inherit it across a fork meanwhile (it is O_CLOEXEC anyway).
        {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .open(&helper.path)?;
            file.write_all(image)?;
        }
        Ok(helper)
    }
}

impl Drop for HelperFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

// --- process.fork_exec ---

/// `fork()`, the child `execve`s the target (and `_exit(127)`s if that fails), the parent
/// `waitpid`s.
struct ForkExec {
    program: Program,
}

impl Routine for ForkExec {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        let path = self.program.path.as_ptr();
        let argv = self.program.argv.as_ptr() as *const *const c_char;
        let envp = self.program.envp.as_ptr() as *const *const c_char;
        for _ in 0..ops {
            // SAFETY: as in `Fork`; the child calls only execve and _exit (both
            // async-signal-safe) with pointers prepared before the fork.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: `path`, `argv`, `envp` are valid NUL-/null-terminated arrays in
                // this (copied) address space; execve returns only on failure.
                unsafe {
                    libc::execve(path, argv, envp);
                    libc::_exit(127);
                }
            }
            if pid < 0 {
                return Err(last_os_error("fork"));
            }
            reap(pid, "fork+exec")?;
        }
        Ok(())
    }
}

fn setup_fork_exec(params: &Params, context: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(Box::new(ForkExec {
        program: program(params, context)?,
    }))
}

pub static FORK_EXEC: ExperimentInfo = ExperimentInfo {
    name: "process.fork_exec",
    os: crate::experiment::LINUX,
    summary: "fork(), the child execve()s a tiny program (a static exit(0) unless \
              target=dynamic), the parent waitpid()s: starting a new program",
    op: "fork+exec+wait",
    path: "glibc fork() (clone) + execve + waitpid (wait4), empty environment",
    params: &[TARGET_PARAM],
    syscalls: &["clone", "execve", "exit_group", "wait4"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: fork_expectations,
    setup: setup_fork_exec,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- process.posix_spawn ---

/// glibc's `posix_spawn`: a `clone(CLONE_VM | CLONE_VFORK)` on a freshly mapped stack, the
/// child resets its signal dispositions and `execve`s; an exec failure is reported to the
/// parent through the shared memory, so no `_exit(127)` round is needed to see it.
struct Spawn {
    program: Program,
}

impl Routine for Spawn {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            self.program.spawn_and_reap()?;
        }
        Ok(())
    }
}

fn setup_posix_spawn(params: &Params, context: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(Box::new(Spawn {
        program: program(params, context)?,
    }))
}

pub static POSIX_SPAWN: ExperimentInfo = ExperimentInfo {
    name: "process.posix_spawn",
    os: crate::experiment::LINUX,
    summary: "posix_spawn() of the same tiny program, then waitpid(): a new program without \
              copying the parent's page tables",
    op: "spawn+wait",
    path: "glibc posix_spawn (clone3 CLONE_VM|CLONE_VFORK + execve) + waitpid (wait4), empty \
           environment",
    params: &[TARGET_PARAM],
    syscalls: &[
        "clone3",
        "mmap",
        "munmap",
        "rt_sigprocmask",
        "execve",
        "exit_group",
        "wait4",
    ],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: false,
    expectations: spawn_expectations,
    setup: setup_posix_spawn,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- process.thread ---

extern "C" fn thread_body(_: *mut c_void) -> *mut c_void {
    std::ptr::null_mut()
}

/// A raw `pthread_create` with default attributes and an empty body, then `pthread_join`:
/// the kernel's clone3 of a thread plus glibc's own work (its stack cache makes stacks
/// reusable, so no mmap per thread), without Rust's `std::thread` bookkeeping (a name,
/// an `Arc` packet, the spawn hooks).
struct Thread;

impl Routine for Thread {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            let mut thread = std::mem::MaybeUninit::<libc::pthread_t>::uninit();
            // SAFETY: `thread` is writable storage for the id; null attributes mean the
            // defaults; `thread_body` is a valid `extern "C"` function that touches nothing.
            let rc = unsafe {
                libc::pthread_create(
                    thread.as_mut_ptr(),
                    std::ptr::null(),
                    thread_body,
                    std::ptr::null_mut(),
                )
            };
            if rc != 0 {
                return Err(os_error("pthread_create", rc));
            }
            // SAFETY: pthread_create succeeded, so `thread` holds a joinable thread id that
            // is joined exactly once.
            let rc = unsafe { libc::pthread_join(thread.assume_init(), std::ptr::null_mut()) };
            if rc != 0 {
                return Err(os_error("pthread_join", rc));
            }
        }
        Ok(())
    }
}

fn setup_thread(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(Box::new(Thread))
}

pub static THREAD: ExperimentInfo = ExperimentInfo {
    name: "process.thread",
    os: crate::experiment::LINUX,
    summary: "pthread_create() of an empty thread, then pthread_join(): a task that shares \
              everything (on the worker's CPU)",
    op: "create+join",
    path: "glibc pthread_create (clone3) + pthread_join (futex)",
    params: &[],
    syscalls: &["clone3", "rt_sigprocmask", "futex", "exit"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: thread_expectations,
    setup: setup_thread,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

/// The smallest static executables that exit with status 0, and a reader of just enough of
/// ELF (the System V gABI, `elf(5)`) to check them and to tell a dynamically linked program.
mod elf {
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

    /// `xor edi, edi; mov eax, 231 (exit_group); syscall`.
    pub const X86_64_EXIT0: &[u8] = &[0x31, 0xff, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05];
    /// `mov x0, #0; mov x8, #94 (exit_group); svc #0`, little-endian words.
    pub const AARCH64_EXIT0: &[u8] = &[
        0x00, 0x00, 0x80, 0xd2, 0xc8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
    ];

    /// The helper for the architecture this binary runs on, if there is one.
    pub fn exit0_image_for_this_arch() -> Option<Vec<u8>> {
        if cfg!(target_arch = "x86_64") {
            Some(exit0_image(EM_X86_64, X86_64_EXIT0))
        } else if cfg!(target_arch = "aarch64") {
            Some(exit0_image(EM_AARCH64, AARCH64_EXIT0))
        } else {
            None
        }
    }

    /// An ELF64 little-endian ET_EXEC with two program headers — one read+execute PT_LOAD
    /// covering the whole file, and a PT_GNU_STACK asking for a non-executable stack as
    /// every toolchain-built program does (without it, some kernels give the process
    /// READ_IMPLIES_EXEC) — followed by `code`, the entry point. No interpreter, no
    /// sections: the kernel maps one page and jumps to the code.
    pub fn exit0_image(machine: u16, code: &[u8]) -> Vec<u8> {
        let code_offset = EHDR_SIZE + 2 * PHDR_SIZE;
        let size = (code_offset + code.len()) as u64;
        let mut b = Vec::with_capacity(size as usize);
        // e_ident: magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_SYSV, padding.
        b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
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

    /// The parts of an ELF64 little-endian header this module needs.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Header {
        pub kind: u16,
        pub machine: u16,
        pub entry: u64,
        pub segments: Vec<Segment>,
    }

    pub fn parse(b: &[u8]) -> Result<Header, String> {
        if b.len() < EHDR_SIZE || b[..4] != [0x7f, b'E', b'L', b'F'] {
            return Err("not an ELF file".into());
        }
        if b[4] != 2 || b[5] != 1 {
            return Err("not a 64-bit little-endian ELF file".into());
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
        let short = || "truncated ELF header".to_string();
        let phoff = u64_at(32).ok_or_else(short)? as usize;
        let phentsize = u16_at(54).ok_or_else(short)? as usize;
        let phnum = u16_at(56).ok_or_else(short)? as usize;
        if phentsize < PHDR_SIZE {
            return Err(format!("program header entries of {phentsize} bytes"));
        }
        let mut segments = Vec::with_capacity(phnum);
        for i in 0..phnum {
            let at = phoff
                .checked_add(i * phentsize)
                .ok_or("program header offset overflows")?;
            let truncated = || format!("program header {i} lies outside the file");
            segments.push(Segment {
                kind: u32_at(at).ok_or_else(truncated)?,
                flags: u32_at(at + 4).ok_or_else(truncated)?,
                offset: u64_at(at + 8).ok_or_else(truncated)?,
                vaddr: u64_at(at + 16).ok_or_else(truncated)?,
                filesz: u64_at(at + 32).ok_or_else(truncated)?,
                memsz: u64_at(at + 40).ok_or_else(truncated)?,
            });
        }
        Ok(Header {
            kind: u16_at(16).ok_or_else(short)?,
            machine: u16_at(18).ok_or_else(short)?,
            entry: u64_at(24).ok_or_else(short)?,
            segments,
        })
    }

    /// Whether the program names a program interpreter (PT_INTERP): dynamically linked.
    pub fn interpreter(b: &[u8]) -> Result<bool, String> {
        Ok(parse(b)?.segments.iter().any(|s| s.kind == PT_INTERP))
    }
}

#[cfg(test)]
mod tests;

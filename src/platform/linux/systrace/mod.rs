//! Every system call of a command and of the processes it starts. Not ptrace: the command runs
//! at full speed. Two backends: eBPF programs that count in the kernel (`super::bpf`, the
//! default), or a perf record of every entry and exit (`records`: the fallback where eBPF may
//! not load, and `TraceCommand::records`).
//!
//! The command is started held (`held`): forked, waiting on a pipe until the tracer is ready,
//! then released into execve, so its very first call is seen; what the forked child did before
//! its execve is left out. The user-space address of each call and the executable mappings of
//! the traced processes (MMAP2 records) come along, so a call can be told by the file it was
//! made from (the dynamic loader or not).

mod held;
mod records;
mod tree;

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use self::held::Held;
use self::records::{Buffer, Layout};
use self::tree::Tree;
use super::bpf::SyscallCounter;
use crate::model::trace::{Method, SysEvent, Traced};

/// How often the buffers are drained while the command runs.
const POLL: Duration = Duration::from_millis(2);

/// The system call no kernel implements (it fails with ENOSYS) that marks a window in a
/// trace: the calls between the first marker's exit and the second marker's entry, over every
/// traced process. "oslb" in ASCII. The in-kernel (eBPF) backend honours the same number.
pub const MARK_NR: i64 = 0x6f73_6c62;

/// Make the marker call (see [`MARK_NR`]); it does nothing but enter and leave the kernel.
pub fn mark() {
    // SAFETY: a system call number no kernel implements takes no arguments and only returns
    // ENOSYS.
    unsafe { libc::syscall(MARK_NR as libc::c_long) };
}

pub use crate::platform::contract::systrace::{MAX_STDIN, TraceCommand, TraceError};

/// Run `argv` traced, with inherited stdin and stderr, and wait for it; its stdout is
/// inherited too, or sent to oslab's stderr (`stdout_to_stderr`: oslab's own stdout carries a
/// document); `records`: a record per call instead of counting in the kernel.
pub fn trace_command(
    argv: &[OsString],
    stdout_to_stderr: bool,
    records: bool,
) -> Result<Traced, TraceError> {
    trace(&TraceCommand {
        argv: argv.to_vec(),
        stdout_to_stderr,
        records,
        ..TraceCommand::default()
    })
}

/// Run `command` traced and wait for it: counted in the kernel by eBPF where it loads, else
/// (or when `command.records`) from a record per call. Under user-mode emulation, which
/// implements neither, a refusal gives that as its one reason.
pub fn trace(command: &TraceCommand) -> Result<Traced, TraceError> {
    either_backend(command).map_err(|e| match e {
        TraceError::Refused(why) => {
            TraceError::Refused(super::env::perf_refusal_under_emulation().unwrap_or(why))
        }
        e => e,
    })
}

fn either_backend(command: &TraceCommand) -> Result<Traced, TraceError> {
    if command.records {
        return recorded(command, None);
    }
    match SyscallCounter::open(EXECVE, MARK_NR, command.marked) {
        Ok(counter) => counted(command, counter),
        Err(why) => recorded(command, Some(why.to_string())).map_err(|e| match e {
            TraceError::Refused(records) => {
                TraceError::Refused(format!("{why}; nor may it record every call: {records}"))
            }
            e => e,
        }),
    }
}

/// The eBPF backend: the counter follows the held command; only its mappings come as records.
fn counted(command: &TraceCommand, mut counter: SyscallCounter) -> Result<Traced, TraceError> {
    let open = |pid: libc::pid_t| {
        counter.follow(pid as u32).map_err(|e| e.to_string())?;
        records::open_mappings(pid).map_err(|e| super::stacks::refusal(&e))
    };
    let mut traced = run(command, open, None)?;
    let counted = counter
        .read()
        .map_err(|e| TraceError::Failed(e.to_string()))?;
    traced.sites = counted.sites;
    traced.lost += counted.dropped;
    traced.marked = counted.marked;
    traced.method = Method::Counted;
    Ok(traced)
}

/// The perf-records backend; `not_counted`: why eBPF did not count (`None`: asked for).
fn recorded(command: &TraceCommand, not_counted: Option<String>) -> Result<Traced, TraceError> {
    let layout = Layout::read()?;
    let open = |pid| records::open_all(pid, &layout).map_err(|e| super::stacks::refusal(&e));
    let mut traced = run(command, open, Some(&layout))?;
    traced.events.sort_by_key(SysEvent::time);
    traced.method = Method::Recorded { not_counted };
    Ok(traced)
}

/// Start the command held, open the tracer on it (`open`: the buffers to drain, or why not),
/// contain its tree (`tree`), release it and wait for it, draining the buffers and its captured
/// stdout every [`POLL`]. Whatever it started that still runs when it ends is killed; so is
/// all of it on Ctrl-C, SIGTERM or SIGHUP (noted by `interrupt`, when installed).
fn run(
    command: &TraceCommand,
    open: impl FnOnce(libc::pid_t) -> Result<Vec<Buffer>, String>,
    layout: Option<&Layout>,
) -> Result<Traced, TraceError> {
    let program = command
        .argv
        .first()
        .ok_or_else(|| TraceError::Failed("no command given".into()))?;
    let shown = program.to_string_lossy().into_owned();
    let path = resolve(Path::new(program)).ok_or_else(|| {
        TraceError::Command(shown.clone(), io::Error::from_raw_os_error(libc::ENOENT))
    })?;
    let child = Held::spawn(&path, command).map_err(|e| TraceError::Command(shown.clone(), e))?;
    let tree = Tree::contain(child.pid);
    let mut buffers = match open(child.pid) {
        Ok(buffers) => buffers,
        Err(why) => {
            child.kill();
            return Err(TraceError::Refused(why));
        }
    };
    let start = Instant::now();
    let mut traced = Traced {
        pid: child.pid as u32,
        ..Traced::default()
    };
    child
        .release()
        .map_err(|e| TraceError::Command(shown.clone(), e))?;
    let status = loop {
        for b in &mut buffers {
            b.drain(layout, &mut traced);
        }
        child.read_stdout(&mut traced.stdout);
        if let Some(status) = child.exited() {
            break status;
        }
        if let Some(signal) = super::interrupt::requested() {
            tree.kill(true);
            child.close_stdout();
            child.exited_blocking();
            return Err(TraceError::Interrupted(signal));
        }
        std::thread::sleep(POLL);
    };
    traced.wall = start.elapsed();
    traced.left_running = tree.kill(false);
    for b in &mut buffers {
        b.drain(layout, &mut traced);
    }
    child.read_stdout(&mut traced.stdout);
    child.close_stdout();
    traced.status = status;
    Ok(traced)
}

/// `program` as execve needs it: a path with a slash as given, otherwise the first match in
/// PATH that is an executable file.
fn resolve(program: &Path) -> Option<PathBuf> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Some(program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The name of system call `nr` on this architecture (`nr123` for one this table lacks).
pub fn syscall_name(nr: i64) -> String {
    usize::try_from(nr)
        .ok()
        .and_then(syscalls::Sysno::new)
        .map_or_else(|| format!("nr{nr}"), |s| s.name().to_string())
}

/// This architecture's number of execve.
pub const EXECVE: i64 = syscalls::Sysno::execve as i64;
/// The calls that end a task and never return.
pub const EXITS: [i64; 2] = [
    syscalls::Sysno::exit as i64,
    syscalls::Sysno::exit_group as i64,
];

pub use crate::platform::unix::process::describe_status;

//! Every system call of a command and of the processes it starts, from the records of the
//! `raw_syscalls:sys_enter` and `sys_exit` tracepoints (perf_event_open, one ring buffer per
//! CPU and event, inherited into children), drained while the command runs. Not ptrace: the
//! command runs at full speed apart from writing each record.
//!
//! The command is started held: forked, waiting on a pipe until the events are open on it,
//! then released into execve, so its very first call is recorded; what the forked child did
//! before its execve is left out. The user-space instruction pointer of each call and the
//! executable mappings of the traced processes (MMAP2 records) come along, so a call can be
//! told by the file it was made from (the dynamic loader or not).

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use perf_event::data::Record;
use perf_event::{Builder, SampleFlag, Sampler};

use super::tracefs;
use crate::model::trace::{Mapping, SysEvent, Traced};

/// Why a command could not be traced.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot run {0}: {1}")]
    Command(String, io::Error),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
}

/// Ring buffer sizes tried in turn, per CPU and event.
const RINGS: [usize; 3] = [8 << 20, 1 << 20, 1 << 18];
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

/// What to run traced, and how its standard input and output are connected.
#[derive(Debug, Clone, Default)]
pub struct TraceCommand {
    pub argv: Vec<OsString>,
    /// Written to the command's stdin (a pipe, closed after it) before it is released;
    /// `None`: stdin is inherited. At most [`MAX_STDIN`] bytes: it must fit in the pipe.
    pub stdin: Option<Vec<u8>>,
    /// Collect stdout into `Traced::stdout` instead of inheriting it.
    pub capture_stdout: bool,
    /// Variables set in the command's environment, besides oslab's own.
    pub env: Vec<(OsString, OsString)>,
}

/// The most bytes [`TraceCommand::stdin`] may hold: a pipe's default capacity is 64 KiB, and
/// the held command reads nothing until it is released.
pub const MAX_STDIN: usize = 60 << 10;

/// Run `argv` traced, with inherited stdio, and wait for it.
pub fn trace_command(argv: &[OsString]) -> Result<Traced, TraceError> {
    trace(&TraceCommand {
        argv: argv.to_vec(),
        ..TraceCommand::default()
    })
}

/// Run `command` traced and wait for it.
pub fn trace(command: &TraceCommand) -> Result<Traced, TraceError> {
    let program = command
        .argv
        .first()
        .ok_or_else(|| TraceError::Failed("no command given".into()))?;
    let shown = program.to_string_lossy().into_owned();
    let path = resolve(Path::new(program)).ok_or_else(|| {
        TraceError::Command(shown.clone(), io::Error::from_raw_os_error(libc::ENOENT))
    })?;
    let layout = Layout::read()?;
    let child = Held::spawn(&path, command).map_err(|e| TraceError::Command(shown.clone(), e))?;
    let mut buffers = match open_all(child.pid, &layout) {
        Ok(buffers) => buffers,
        Err(e) => {
            child.kill();
            return Err(TraceError::Refused(super::stacks::refusal(&e)));
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
            b.drain(&layout, &mut traced);
        }
        child.read_stdout(&mut traced.stdout);
        if let Some(status) = child.exited() {
            break status;
        }
        std::thread::sleep(POLL);
    };
    traced.wall = start.elapsed();
    for b in &mut buffers {
        b.drain(&layout, &mut traced);
    }
    child.read_stdout(&mut traced.stdout);
    child.close_stdout();
    traced.status = status;
    traced.events.sort_by_key(SysEvent::time);
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

/// Where the fields of the two tracepoints' records are.
struct Layout {
    enter: perf_event::events::Tracepoint,
    exit: perf_event::events::Tracepoint,
    enter_id: usize,
    exit_id: usize,
    exit_ret: usize,
}

impl Layout {
    fn read() -> Result<Layout, TraceError> {
        let offset = |event: &str, field: &str| {
            tracefs::field_offset("raw_syscalls", event, field).ok_or_else(|| {
                TraceError::Refused(format!(
                    "the raw_syscalls:{event} tracepoint's format has no field {field}"
                ))
            })
        };
        Ok(Layout {
            enter: tracefs::tracepoint("raw_syscalls", "sys_enter").map_err(TraceError::Refused)?,
            exit: tracefs::tracepoint("raw_syscalls", "sys_exit").map_err(TraceError::Refused)?,
            enter_id: offset("sys_enter", "id")?,
            exit_id: offset("sys_exit", "id")?,
            exit_ret: offset("sys_exit", "ret")?,
        })
    }
}

/// The register of the user-space instruction pointer in `PERF_SAMPLE_REGS_USER`.
#[cfg(target_arch = "x86_64")]
const IP_REGISTER: u32 = 8; // PERF_REG_X86_IP
#[cfg(target_arch = "aarch64")]
const IP_REGISTER: u32 = 32; // PERF_REG_ARM64_PC

/// One ring buffer: of sys_enter (with the mapping records) or of sys_exit, on one CPU.
struct Buffer {
    sampler: Sampler,
    enter: bool,
}

/// The events on every online CPU, following `pid` and what it starts.
fn open_all(pid: libc::pid_t, layout: &Layout) -> io::Result<Vec<Buffer>> {
    let mut buffers = Vec::new();
    for cpu in super::stacks::online_cpus() {
        for enter in [true, false] {
            let event = if enter { layout.enter } else { layout.exit };
            let mut builder = Builder::new(event);
            builder
                .observe_pid(pid)
                .one_cpu(cpu)
                .inherit(true)
                .sample_period(1)
                .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::RAW)
                .include_kernel()
                .enabled(true);
            if enter {
                builder
                    .sample(
                        SampleFlag::TID
                            | SampleFlag::TIME
                            | SampleFlag::RAW
                            | SampleFlag::REGS_USER,
                    )
                    .sample_regs_user(1 << IP_REGISTER)
                    .mmap(true)
                    .mmap2(true)
                    .sample_id_all(true);
            }
            buffers.push(Buffer {
                sampler: super::stacks::sampled_in_largest(&builder, &RINGS)?,
                enter,
            });
        }
    }
    Ok(buffers)
}

impl Buffer {
    fn drain(&mut self, layout: &Layout, traced: &mut Traced) {
        while let Some(record) = self.sampler.next_record() {
            match record.parse_record() {
                Ok(Record::Sample(sample)) => {
                    let (Some(pid), Some(tid), Some(time), Some(raw)) =
                        (sample.pid(), sample.tid(), sample.time(), sample.raw())
                    else {
                        continue;
                    };
                    let field = |offset: usize| {
                        raw.get(offset..offset + 8)
                            .map(|b| i64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
                    };
                    if self.enter {
                        let ip = sample
                            .regs_user()
                            .and_then(|r| r.regs.first().copied())
                            .unwrap_or(0);
                        if let Some(nr) = field(layout.enter_id) {
                            traced.events.push(SysEvent::Enter {
                                pid,
                                tid,
                                time,
                                nr,
                                ip,
                            });
                        }
                    } else if let (Some(nr), Some(ret)) =
                        (field(layout.exit_id), field(layout.exit_ret))
                    {
                        traced.events.push(SysEvent::Exit {
                            pid,
                            tid,
                            time,
                            nr,
                            ret,
                        });
                    }
                }
                Ok(Record::Mmap2(m)) => traced.mappings.push(Mapping {
                    pid: m.pid,
                    start: m.addr,
                    len: m.len,
                    path: String::from_utf8_lossy(&m.filename).into_owned(),
                }),
                Ok(Record::Lost(lost)) => traced.lost += lost.lost,
                _ => {}
            }
        }
    }
}

/// A forked child waiting on a pipe before its execve.
struct Held {
    pid: libc::pid_t,
    /// The write end: closing it releases the child.
    release: libc::c_int,
    /// The read end of a close-on-exec pipe the child writes its execve errno to.
    errors: libc::c_int,
    /// The read end of the child's stdout (non-blocking), when it is captured.
    stdout: Option<libc::c_int>,
}

/// What the forked child needs, all allocated before the fork.
struct Exec {
    path: CString,
    args: Vec<CString>,
    env: Vec<CString>,
}

impl Exec {
    fn new(path: &Path, command: &TraceCommand) -> io::Result<Exec> {
        let c = |bytes: &[u8]| {
            CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
        };
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(k, _)| !command.env.iter().any(|(set, _)| set == k))
            .collect();
        env.extend(command.env.iter().cloned());
        Ok(Exec {
            path: c(path.as_os_str().as_bytes())?,
            args: command
                .argv
                .iter()
                .map(|a| c(a.as_bytes()))
                .collect::<Result<_, _>>()?,
            env: env
                .iter()
                .map(|(k, v)| c(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
                .collect::<Result<_, _>>()?,
        })
    }
}

fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    ptrs
}

impl Held {
    fn spawn(path: &Path, command: &TraceCommand) -> io::Result<Held> {
        // Everything the child needs is allocated before the fork: after it, only
        // async-signal-safe calls.
        let exec = Exec::new(path, command)?;
        let (arg_ptrs, env_ptrs) = (pointers(&exec.args), pointers(&exec.env));
        let input = command.stdin.as_deref();
        if input.is_some_and(|i| i.len() > MAX_STDIN) {
            return Err(io::Error::from_raw_os_error(libc::E2BIG));
        }
        let stdin = input.map(|_| pipe(libc::O_CLOEXEC)).transpose()?;
        let stdout = command
            .capture_stdout
            .then(|| pipe(libc::O_CLOEXEC))
            .transpose()?;
        let (hold_r, hold_w) = pipe(0)?;
        let (err_r, err_w) = pipe(libc::O_CLOEXEC)?;
        // SAFETY: fork in a process that may have threads: the child only calls
        // async-signal-safe functions (close, read, dup2, execve, write, _exit) on data made
        // before.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: see above; every pointer was made before the fork and is still valid.
            // dup2 clears close-on-exec on the new descriptor, so 0 and 1 survive the execve.
            unsafe {
                libc::close(hold_w);
                libc::close(err_r);
                if let Some((r, _)) = stdin {
                    libc::dup2(r, 0);
                }
                if let Some((_, w)) = stdout {
                    libc::dup2(w, 1);
                }
                let mut byte = 0u8;
                libc::read(hold_r, (&mut byte as *mut u8).cast(), 1);
                libc::close(hold_r);
                libc::execve(exec.path.as_ptr(), arg_ptrs.as_ptr(), env_ptrs.as_ptr());
                let errno = *libc::__errno_location();
                libc::write(err_w, (&errno as *const i32).cast(), 4);
                libc::_exit(127);
            }
        }
        // SAFETY: closing the parent's copies of the child's ends.
        unsafe {
            libc::close(hold_r);
            libc::close(err_w);
        }
        if let (Some((r, w)), Some(bytes)) = (stdin, input) {
            // SAFETY: our own descriptors; the pipe holds MAX_STDIN bytes unread.
            unsafe {
                libc::close(r);
                libc::write(w, bytes.as_ptr().cast(), bytes.len());
                libc::close(w);
            }
        }
        let stdout = stdout.map(|(r, w)| {
            // SAFETY: our own descriptors: the child keeps the write end, we read without
            // blocking while the command runs.
            unsafe {
                libc::close(w);
                libc::fcntl(r, libc::F_SETFL, libc::O_NONBLOCK);
            }
            r
        });
        Ok(Held {
            pid,
            release: hold_w,
            errors: err_r,
            stdout,
        })
    }

    /// Append what the child wrote to its captured stdout since the last call.
    fn read_stdout(&self, into: &mut Vec<u8>) {
        let Some(fd) = self.stdout else { return };
        let mut chunk = [0u8; 4096];
        loop {
            // SAFETY: reading into a local buffer of its size from our own descriptor.
            let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            if n <= 0 {
                return;
            }
            into.extend_from_slice(&chunk[..n as usize]);
        }
    }

    fn close_stdout(&self) {
        if let Some(fd) = self.stdout {
            // SAFETY: our own descriptor, not used after this.
            unsafe { libc::close(fd) };
        }
    }

    /// Let the child exec; `Err` when its execve failed.
    fn release(&self) -> io::Result<()> {
        // SAFETY: closing our own descriptor; the child's read returns 0 and it goes on.
        unsafe { libc::close(self.release) };
        let mut errno = 0i32;
        // SAFETY: reading 4 bytes into an i32; EOF (0) means the execve succeeded.
        let n = unsafe { libc::read(self.errors, (&mut errno as *mut i32).cast(), 4) };
        // SAFETY: our own descriptor.
        unsafe { libc::close(self.errors) };
        if n == 4 {
            self.close_stdout();
            self.exited_blocking();
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(())
    }

    /// The wait status, once the child has ended.
    fn exited(&self) -> Option<i32> {
        let mut status = 0;
        // SAFETY: our own child; WNOHANG returns at once.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        (rc == self.pid).then_some(status)
    }

    fn exited_blocking(&self) {
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }

    fn kill(&self) {
        // SAFETY: our own child, still held (it has not exec'd).
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::close(self.release);
            libc::close(self.errors);
        }
        self.close_stdout();
        self.exited_blocking();
    }
}

fn pipe(flags: libc::c_int) -> io::Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
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

/// A wait status in words: `exit status 0`, `killed by SIGKILL`; and the exit code if it
/// exited.
pub fn describe_status(status: i32) -> (String, Option<i32>) {
    if libc::WIFEXITED(status) {
        let code = libc::WEXITSTATUS(status);
        (format!("exit status {code}"), Some(code))
    } else if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        (
            format!("killed by {}", super::interrupt::signal_name(signal)),
            None,
        )
    } else {
        (format!("wait status {status}"), None)
    }
}

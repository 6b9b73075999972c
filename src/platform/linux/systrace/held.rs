//! The traced command, forked and held on a pipe until the tracer is ready, then released
//! into its execve; its stdin fed from bytes and its stdout captured when asked.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{MAX_STDIN, TraceCommand};

/// A forked child waiting on a pipe before its execve.
pub(super) struct Held {
    pub(super) pid: libc::pid_t,
    /// The write end: a byte written to it releases the child; its end without one (oslab
    /// died) makes the child exit.
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
    pub(super) fn spawn(path: &Path, command: &TraceCommand) -> io::Result<Held> {
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
        let parent = std::process::id();
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
                // Killed when oslab dies, even by SIGKILL; gone at once if it already has.
                // (The flag follows the thread that forked: the tracer forks from the thread
                // that waits for the command.)
                if !super::super::process::die_with_parent_of(parent) {
                    libc::_exit(127);
                }
                libc::close(hold_w);
                libc::close(err_r);
                if let Some((r, _)) = stdin {
                    libc::dup2(r, 0);
                }
                if let Some((_, w)) = stdout {
                    libc::dup2(w, 1);
                } else if command.stdout_to_stderr {
                    libc::dup2(2, 1);
                }
                // Released by a byte; the pipe's end without one means oslab died before it
                // was ready (its descriptors close before its children are signalled).
                let mut byte = 0u8;
                if libc::read(hold_r, (&mut byte as *mut u8).cast(), 1) != 1 {
                    libc::_exit(127);
                }
                libc::close(hold_r);
                crate::platform::interrupt::restore_inherited();
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
    pub(super) fn read_stdout(&self, into: &mut Vec<u8>) {
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

    pub(super) fn close_stdout(&self) {
        if let Some(fd) = self.stdout {
            // SAFETY: our own descriptor, not used after this.
            unsafe { libc::close(fd) };
        }
    }

    /// Let the child exec; `Err` when its execve failed.
    pub(super) fn release(&self) -> io::Result<()> {
        // SAFETY: writing one byte to, then closing, our own descriptor: the child's read
        // returns it and the child goes on.
        unsafe {
            libc::write(self.release, b"g".as_ptr().cast(), 1);
            libc::close(self.release);
        }
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
    pub(super) fn exited(&self) -> Option<i32> {
        let mut status = 0;
        // SAFETY: our own child; WNOHANG returns at once.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        (rc == self.pid).then_some(status)
    }

    /// Wait for the child to end (after it was killed), and forget it.
    pub(super) fn exited_blocking(&self) {
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }

    pub(super) fn kill(&self) {
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

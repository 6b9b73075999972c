//! The traced command's whole tree ends with oslab, however oslab ends.
//!
//! - The command itself was told before its execve to die with oslab
//!   (`PR_SET_PDEATHSIG`, in `held`): a `kill -9` of oslab ends it at once.
//! - Where oslab may create a cgroup (root, or a delegated one), the held command is moved
//!   into a cgroup of its own before it is released, so everything it starts is inside,
//!   including what leaves its process group or session. The tree is killed there: on
//!   Ctrl-C, SIGTERM or SIGHUP, when the command ends (what it left running in the
//!   background ends with the trace, and oslab says how many), and on any error.
//! - A guard process, forked for the cgroup and in a session of its own (so a terminal's
//!   Ctrl-C or a kill of oslab's process group passes it by), waits for a pipe from oslab to
//!   close, which the kernel does when oslab dies, however: it then kills whatever is in the
//!   cgroup and removes it. It needs nothing from oslab, not even a signal handler.
//! - Should even the guard be killed, the cgroup is named `oslab-<pid>-<n>`, and the next oslab
//!   that creates a cgroup (a trace, a memory load) kills what is inside and removes it.
//! - Without a cgroup, oslab becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`), so that
//!   what the command starts stays oslab's descendant even when its own parent ends (a
//!   daemon's double fork), and the tree is found by parent PIDs in /proc and killed from
//!   oslab: on a signal, at the command's end, on errors. After a `kill -9` of oslab, only the
//!   command itself ends there.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use crate::platform::linux::cgroup::{self, Cgroup};

/// How long the guard goes on killing before it gives up on a cgroup that will not empty.
const GUARD_PATIENCE: Duration = Duration::from_secs(10);

/// The traced command's tree: its cgroup and guard, or the processes found below oslab.
pub(super) struct Tree {
    root: libc::pid_t,
    /// Where the search by parent PIDs starts without a cgroup: oslab itself, their reaper.
    reaper: libc::pid_t,
    cgroup: Option<Cgroup>,
    guard: Option<Guard>,
}

impl Tree {
    /// Contain the held (not yet released) command `root`: a cgroup and a guard where oslab may
    /// create one, else only its PID.
    pub(super) fn contain(root: libc::pid_t) -> Tree {
        let cgroup = cgroup::hierarchy()
            .ok()
            .and_then(|h| Cgroup::make(&h, "a traced command's cgroup").ok())
            .filter(|c| std::fs::write(c.procs(), root.to_string()).is_ok());
        let guard = cgroup.as_ref().and_then(|c| Guard::start(c).ok());
        if cgroup.is_none() {
            // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only sets a flag on this process.
            unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) };
        }
        Tree {
            root,
            reaper: std::process::id() as libc::pid_t,
            cgroup,
            guard,
        }
    }

    /// Kill every process of the tree that still runs — the root too when `root_running` (it
    /// has not been reaped, so its PID is still its own) — and say how many besides the root
    /// there were: what the command left running.
    pub(super) fn kill(&self, root_running: bool) -> usize {
        let mut pids = match &self.cgroup {
            Some(cgroup) => cgroup.pids(),
            None => descendants(self.reaper),
        };
        pids.retain(|&p| p != self.root);
        if root_running {
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(self.root, libc::SIGKILL) };
        }
        for &pid in &pids {
            // SAFETY: signalling a process of the cgroup only the traced tree joined, or one
            // whose parent chain leads to oslab, whose only child is the traced command.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        pids.len()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        // The root is reaped by then (see `Held`): only what it started is left to kill.
        self.kill(false);
        // Removing the cgroup waits for the killed processes to leave it; the guard then finds
        // nothing to do.
        self.cgroup.take();
        self.guard.take();
    }
}

/// The live processes whose parent chain leads to `root`, from /proc (each parent before its
/// children); those that end or start meanwhile may be missed.
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let parents: Vec<(libc::pid_t, libc::pid_t)> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let pid = e.file_name().to_str()?.parse().ok()?;
                    let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                    // The state and the parent follow the command name in parentheses; a
                    // zombie has ended already.
                    let mut after = stat[stat.rfind(')')? + 1..].split_whitespace();
                    let state = after.next()?;
                    let ppid = after.next()?.parse().ok()?;
                    (state != "Z").then_some((pid, ppid))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The guard: a forked process that empties and removes the cgroup once oslab's end of a pipe
/// closes.
struct Guard {
    pid: libc::pid_t,
    /// oslab's end: closed when oslab ends, however.
    alive: libc::c_int,
}

impl Guard {
    fn start(cgroup: &Cgroup) -> io::Result<Guard> {
        let c = |p: &std::path::Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
        };
        let (procs, kill, dir) = (
            c(&cgroup.procs())?,
            c(&cgroup.file("cgroup.kill"))?,
            c(&cgroup.dir)?,
        );
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let [watch, alive] = fds;
        // SAFETY: fork in a process that may have threads: the child only makes
        // async-signal-safe calls (close_range, setsid, sigaction, read, open, kill, rmdir,
        // nanosleep, _exit) on data made before.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: our own descriptors.
            unsafe {
                libc::close(watch);
                libc::close(alive);
            }
            return Err(e);
        }
        if pid == 0 {
            // SAFETY: a freshly forked child; see above.
            unsafe { guard(watch, [&procs, &kill, &dir]) };
        }
        // SAFETY: the guard's end, not ours.
        unsafe { libc::close(watch) };
        Ok(Guard { pid, alive })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: our own descriptor and child.
        unsafe {
            libc::close(self.alive);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// The guard's life: wait for `watch` to reach its end (oslab closed, or died), then kill
/// what is in the cgroup (its `cgroup.procs`, `cgroup.kill` and directory) until it is empty,
/// remove it and exit.
///
/// # Safety
/// Only in a freshly forked child: async-signal-safe calls only.
unsafe fn guard(watch: libc::c_int, [procs, kill, dir]: [&CString; 3]) -> ! {
    // SAFETY (whole body): async-signal-safe calls on our own descriptors and on data made
    // before the fork.
    unsafe {
        super::super::process::close_all_but(&[watch]);
        libc::setsid();
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(signal, libc::SIG_IGN);
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(watch, (&mut byte as *mut u8).cast(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        // v2 kills in the kernel, forks in flight included; v1 is emptied by hand below.
        let kill_file = libc::open(kill.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if kill_file >= 0 {
            libc::write(kill_file, b"1".as_ptr().cast(), 1);
            libc::close(kill_file);
        }
        let start = Instant::now();
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 5_000_000,
        };
        // A process forking while it is killed can add a child a moment after the cgroup read
        // empty: it is removed only once it has read empty twice.
        let mut empty_reads = 0;
        while start.elapsed() < GUARD_PATIENCE {
            let fd = libc::open(procs.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                // The cgroup is gone: oslab removed it.
                libc::_exit(0);
            }
            let mut buf = [0u8; 4096];
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            libc::close(fd);
            let (mut pid, mut found): (libc::pid_t, bool) = (0, false);
            for &b in &buf[..n.max(0) as usize] {
                if b.is_ascii_digit() {
                    pid = pid * 10 + libc::pid_t::from(b - b'0');
                } else {
                    if pid > 0 {
                        libc::kill(pid, libc::SIGKILL);
                        found = true;
                    }
                    pid = 0;
                }
            }
            empty_reads = if found { 0 } else { empty_reads + 1 };
            if empty_reads >= 2 && libc::rmdir(dir.as_ptr()) == 0 {
                libc::_exit(0);
            }
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        libc::_exit(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_follow_parent_pids() {
        // This test's process has no children of its own started here: none found, and
        // never itself.
        let me = std::process::id() as libc::pid_t;
        assert!(!descendants(me).contains(&me));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("start sleep");
        let found = descendants(me);
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.contains(&(child.id() as libc::pid_t)), "{found:?}");
    }
}

//! What every Unix says alike about another process.

pub use crate::platform::contract::killed::Killed;

/// Whether process `pid` still exists (kill(2) with signal 0; a process of another user
/// that exists counts as alive).
pub fn is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks whether the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// A worker's process group: the worker leads it, and whatever it starts belongs to it, so
/// one kill ends them all.
pub struct Group {
    leader: libc::pid_t,
}

impl Group {
    /// Make `command` start its process as the leader of a new process group.
    pub fn prepare(command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }

    /// The group `child` leads (started from a [`Group::prepare`]d command).
    pub fn of(child: &std::process::Child) -> std::io::Result<Group> {
        let leader = libc::pid_t::try_from(child.id())
            .map_err(|_| std::io::Error::other("pid out of range"))?;
        Ok(Group { leader })
    }

    /// SIGKILL to every process of the group (nothing when it is gone).
    pub fn kill(&self) {
        // SAFETY: signalling a process group our child leads.
        unsafe { libc::kill(-self.leader, libc::SIGKILL) };
    }
}

/// How a process that did not say how it ended ended, for a message: `Err` holds what
/// killed it (`SIGSEGV (signal 11)`).
pub fn ending(status: std::process::ExitStatus) -> Result<i32, Killed> {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ok(code),
        (None, Some(signal)) => Err(Killed::Signal {
            name: super::interrupt::signal_name(signal),
            number: signal,
        }),
        (None, None) => Err(Killed::Other(status.to_string())),
    }
}

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

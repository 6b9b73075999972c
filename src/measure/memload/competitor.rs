//! The competitor as the parent sees it: started, watched until it exits or is killed, its exit described.

use super::*;

/// How the competitor ended, seen by the thread that waits for it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Exit {
    /// Since the competitor was started (its fill time is recorded apart).
    pub(super) after: Duration,
    /// The wait status.
    pub(super) status: i32,
    /// Its peak resident set from getrusage, bytes.
    pub(super) maxrss: u64,
}

#[derive(Default)]
pub(super) struct ExitState {
    pub(super) exit: Option<Exit>,
    /// Set, under the lock, once the pid is released: it must not be signalled after that.
    pub(super) reaped: bool,
}

/// The competing process. Only its watcher thread reaps it, under the lock, so the pid
/// stays ours while the lock is held.
pub(super) struct Competitor {
    pub(super) pid: libc::pid_t,
    pub(super) state: Arc<Mutex<ExitState>>,
    pub(super) watcher: Option<JoinHandle<()>>,
}

impl Competitor {
    pub(super) fn spawn(
        region: u64,
        cpu: Option<usize>,
        procs: &Path,
    ) -> Result<(Competitor, ChildStdout), SetupError> {
        let failed = |e: io::Error| SetupError::Failed(format!("cannot start the competitor: {e}"));
        let exe = std::env::current_exe().map_err(failed)?;
        let mut command = Command::new(exe);
        command
            .args(["load", "--memory", &region.to_string()])
            .arg("--cgroup")
            .arg(procs)
            .args(["--parent", &std::process::id().to_string()]);
        if let Some(cpu) = cpu {
            command.args(["--cpu", &cpu.to_string()]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(failed)?;
        let stdout = child.stdout.take();
        let pid = child.id() as libc::pid_t;
        // `child` is dropped without waiting: the watcher below is the only one that reaps.
        let state = Arc::new(Mutex::new(ExitState::default()));
        let started = Instant::now();
        let watched = Arc::clone(&state);
        let watcher = std::thread::spawn(move || watch(pid, started, &watched));
        let competitor = Competitor {
            pid,
            state,
            watcher: Some(watcher),
        };
        match stdout {
            Some(stdout) => Ok((competitor, stdout)),
            None => Err(SetupError::Failed(
                "the competitor's output pipe is missing".into(),
            )),
        }
    }

    pub(super) fn state(&self) -> MutexGuard<'_, ExitState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Wait for the competitor to end (without reaping it, so its pid cannot be reused while the
/// parent may still signal it), note when, then reap it under the lock.
pub(super) fn watch(pid: libc::pid_t, started: Instant, state: &Mutex<ExitState>) {
    loop {
        // SAFETY: an all-zero siginfo_t is valid output space.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our child; WNOWAIT leaves it waitable.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let after = started.elapsed();
    let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid output space.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped (only this thread reaps it).
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if rc == pid {
        guard.exit = Some(Exit {
            after,
            status,
            maxrss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        });
    }
    guard.reaped = true;
}

impl Drop for Competitor {
    fn drop(&mut self) {
        {
            let state = self.state();
            if !state.reaped {
                // SAFETY: the pid is our unreaped child while the lock is held.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
            }
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

/// Wait until the competitor says its region is resident, or why it could not.
pub(super) fn wait_ready(stdout: &mut ChildStdout) -> Result<(), SetupError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut line = Vec::new();
    loop {
        if let Some(signal) = crate::platform::interrupt::requested() {
            return Err(interrupted(signal));
        }
        if Instant::now() >= deadline {
            return Err(SetupError::Failed(format!(
                "the competitor did not fill its memory within {} s",
                READY_TIMEOUT.as_secs()
            )));
        }
        let mut poll = libc::pollfd {
            fd: stdout.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for a descriptor we own.
        let rc = unsafe { libc::poll(&mut poll, 1, 100) };
        if rc <= 0 {
            continue;
        }
        let mut buf = [0u8; 256];
        let n = stdout
            .read(&mut buf)
            .map_err(|e| SetupError::Failed(format!("cannot read from the competitor: {e}")))?;
        line.extend_from_slice(&buf[..n]);
        if n == 0 || line.contains(&b'\n') {
            break;
        }
    }
    let text = String::from_utf8_lossy(&line);
    let text = text.trim();
    match text.strip_prefix("error: ") {
        _ if text == READY => Ok(()),
        Some(reason) => Err(SetupError::Failed(format!(
            "the competitor failed: {reason}"
        ))),
        // Ctrl-C reaches the competitor too when it shares the terminal's process group.
        None => Err(match crate::platform::interrupt::requested() {
            Some(signal) => interrupted(signal),
            None => SetupError::Failed("the competitor ended before filling its memory".into()),
        }),
    }
}

pub(super) fn interrupted(signal: i32) -> SetupError {
    SetupError::Failed(format!(
        "interrupted by {} while the competitor filled its memory",
        crate::platform::interrupt::signal_name(signal)
    ))
}

/// Where the competitor runs, as the record says it.
pub(super) fn placement(competitor_cpu: Option<usize>, measured: Option<usize>) -> String {
    let measured_text = measured.map_or("the measured CPU".to_string(), |c| {
        format!("the measured CPU {c}")
    });
    match competitor_cpu {
        Some(cpu) => format!(
            "pinned to CPU {cpu}, not {measured_text}: it adds memory pressure, not CPU \
             contention, to the experiment (the other CPU is busy instead)"
        ),
        None => {
            format!("unpinned: no other CPU to put it on, so it also competes for {measured_text}")
        }
    }
}

//! Finding and stopping the processes a test's oslab started: markers in their environment,
//! leftover directories, killed workers, and oslab interrupted like Ctrl-C.

#![allow(dead_code)]

use super::*;

/// A unique marker to put in a child's environment, so the test can find every process that
/// descends from that child later (the worker inherits the environment of `oslab run`).
pub fn unique_marker(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{what}-{}-{nanos}", std::process::id())
}

/// Live processes whose environment contains `NAME=marker`, as `pid: cmdline`.
pub fn processes_with_marker(name: &str, marker: &str) -> Vec<String> {
    let needle = format!("{name}={marker}");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // Unreadable (another user's, or gone meanwhile) means not ours.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|&b| b == 0)
            .any(|var| var == needle.as_bytes())
        {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push(format!("{pid}: {}", cmdline.trim()));
        }
    }
    found
}

/// [`processes_with_marker`] after giving the kernel up to two seconds to tear down what is
/// already dying: what this returns outlived its parent.
pub fn marked_processes_after_grace(name: &str, marker: &str) -> Vec<String> {
    let mut left = processes_with_marker(name, marker);
    for _ in 0..20 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = processes_with_marker(name, marker);
    }
    left
}

/// The variable a test sets on the oslab it starts, so that oslab's processes (which inherit
/// it) can be told from every other process in /proc.
pub const MARKER_VAR: &str = "OSLAB_IT_MARKER";

/// The names in `dir`: what a run left behind there.
pub fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read --dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Pids of live `oslab worker` processes carrying `marker`.
pub fn workers(marker: &str) -> Vec<i32> {
    processes_with_marker(MARKER_VAR, marker)
        .iter()
        .filter(|p| p.ends_with(" worker"))
        .filter_map(|p| p.split(':').next()?.parse().ok())
        .collect()
}

/// Start `oslab run ARGS --dir DIR --json` with `marker`, SIGKILL its first worker once that
/// worker is measuring (its work directory exists in DIR) and `settle` has passed, and return
/// the run document oslab printed afterwards.
pub fn run_killing_the_worker(
    lab: &Lab,
    args: &[&str],
    dir: &Path,
    marker: &str,
    settle: Duration,
) -> Value {
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--dir", dir.to_str().unwrap(), "--json"]);
    let child = lab
        .command(&full)
        .env(MARKER_VAR, marker)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start oslab");
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        assert!(Instant::now() < deadline, "no worker appeared");
        let measuring = leftovers(dir).iter().any(|n| n.starts_with(".oslab-"));
        if let Some(pid) = workers(marker).first().filter(|_| measuring) {
            std::thread::sleep(settle);
            break *pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: signalling the worker this test started, found by its unique marker.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = child.wait_with_output().expect("oslab finishes");
    serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("a run document")
}

/// A child process killed and reaped when the test ends, whatever way it ends.
pub struct KillOnDrop(pub std::process::Child);

impl KillOnDrop {
    /// Ctrl-C: SIGINT to the process, then its exit status, which must come before
    /// `deadline`.
    pub fn interrupt(&mut self, deadline: Instant) -> std::process::ExitStatus {
        // SAFETY: signalling our own child process, which has not been reaped.
        let rc = unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(rc, 0, "kill(SIGINT)");
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "oslab did not end after SIGINT");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start oslab with `args` and `marker`, stdin and stdout closed and stderr as given, with
/// SIGINT at its default disposition: a test run from a background job inherits SIGINT
/// ignored, and the tests that send Ctrl-C need it to reach oslab.
pub fn spawn_interruptible(
    lab: &Lab,
    args: &[&str],
    marker: &str,
    stderr: std::process::Stdio,
) -> KillOnDrop {
    use std::os::unix::process::CommandExt;
    let mut cmd = lab.command(args);
    cmd.env(MARKER_VAR, marker)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr);
    // SAFETY: signal(2) is async-signal-safe, the only call made between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    KillOnDrop(cmd.spawn().expect("start oslab"))
}

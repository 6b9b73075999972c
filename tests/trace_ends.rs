//! What `oslab trace` starts ends with it, however it ends: the traced command and every
//! process it started are gone after SIGINT, SIGTERM or SIGHUP to oslab alone (not to its
//! process group: a `kill PID` from another terminal), after `kill -9` of oslab, and when
//! the command itself ends and leaves a process running; no eBPF program stays loaded. And
//! `trace --json` keeps standard output for its document: the traced command's output goes
//! to standard error, or stays on standard output when the document goes to `-o FILE`.
//!
//! Each traced process is found by a marker in its command line (a `sleep` of a length no
//! other process asks for), so the check is by PID, not by counting.

// Signals and /proc: Unix's (tests/windows.rs runs on Windows).
#![cfg(target_os = "linux")]

mod common;

use std::process::{Child, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::*;

/// One traced command at a time: the eBPF check compares the programs loaded before and
/// after, which another trace of this file would disturb.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// The PIDs of the processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // A zombie has an empty command line: it has ended.
        if text.contains(marker) {
            pids.push(pid);
        }
    }
    pids
}

/// Whether process `pid` runs `sleep` (not oslab, whose command line holds the marker too).
fn is_sleep(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
}

/// Wait until `count` `sleep` processes with `marker` run (the traced command started them).
fn wait_for(marker: &str, count: usize, oslab: &mut Child) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pids: Vec<i32> = processes_with(marker)
            .into_iter()
            .filter(|&p| is_sleep(p))
            .collect();
        if pids.len() >= count {
            return pids;
        }
        if let Some(status) = oslab.try_wait().expect("poll oslab") {
            let mut err = String::new();
            if let Some(mut e) = oslab.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("oslab ended ({status}) before the traced command started: {err}");
        }
        assert!(
            Instant::now() < deadline,
            "the traced command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait until no process with `marker` is left; panics naming the survivors.
fn assert_gone(marker: &str, after: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            let described: Vec<String> = left
                .iter()
                .map(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .unwrap_or_else(|e| format!("{pid}: {e}"))
                })
                .collect();
            panic!(
                "after {after}, the traced processes {left:?} ({marker}) still run: {described:#?}"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The names of the eBPF programs loaded now (`bpftool prog list`); `None` where bpftool is
/// missing outside CI.
fn bpf_programs() -> Option<Vec<String>> {
    match std::process::Command::new("bpftool")
        .args(["prog", "list", "--json"])
        .output()
    {
        Ok(out) if out.status.success() => {
            let doc: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("bpftool prints JSON");
            Some(
                doc.as_array()
                    .expect("a list of programs")
                    .iter()
                    .map(|p| format!("{} {}", p["id"], p["name"].as_str().unwrap_or("")))
                    .collect(),
            )
        }
        other => {
            assert!(
                !in_ci(),
                "CI=true and bpftool cannot list programs ({other:?}): .ci/install-tracing \
                 installs it"
            );
            None
        }
    }
}

/// No eBPF program is loaded now that was not `before` (the kernel frees a program a moment
/// after the last descriptor of it closes: waited for, up to a deadline).
fn assert_no_new_programs(before: Option<Vec<String>>, after: &str) {
    let Some(before) = before else { return };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = bpf_programs().unwrap_or_default();
        let new: Vec<&String> = now.iter().filter(|p| !before.contains(p)).collect();
        if new.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "eBPF programs still loaded after {after}: {new:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether this machine lets oslab trace (it does in CI, outside emulation); checked with a
/// short command, so a refusal is seen before anything is left running.
fn can_trace(lab: &Lab) -> bool {
    let out = lab.oslab(&["trace", "--json", "--", "/bin/true"]);
    if out.code == Some(2) && out.stderr.contains("cannot trace here") {
        assert!(
            !in_ci() || unsupported_under_emulation("tracing").is_some(),
            "CI=true, and tracing is refused\n{out}"
        );
        return false;
    }
    out.assert_code(0);
    true
}

/// This test's turn and a lab, where this machine lets oslab trace.
fn traceable() -> Option<(MutexGuard<'static, ()>, Lab)> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::new();
    can_trace(&lab).then_some((one, lab))
}

/// `oslab trace -- sh -c '…'`: a shell that starts a background `sleep MARKER` and waits in
/// a foreground one, so the traced tree has a grandchild the direct child did not exec into.
fn start_tree(lab: &Lab, marker: &str) -> Child {
    let script = format!("sleep {marker} & sleep {marker}; wait");
    lab.command(&["trace", "--", "/bin/sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start oslab trace")
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: signalling the oslab this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

#[test]
fn a_signalled_trace_ends_the_traced_tree_and_says_so() {
    let Some((_one, lab)) = traceable() else {
        return;
    };
    let before = bpf_programs();
    for (sig, name, marker) in [
        (libc::SIGINT, "SIGINT", "120.0101"),
        (libc::SIGTERM, "SIGTERM", "120.0102"),
        (libc::SIGHUP, "SIGHUP", "120.0103"),
    ] {
        let mut oslab = start_tree(&lab, marker);
        let pids = wait_for(marker, 2, &mut oslab);
        signal(oslab.id(), sig);
        let out = oslab.wait_with_output().expect("wait for oslab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(130),
            "{name}: oslab exits 130 as for Ctrl-C\n{stderr}"
        );
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: one line\n{stderr}");
        assert!(
            lines[0].starts_with("oslab: interrupted by ") && lines[0].contains(name),
            "{name}: the line names the signal\n{stderr}"
        );
        assert_gone(marker, &format!("{name} to oslab (traced {pids:?})"));
    }
    assert_no_new_programs(before, "a signalled oslab");
}

#[test]
fn a_killed_trace_leaves_no_traced_process_and_no_ebpf_program() {
    let Some((_one, lab)) = traceable() else {
        return;
    };
    let before = bpf_programs();
    // The command oslab execs into directly, and a tree with a grandchild.
    let marker = "120.0201";
    let mut direct = lab
        .command(&["trace", "--", "/bin/sleep", marker])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start oslab trace");
    let pids = wait_for(marker, 1, &mut direct);
    direct.kill().expect("SIGKILL oslab");
    direct.wait().expect("reap oslab");
    assert_gone(marker, &format!("kill -9 of oslab (traced {pids:?})"));

    let marker = "120.0202";
    let mut tree = start_tree(&lab, marker);
    let pids = wait_for(marker, 2, &mut tree);
    tree.kill().expect("SIGKILL oslab");
    tree.wait().expect("reap oslab");
    assert_gone(marker, &format!("kill -9 of oslab (traced {pids:?})"));

    // Killed at once, at whatever moment of its start: holding the command, opening the
    // tracer, containing the tree, releasing it.
    for (round, marker) in ["120.0203", "120.0204", "120.0205"].into_iter().enumerate() {
        let mut tree = start_tree(&lab, marker);
        std::thread::sleep(Duration::from_millis(20 * round as u64));
        tree.kill().expect("SIGKILL oslab");
        tree.wait().expect("reap oslab");
        assert_gone(
            marker,
            &format!("kill -9 of oslab {} ms after its start", 20 * round),
        );
    }

    assert_no_new_programs(before, "a killed oslab");
}

/// A command that ends while a process it started in the background still runs: the trace
/// ends with the command, and so does that process (it was part of what was traced).
#[test]
fn what_a_traced_command_leaves_running_ends_with_the_trace() {
    let Some((_one, lab)) = traceable() else {
        return;
    };
    let marker = "120.0301";
    let script = format!("sleep {marker} & sleep 0.5");
    let out = lab.oslab(&["trace", "--json", "--", "/bin/sh", "-c", &script]);
    out.assert_code(0);
    out.json();
    assert!(
        out.stderr.contains("left 1 process running") && out.stderr.contains("killed"),
        "oslab says it killed what the command left running\n{out}"
    );
    assert_gone(marker, "the traced command's end");
}

/// `oslab trace OPTIONS -o FILE -- /bin/echo …`: the command's output stays on standard
/// output; returns what was written to `file`.
fn traced_to_file(lab: &Lab, file: &std::path::Path, options: &[&str]) -> String {
    let path = file.to_str().expect("a UTF-8 path");
    let mut args = vec!["trace"];
    args.extend_from_slice(options);
    args.extend_from_slice(&["-o", path, "--", "/bin/echo", "printed-by-the-command"]);
    let out = lab.oslab(&args);
    out.assert_code(0);
    assert_eq!(out.stdout, "printed-by-the-command\n", "{out}");
    std::fs::read_to_string(file).expect("the report was written")
}

/// `trace --json` on standard output: the traced program's output goes to standard error,
/// and the document alone to standard output.
#[test]
fn trace_json_keeps_stdout_for_the_document() {
    let Some((_one, lab)) = traceable() else {
        return;
    };
    let out = lab.oslab(&[
        "trace",
        "--json",
        "--",
        "/bin/echo",
        "printed-by-the-command",
    ]);
    out.assert_code(0);
    let doc = out.json();
    assert_eq!(doc["exit_code"], 0, "{out}");
    assert!(
        out.stderr.contains("printed-by-the-command"),
        "the command's output went to stderr\n{out}"
    );

    // With -o the document goes to the file and the command keeps standard output.
    let file = lab.dir().join("trace.json");
    let text = traced_to_file(&lab, &file, &["--json"]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(doc["exit_code"], 0);

    // The text tables to a file, too.
    let text = traced_to_file(&lab, &file, &[]);
    assert!(text.contains("write"), "{text}");

    // An unwritable -o is one line, before anything runs.
    let out = lab.oslab(&["trace", "-o", "/nonexistent/dir/t.json", "--", "/bin/true"]);
    out.assert_user_error(&["/nonexistent/dir"]);
}

/// The children of process `pid` now.
fn children_of(pid: u32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// Whether `pid` still runs (a zombie has ended).
fn runs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rfind(')')
            .is_some_and(|end| !s[end + 1..].trim_start().starts_with('Z'))
    })
}

/// `oslab profile` ends its worker with it: SIGTERM (exit 130, one line) and `kill -9`.
#[test]
fn a_signalled_or_killed_profile_leaves_no_worker() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::new();
    let probe = lab.oslab(&["profile", "syscall.getppid", "--quick", "--seconds", "0.05"]);
    if probe.code == Some(2) && probe.stderr.contains("cannot profile here") {
        assert!(
            !in_ci() || unsupported_under_emulation("sampling").is_some(),
            "CI=true, and profiling is refused\n{probe}"
        );
        return;
    }
    // Measuring commands take turns (`Lab::oslab` takes it for the probe above).
    let _turn = measuring_turn();
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let oslab = lab
            .command(&["profile", "syscall", "--seconds", "30", "-o"])
            .arg(lab.dir().join("flames"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start oslab profile");
        let deadline = Instant::now() + Duration::from_secs(60);
        let workers = loop {
            let workers = children_of(oslab.id());
            if !workers.is_empty() {
                break workers;
            }
            assert!(Instant::now() < deadline, "no worker started");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(300));
        signal(oslab.id(), sig);
        let out = oslab.wait_with_output().expect("wait for oslab");
        if sig == libc::SIGTERM {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(130), "{stderr}");
            assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while workers.iter().any(|&w| runs(w)) {
            assert!(
                Instant::now() < deadline,
                "workers {workers:?} still run after signal {sig} to oslab profile"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

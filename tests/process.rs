//! `oslab run process.*` end to end: every experiment of the family measures for real, is
//! `ok` with every expectation held, creates one task per operation where the `tasks`
//! tracepoint can be counted, and leaves nothing behind — no exec helper in the temporary
//! directory, no process outliving the run.
//!
//! No timing value is asserted. The tests pass without a PMU and without tracefs access
//! (the `tasks` counter is then unsupported and its check skipped), as root or not.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Lab, check_run_contract, counter_per_op, num, result};
use oslab::experiment::process::HELPER_DIR_PREFIX;
use serde_json::Value;

const QUICK: [&str; 3] = ["--quick", "--budget", "0.3"];

/// What one isolated `oslab run` did, and what the test saw while it ran.
struct Isolated {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The session oslab led: every process it started, however deep, stays in it.
    session: i32,
    /// An exec helper directory appeared in the private TMPDIR during the run.
    helper_seen: bool,
}

impl std::fmt::Display for Isolated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stdout = match serde_json::from_str::<Value>(&self.stdout) {
            Ok(doc) if doc["results"].is_array() => common::summary(&doc),
            _ => self.stdout.chars().take(4000).collect(),
        };
        write!(
            f,
            "--- exit {:?}\n--- stdout:\n{stdout}\n--- stderr:\n{}",
            self.code, self.stderr
        )
    }
}

/// Helper directories of the process family in `dir`.
fn helper_dirs(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(HELPER_DIR_PREFIX) {
            found.push(name);
        } else if name.starts_with(SCRATCH_PREFIX) {
            // The worker's scratch directory, where the helper is written first.
            found.extend(
                helper_dirs(&entry.path())
                    .into_iter()
                    .map(|h| format!("{name}/{h}")),
            );
            found.push(name);
        }
    }
    found
}

/// Prefix of the scratch directory the parent creates for every worker (src/runner.rs).
const SCRATCH_PREFIX: &str = "oslab-worker-";

/// Run `oslab run ARGS... --json` as the leader of a new session, with a private TMPDIR
/// (also its working directory) and a marker in its environment, watching TMPDIR for the
/// exec helper while it runs.
fn run_isolated(lab: &Lab, tmpdir: &Path, marker: &str, args: &[&str]) -> Isolated {
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.push("--json");
    let _turn = common::measuring_turn();
    let mut cmd = lab.command(&full);
    cmd.env(common::MARKER_VAR, marker)
        .env("TMPDIR", tmpdir)
        .current_dir(tmpdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid(2) is async-signal-safe, the only call made between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("start oslab");
    let session = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let limit = common::command_timeout();
    let deadline = Instant::now() + limit;
    let mut helper_seen = false;
    let output = loop {
        helper_seen |= !helper_dirs(tmpdir).is_empty();
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(output) => break output.expect("wait for oslab"),
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(_) => {
                // SAFETY: killing the process group of the session this test started.
                unsafe { libc::kill(-session, libc::SIGKILL) };
                panic!("oslab {full:?} did not finish within {limit:?}");
            }
        }
    };
    Isolated {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        session,
        helper_seen,
    }
}

/// Processes of session `sid`, as `pid state (comm)`: any process oslab started — the
/// worker, a child it forked, a program a child exec'd with an empty environment (which the
/// marker cannot find), a zombie — until it is reaped.
fn session_members(sid: i32) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command name: state, ppid, pgrp, session (proc(5) fields 3–6).
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if fields.get(3).and_then(|s| s.parse::<i32>().ok()) == Some(sid) {
            let comm = stat.get(stat.find('(').unwrap_or(0)..=close).unwrap_or("");
            found.push(format!("{pid} {} {comm}", fields[0]));
        }
    }
    found
}

/// [`session_members`] after up to two seconds for what is already dying to be reaped.
fn session_members_after_grace(sid: i32) -> Vec<String> {
    let mut left = session_members(sid);
    for _ in 0..20 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = session_members(sid);
    }
    left
}

fn static_target_supported() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// Run one experiment of the family and check everything a smoke test can check without
/// asserting a time. Returns the result, or the reason when it is unsupported here.
fn check_experiment(experiment: &str, params: &[&str]) -> Result<Value, String> {
    let lab = Lab::new();
    let tmpdir = lab.dir().join("tmp");
    std::fs::create_dir(&tmpdir).expect("private TMPDIR");
    let marker = common::unique_marker("process");
    let mut args = vec![experiment];
    for p in params {
        args.extend_from_slice(&["--param", p]);
    }
    args.extend_from_slice(&QUICK);
    let out = run_isolated(&lab, &tmpdir, &marker, &args);

    // Nothing is left behind, whatever the outcome: no helper, no process of the run.
    assert_eq!(
        helper_dirs(&tmpdir),
        Vec::<String>::new(),
        "{experiment}: the exec helper's directory is removed\n{out}"
    );
    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(
        left.is_empty(),
        "{experiment}: processes outlived the run: {left:?}"
    );
    let left = session_members_after_grace(out.session);
    assert!(
        left.is_empty(),
        "{experiment}: processes of the run are left: {left:?}"
    );

    assert_eq!(out.code, Some(0), "{experiment}: exit code\n{out}");
    assert!(out.stderr.contains("stored as run"), "{out}");
    let doc: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document: {e}\n{out}"));
    check_run_contract(&doc);
    let r = result(&doc, experiment).clone();
    let status = r["status"].as_str().unwrap();
    let reason = r["reason"].as_str().unwrap_or("");
    if status == "unsupported" {
        assert!(
            !reason.is_empty(),
            "{experiment}: unsupported says why\n{out}"
        );
        return Err(reason.to_string());
    }
    assert_eq!(status, "ok", "{experiment}: status\n{out}");
    assert!(r["samples"].as_u64().unwrap() > 0, "{experiment}: {r:#}");
    assert!(
        reason.is_empty(),
        "{experiment}: an ok result has no reason: {reason}"
    );

    let validation = r["validation"].as_array().unwrap();
    assert!(
        validation.len() >= 3,
        "{experiment}: the family's expectations were checked (rusage-based ones always \
         can be): {validation:?}"
    );
    for v in validation {
        assert_eq!(v["ok"], true, "{experiment}: validation passes: {v}");
    }
    match counter_per_op(&r, "tasks") {
        Some(tasks) => assert!(
            (tasks - 1.0).abs() <= 0.05,
            "{experiment}: {tasks} tasks created per operation, expected 1 ± 0.05"
        ),
        None => {
            let status = &r["counters"]["tasks"]["status"];
            assert_ne!(status, "ok", "{experiment}: tasks counted but no figure");
        }
    }
    let majflt = num(&r["rusage"]["majflt"], "majflt");
    assert!(majflt < 0.01, "{experiment}: {majflt} major faults per op");
    if params.iter().all(|p| *p != "target=dynamic")
        && ["process.fork_exec", "process.posix_spawn"].contains(&experiment)
    {
        assert!(
            out.helper_seen,
            "{experiment}: the static helper was written under TMPDIR, where this test \
             checks it is removed\n{out}"
        );
    }
    Ok(r)
}

#[test]
fn fork_is_ok_and_its_children_fault_on_their_own_account() {
    let r = check_experiment("process.fork", &[]).expect("fork runs everywhere");
    assert_eq!(r["unit"], "ns/fork+wait");
    let children = &r["children_rusage"];
    assert!(
        children.is_object(),
        "the reaped children's rusage is reported apart: {r:#}"
    );
    let minflt = num(&children["minflt"], "children minflt");
    assert!(minflt >= 1.0, "{minflt} child faults per fork");
}

#[test]
fn vfork_is_ok_and_its_child_borrows_the_parents_memory() {
    let r = match check_experiment("process.vfork", &[]) {
        Ok(r) => r,
        Err(reason) => {
            assert!(!static_target_supported(), "vfork runs here, but: {reason}");
            return;
        }
    };
    assert_eq!(r["unit"], "ns/vfork+wait");
    let minflt = r["children_rusage"]["minflt"].as_f64().unwrap_or(0.0);
    if common::unsupported_under_emulation("vfork").is_some() {
        // qemu-user runs vfork as fork: the child faults on its own account.
        assert!(
            minflt >= 1.0,
            "{minflt} child faults per vfork under emulation"
        );
        common::assert_unjudged_under_emulation(&r);
        return;
    }
    assert!(minflt < 0.5, "{minflt} child faults per vfork");
}

#[test]
fn fork_exec_of_the_static_helper_is_ok() {
    let r = match check_experiment("process.fork_exec", &[]) {
        Ok(r) => r,
        // Refused only for an architecture without machine code for the helper, or a
        // system without any executable directory; the reason says which.
        Err(reason) => {
            assert!(
                !static_target_supported() || reason.contains("no directory"),
                "unexpected refusal: {reason}"
            );
            return;
        }
    };
    assert_eq!(r["params"]["target"], "static", "the default target");
    assert_eq!(r["unit"], "ns/fork+exec+wait");
    assert!(num(&r["children_rusage"]["minflt"], "children minflt") >= 1.0);
}

#[test]
fn fork_exec_of_a_dynamic_program_is_ok_or_says_why_not() {
    match check_experiment("process.fork_exec", &["target=dynamic"]) {
        Ok(r) => assert_eq!(r["params"]["target"], "dynamic"),
        // Only a system without a (dynamically linked) /bin/true may refuse, and says so.
        Err(reason) => assert!(reason.contains("/bin/true"), "{reason}"),
    }
}

#[test]
fn posix_spawn_is_ok_with_either_target() {
    match check_experiment("process.posix_spawn", &[]) {
        Ok(r) => {
            assert_eq!(r["unit"], "ns/spawn+wait");
            assert!(num(&r["children_rusage"]["minflt"], "children minflt") >= 1.0);
        }
        Err(reason) => assert!(
            !static_target_supported() || reason.contains("no directory"),
            "unexpected refusal: {reason}"
        ),
    }
    match check_experiment("process.posix_spawn", &["target=dynamic"]) {
        Ok(r) => assert_eq!(r["params"]["target"], "dynamic"),
        Err(reason) => assert!(reason.contains("/bin/true"), "{reason}"),
    }
}

#[test]
fn thread_is_ok_and_reaps_no_child_process() {
    let r = check_experiment("process.thread", &[]).expect("threads run everywhere");
    assert_eq!(r["unit"], "ns/create+join");
    assert!(
        r["children_rusage"].is_null(),
        "a joined thread is not a reaped child: {}",
        r["children_rusage"]
    );
}

#[test]
fn an_unknown_target_is_a_user_error() {
    // A bad target value is a user error before any worker starts.
    let lab = Lab::new();
    let out = lab.oslab(&["run", "process.fork_exec", "--param", "target=shell"]);
    out.assert_user_error(&["target", "static", "dynamic"]);
}

//! `oslab trace` end to end, with the real strace as the reference: on deterministic
//! commands (`/bin/true`, a shell that forks, dd making a known number of reads and writes)
//! every system call strace counts, oslab counts the same number of times. Where the kernel
//! refuses the tracepoints oslab must say so in one line; under `CI=true` a refusal, or a
//! missing strace, fails the test, except under user-mode emulation (qemu-user implements
//! neither bpf nor perf_event_open), where the one line must say that. `trace --experiment`: the measured loops of getppid,
//! open+close and a pipe ping-pong make exactly the calls they claim, per op, the partner's
//! included.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::*;
use serde_json::Value;

fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// How oslab traces: counting in the kernel (eBPF), or a record per call (`--records`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Backend {
    Ebpf,
    Records,
}

const BACKENDS: [Backend; 2] = [Backend::Ebpf, Backend::Records];

/// `oslab trace --json -- COMMAND`; `None` (the refusal checked) where tracing is refused
/// outside CI. Under `CI=true` the eBPF backend must count in the kernel, not fall back.
fn oslab_trace(lab: &Lab, backend: Backend, command: &[&str]) -> Option<Value> {
    let mut args = vec!["trace", "--json"];
    if backend == Backend::Records {
        args.push("--records");
    }
    args.push("--");
    args.extend_from_slice(command);
    let doc = traced_or_refused(lab.oslab(&args), 0)?;
    assert_backend(&doc, backend);
    Some(doc)
}

/// The JSON document of a trace that exited with `code`; `None` (the one-line refusal
/// checked) where this kernel refuses tracing outside CI, or under emulation.
fn traced_or_refused(out: Out, code: i32) -> Option<Value> {
    if refused(&out) {
        return None;
    }
    out.assert_code(code);
    Some(out.json())
}

/// Whether `oslab trace` refused to trace, checking its one line: under emulation it must
/// refuse and say why; otherwise a refusal fails under `CI=true`.
fn refused(out: &Out) -> bool {
    if unsupported_under_emulation("tracing").is_some() {
        out.assert_user_error(&["cannot trace here: unsupported under emulation", "bpf"]);
        return true;
    }
    if out.code == Some(2) && out.stderr.contains("cannot trace here") {
        assert!(!in_ci(), "CI=true, and tracing is refused\n{out}");
        out.assert_user_error(&["cannot trace here"]);
        return true;
    }
    false
}

/// The document says it was traced by `backend`: always with `--records`, and under
/// `CI=true` also by eBPF (a fallback there is a failure, not a skip).
fn assert_backend(doc: &Value, backend: Backend) {
    let want = match backend {
        Backend::Ebpf => "ebpf",
        Backend::Records => "perf_records",
    };
    if backend == Backend::Records || in_ci() {
        assert_eq!(doc["backend"], want, "{}", doc["method"]);
    }
}

/// Calls per syscall over every phase of an `oslab trace --json` document.
fn oslab_counts(doc: &Value) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for c in doc["calls"].as_array().expect("calls") {
        *counts
            .entry(c["syscall"].as_str().unwrap().to_string())
            .or_insert(0) += c["calls"].as_u64().unwrap();
    }
    counts
}

/// `strace -f -c` of `command`: calls per syscall; `None` without strace outside CI.
fn strace_counts(lab: &Lab, command: &[&str]) -> Option<BTreeMap<String, u64>> {
    let out_file = lab.dir().join("strace.txt");
    let status = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out_file)
        .args(command)
        .status();
    match status {
        Ok(s) => assert!(s.success(), "strace {command:?}: {s}"),
        Err(e) => {
            assert!(
                !in_ci(),
                "CI=true and strace cannot run ({e}): .ci/install-tracing installs it"
            );
            return None;
        }
    }
    let text = std::fs::read_to_string(&out_file).expect("strace's summary");
    Some(parse_strace(&text))
}

/// The rows of strace -c's table: `% time  seconds  usecs/call  calls  [errors]  syscall`.
fn parse_strace(text: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !(5..=6).contains(&fields.len()) || fields[0].parse::<f64>().is_err() {
            continue;
        }
        let name = fields[fields.len() - 1];
        if name == "total" {
            continue;
        }
        let calls: u64 = fields[3].parse().expect("a count of calls");
        counts.insert(name.to_string(), calls);
    }
    counts
}

/// Every call strace counts, oslab counts alike with either backend; oslab may list what
/// never returns and strace leaves out (`exit_group`, `exit`), and nothing else. The eBPF
/// backend's document is returned.
fn assert_same_counts(command: &[&str]) -> Option<Value> {
    let lab = Lab::new();
    let reference = strace_counts(&lab, command)?;
    let mut docs = Vec::new();
    for backend in BACKENDS {
        let doc = oslab_trace(&lab, backend, command)?;
        assert_counts_match(&doc, &reference, command);
        docs.push(doc);
    }
    assert_eq!(
        by_phase(&docs[0]),
        by_phase(&docs[1]),
        "both backends put each call of {command:?} in the same phase"
    );
    docs.into_iter().next()
}

/// Calls per (phase, syscall).
fn by_phase(doc: &Value) -> BTreeMap<(String, String), u64> {
    let mut counts = BTreeMap::new();
    for c in doc["calls"].as_array().expect("calls") {
        let key = (
            c["phase"].as_str().unwrap().to_string(),
            c["syscall"].as_str().unwrap().to_string(),
        );
        *counts.entry(key).or_insert(0) += c["calls"].as_u64().unwrap();
    }
    counts
}

fn assert_counts_match(doc: &Value, reference: &BTreeMap<String, u64>, command: &[&str]) {
    let ours = oslab_counts(doc);
    assert!(
        !reference.is_empty(),
        "strace counted nothing for {command:?}"
    );
    for (name, n) in reference {
        assert_eq!(
            ours.get(name),
            Some(n),
            "{name} of {command:?}\noslab: {ours:?}\nstrace: {reference:?}"
        );
    }
    for name in ours.keys() {
        assert!(
            reference.contains_key(name) || name == "exit_group" || name == "exit",
            "oslab counts {name}, strace does not: {ours:?} {reference:?}"
        );
    }
    assert_eq!(doc["lost"], 0, "no record lost: {}", doc["backend"]);
}

#[test]
fn true_is_traced_as_strace_counts_it_and_its_start_up_is_explained() {
    let Some(doc) = assert_same_counts(&["/bin/true"]) else {
        return;
    };
    assert_eq!(doc["exit_code"], 0);
    let calls = doc["calls"].as_array().unwrap();
    let arch_prctl = calls.iter().find(|c| c["syscall"] == "arch_prctl");
    if let Some(c) = arch_prctl {
        assert!(
            c["explanation"].as_str().unwrap().contains("FS base"),
            "{c}"
        );
    }
    let exec = calls
        .iter()
        .find(|c| c["syscall"] == "execve")
        .expect("execve");
    assert_eq!(exec["phase"], "exec");
    assert!(
        calls.iter().any(|c| c["phase"] == "loader"),
        "a dynamically linked /bin/true makes calls from the loader: {doc}"
    );
    let access = calls.iter().find(|c| c["syscall"] == "access");
    if let Some(c) = access {
        assert_eq!(c["errors"]["ENOENT"], 1, "no /etc/ld.so.preload: {c}");
    }
}

#[test]
fn a_shell_that_forks_is_followed_into_its_children() {
    let Some(doc) = assert_same_counts(&["/bin/sh", "-c", "/bin/true; /bin/true"]) else {
        return;
    };
    assert!(doc["processes"].as_u64().unwrap() >= 2, "{doc}");
}

#[test]
fn dd_makes_the_reads_and_writes_it_was_asked_for() {
    let command = [
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=500",
        "status=none",
    ];
    let Some(doc) = assert_same_counts(&command) else {
        return;
    };
    let counts = oslab_counts(&doc);
    assert!(
        counts["read"] >= 500 && counts["write"] >= 500,
        "{counts:?}"
    );
}

#[test]
fn the_text_form_has_phases_and_mistakes_are_one_line() {
    let lab = Lab::new();
    let out = lab.oslab(&["trace", "--", "/bin/true"]);
    if !refused(&out) {
        out.assert_code(0);
        assert!(out.stdout.contains("system calls in 1 process"), "{out}");
        assert!(out.stdout.contains("exit status 0"), "{out}");
        assert!(out.stdout.contains("dynamic loader"), "{out}");
    }
    // The path is tried when the held command is released, after the tracer opened.
    let missing = lab.oslab(&["trace", "--", "/no/such/program"]);
    if !refused(&missing) {
        missing.assert_user_error(&["cannot run /no/such/program", "No such file"]);
    }
    lab.oslab(&["trace", "--", "no-such-program-anywhere"])
        .assert_user_error(&["cannot run no-such-program-anywhere", "PATH"]);
    lab.oslab(&["trace"]).assert_code(2);
}

/// As an unprivileged user (root drops to `nobody` with setpriv), eBPF and tracepoint records
/// are both refused: one line says so and names the fix for each.
#[test]
fn an_unprivileged_user_is_told_in_one_line_why_neither_backend_may_trace() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return; // the refusal of the other tests is this user's
    }
    let lab = Lab::new();
    // A copy the other user may execute: the build tree may be closed to it.
    let exe = lab.dir().join("oslab");
    std::fs::copy(env!("CARGO_BIN_EXE_oslab"), &exe).expect("copy oslab");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(lab.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(&exe)
        .args(["trace", "--", "/bin/true"])
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            assert!(!in_ci(), "CI=true and setpriv cannot run: {e}");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let emulated = unsupported_under_emulation("tracing as nobody");
    if out.status.code() == Some(0) && emulated.is_none() {
        return; // this kernel lets every user trace (perf_event_paranoid -1, say)
    }
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot trace here"), "{stderr}");
    if emulated.is_some() {
        // No user may trace under qemu-user: the one reason is the emulation, not the user.
        assert!(stderr.contains("unsupported under emulation"), "{stderr}");
        return;
    }
    assert!(stderr.contains("CAP_BPF"), "{stderr}");
    assert!(stderr.contains("record every call"), "{stderr}");
}

/// `oslab trace --experiment NAME --json ARGS...` with each backend, expecting exit code
/// `code`; `None` (the refusal checked) where tracing is refused outside CI.
fn trace_experiment(lab: &Lab, name: &str, args: &[&str], code: i32) -> Option<Vec<Value>> {
    let mut docs = Vec::new();
    for backend in BACKENDS {
        let mut full = vec!["trace", "--experiment", name, "--json"];
        if backend == Backend::Records {
            full.push("--records");
        }
        full.extend_from_slice(args);
        let doc = traced_or_refused(lab.oslab(&full), code)?;
        assert_backend(&doc, backend);
        docs.push(doc);
    }
    Some(docs)
}

/// The calls per op of `syscall` made by `process` (`worker`, `worker_thread`, `partner`).
fn per_op(doc: &Value, syscall: &str, process: &str) -> Option<f64> {
    doc["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .find(|c| c["syscall"] == syscall && c["process"] == process)
        .map(|c| c["per_op"].as_f64().expect("per_op"))
}

#[test]
fn getppid_makes_one_getppid_per_op_and_nothing_else() {
    let lab = Lab::new();
    let Some(docs) = trace_experiment(&lab, "syscall.getppid", &["--ops", "5000"], 0) else {
        return;
    };
    for doc in docs {
        assert_eq!(doc["ops"], 5000);
        let getppid = per_op(&doc, "getppid", "worker").expect("getppid in the window");
        assert!((getppid - 1.0).abs() <= 0.01, "{getppid}: {doc}");
        for c in doc["calls"].as_array().unwrap() {
            assert!(
                c["syscall"] == "getppid" || c["per_op"].as_f64().unwrap() < 0.01,
                "nothing else at 0.01 per op or more: {c}"
            );
        }
        assert_eq!(doc["matches"], true, "{doc}");
        assert_eq!(doc["differences"], serde_json::json!([]));
        assert_eq!(doc["lost"], 0);
        assert_eq!(doc["syscalls_expectation"], "1 ± 0.05");
    }
}

#[test]
fn open_close_makes_one_openat_and_one_close_per_op() {
    let lab = Lab::new();
    let Some(docs) = trace_experiment(&lab, "syscall.open_close", &["--ops", "2000"], 0) else {
        return;
    };
    for doc in docs {
        for syscall in ["openat", "close"] {
            let rate = per_op(&doc, syscall, "worker").unwrap_or(0.0);
            assert!((rate - 1.0).abs() <= 0.01, "{syscall} {rate}: {doc}");
        }
        assert!(
            (doc["worker_per_op"].as_f64().unwrap() - 2.0).abs() <= 0.01,
            "{doc}"
        );
        assert_eq!(doc["matches"], true, "{doc}");
    }
}

#[test]
fn a_pipe_round_trip_shows_the_partners_calls_too() {
    let lab = Lab::new();
    let Some(docs) = trace_experiment(&lab, "ctxswitch.pipe", &["--ops", "2000"], 0) else {
        return;
    };
    for doc in docs {
        for process in ["worker", "partner"] {
            for syscall in ["write", "read"] {
                let rate = per_op(&doc, syscall, process).unwrap_or(0.0);
                assert!(
                    (rate - 1.0).abs() <= 0.01,
                    "{process} {syscall} {rate}: {doc}"
                );
            }
        }
        assert_eq!(doc["processes"], 2, "{doc}");
        assert_eq!(doc["matches"], true, "{doc}");
    }
}

#[test]
fn text_form_of_an_experiment_and_its_mistakes_are_one_line() {
    let lab = Lab::new();
    let out = lab.oslab(&["trace", "--experiment", "syscall.getpid", "--ops", "100"]);
    if !refused(&out) {
        out.assert_code(0);
        assert!(out.stdout.contains("verdict: matches"), "{out}");
        assert!(out.stdout.contains("claimed per op: getpid"), "{out}");
    }
    lab.oslab(&["trace", "--experiment", "syscall.nosuch"])
        .assert_user_error(&["unknown experiment", "syscall.nosuch", "oslab list"]);
    lab.oslab(&["trace", "--experiment", "syscall.getppid", "--ops", "0"])
        .assert_user_error(&["--ops 0", "from 1 to"]);
    lab.oslab(&[
        "trace",
        "--experiment",
        "syscall.getppid",
        "--param",
        "size=4",
    ])
    .assert_user_error(&["parameter 'size'", "entry"]);
    lab.oslab(&["trace", "--ops", "10", "--", "/bin/true"])
        .assert_user_error(&["--experiment"]);
    lab.oslab(&[
        "trace",
        "--experiment",
        "syscall.getppid",
        "--",
        "/bin/true",
    ])
    .assert_code(2);
}

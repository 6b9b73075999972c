//! Every way a worker can end, through `synthetic.spin` and friends: a crash, a hang past
//! the time limit, a failure with a message, an unsupported setup, a suspect result, and an
//! interrupted run. Each keeps the run stored and leaves no worker behind.
//!
//! Budgets are small (`--quick`, `--budget 0.3`); no test asserts a timing value except
//! ordering invariants with wide margins.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::{
    Lab, check_result_contract, check_run_contract, experiment_names, num, result, results,
};
use serde_json::Value;

const QUICK: [&str; 3] = ["--quick", "--budget", "0.3"];

fn args<'a>(targets: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = targets.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn synthetic_spin_median_is_at_least_the_busy_wait() {
    let lab = Lab::new();
    let doc = lab.run_json(&args(&["synthetic.spin", "--param", "ns=20000"], &QUICK), 0);
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "ok", "{r:#}");
    assert_eq!(r["params"]["ns"], "20000");
    let median = num(&r["median"], "median");
    assert!(
        median >= 20000.0,
        "a 20 µs busy-wait cannot take less: median {median} ns"
    );
    assert!(num(&r["min"], "min") >= 20000.0 * 0.99, "{r:#}");
}

/// A run of `synthetic.spin` in `mode`, whose worker ends without a result: exit code 3, the
/// run document keeps the contract, and its one result failed. The document and the reason.
fn failed_spin(lab: &Lab, mode: &str) -> (Value, String) {
    let doc = lab.run_json(
        &[
            "synthetic.spin",
            "--param",
            &format!("mode={mode}"),
            "--precision",
            "0.01",
            "--quick",
        ],
        3,
    );
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "failed", "{r:#}");
    let reason = r["reason"].as_str().unwrap().to_string();
    (doc, reason)
}

#[test]
fn synthetic_crash_is_a_failed_result_and_the_run_is_stored() {
    let lab = Lab::new();
    let (doc, reason) = failed_spin(&lab, "crash");
    assert!(
        reason.contains("SIGABRT"),
        "the reason names the signal: {reason}"
    );

    // Stored even though it failed.
    let show = lab.oslab(&["show", "--json"]);
    show.assert_code(0);
    assert_eq!(show.json(), doc, "`show` has the failed run");
    let list = lab.oslab(&["show", "--list"]);
    list.assert_code(0);
    let id = doc["run_id"].as_i64().unwrap().to_string();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.split_whitespace().next() == Some(id.as_str())),
        "{list}"
    );
}

#[test]
fn synthetic_crash_does_not_stop_the_run() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &[
            "synthetic.spin",
            "syscall.getppid",
            "-p",
            "mode=crash",
            "--precision",
            "0.01",
            "--quick",
        ],
        3,
    );
    check_run_contract(&doc);
    assert_eq!(result(&doc, "synthetic.spin")["status"], "failed");
    let getppid = result(&doc, "syscall.getppid");
    assert_eq!(getppid["status"], "ok", "{getppid:#}");
    assert!(getppid["samples"].as_u64().unwrap() > 0);
}

#[test]
fn synthetic_hang_times_out_and_leaves_no_worker() {
    let lab = Lab::new();
    let marker = common::unique_marker("hang");
    let out = lab.oslab_with(
        lab.db(),
        &[
            "run",
            "synthetic.spin",
            "--param",
            "mode=hang",
            "--timeout",
            "3",
            "--precision",
            "0.01",
            "--quick",
            "--json",
        ],
        &[(common::MARKER_VAR, &marker)],
    );
    out.assert_code(3);
    assert!(
        out.elapsed < Duration::from_secs(30),
        "a 3 s time-out ends the run well under 30 s (took {:.1?})",
        out.elapsed
    );
    let doc = out.json();
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "failed", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("timed out"), "{reason}");

    // The worker (which inherited the marker) was killed and reaped: nothing is left.
    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(
        left.is_empty(),
        "processes of the hung worker are left: {left:?}"
    );
}

#[test]
fn synthetic_fail_is_a_failed_result_with_its_message() {
    let lab = Lab::new();
    let (_, reason) = failed_spin(&lab, "fail");
    assert!(
        reason.contains("synthetic failure requested by mode=fail"),
        "{reason}"
    );
}

#[test]
fn synthetic_unsupported_is_not_a_failure() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &args(&["synthetic.spin", "--param", "mode=unsupported"], &QUICK),
        0,
    );
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "unsupported", "{r:#}");
    assert!(
        r["reason"].as_str().unwrap().contains("mode=unsupported"),
        "{r:#}"
    );
    assert_eq!(r["samples"], 0);
}

/// The number after "measured " in a validation detail.
fn measured_value(detail: &str) -> Option<f64> {
    let rest = &detail[detail.find("measured ")? + "measured ".len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[test]
fn synthetic_page_touching_is_suspect_with_the_measured_rate() {
    let lab = Lab::new();
    if common::unsupported_under_emulation("judging page faults").is_some() {
        // Measured and shown, not judged: ok, with the rate in the check's detail.
        let doc = lab.run_json(&args(&["synthetic.spin", "--param", "pages=1"], &QUICK), 0);
        check_run_contract(&doc);
        let r = result(&doc, "synthetic.spin");
        assert_eq!(r["status"], "ok", "{r:#}");
        common::assert_unjudged_under_emulation(r);
        let faults = r["validation"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| measured_value(v["detail"].as_str().unwrap()))
            .fold(f64::NAN, f64::max);
        assert!(faults >= 0.5, "the detail gives the measured rate: {r:#}");
        let minflt = num(&r["rusage"]["minflt"], "minflt");
        assert!(minflt >= 0.5, "{minflt} minor faults per op");
        return;
    }
    let doc = lab.run_json(&args(&["synthetic.spin", "--param", "pages=1"], &QUICK), 4);
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "suspect", "{r:#}");
    let failed: Vec<&Value> = r["validation"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["ok"] == false)
        .collect();
    assert!(!failed.is_empty(), "a failed validation entry: {r:#}");
    let faults = failed
        .iter()
        .filter_map(|v| measured_value(v["detail"].as_str().unwrap()))
        .fold(f64::NAN, f64::max);
    assert!(
        faults >= 0.5,
        "the detail gives the measured rate, about one fault per op: {failed:?}"
    );
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("measured"),
        "the reason gives the rate: {reason}"
    );
    // getrusage agrees: about one fresh page per operation.
    let minflt = num(&r["rusage"]["minflt"], "minflt");
    assert!(minflt >= 0.5, "{minflt} minor faults per op");
}

#[test]
fn every_result_of_a_mixed_run_keeps_the_contract() {
    // A run mixing ok, unsupported and measured results is shown the same by `show`.
    let lab = Lab::new();
    let doc = lab.run_json(
        &args(
            &[
                "synthetic.spin",
                "syscall.read",
                "--param",
                "mode=unsupported",
                "--param",
                "size=4K",
            ],
            &QUICK,
        ),
        0,
    );
    for r in results(&doc) {
        check_result_contract(r);
    }
    assert_eq!(result(&doc, "synthetic.spin")["status"], "unsupported");
    let read = result(&doc, "syscall.read");
    assert_eq!(read["status"], "ok", "{read:#}");
    assert_eq!(read["params"]["size"], "4K");
    let out = lab.oslab(&["show", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json(), doc);
}

/// Kills the child on drop, so a failing assertion does not leave `oslab` running.
#[test]
fn interrupted_run_keeps_what_it_measured_and_leaves_no_worker() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Instant;

    let lab = Lab::new();
    let marker = common::unique_marker("interrupt");
    let turn = common::measuring_turn();
    let mut child = common::spawn_interruptible(
        &lab,
        &[
            "run",
            "syscall.getppid",
            "synthetic.spin",
            "--param",
            "mode=hang",
            "--param",
            "entry=call",
            "--precision",
            "0.01",
            "--quick",
            "--timeout",
            "60",
        ],
        &marker,
        Stdio::piped(),
    );
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    // Wait until the first worker (getppid) has come and gone and the second (the hang) runs.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut first_worker: Option<i32> = None;
    loop {
        // Workers only: oslab also runs short-lived helpers (gzip for /proc/config.gz) that
        // inherit the marker.
        let workers = common::workers(&marker);
        match (&first_worker, workers.first()) {
            (None, Some(pid)) => first_worker = Some(*pid),
            (Some(first), Some(pid)) if pid != first => break,
            _ => {}
        }
        if Instant::now() >= deadline {
            let seen: Vec<String> = rx.try_iter().collect();
            panic!("the second worker never started (first {first_worker:?}); stderr: {seen:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));

    let status = child.interrupt(deadline);
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupted run exits with 130: {status:?}"
    );

    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(left.is_empty(), "the worker outlived oslab: {left:?}");
    drop(turn);

    // What was measured before the interruption is stored.
    let list = lab.oslab(&["show", "--list"]);
    list.assert_code(0);
    assert!(
        list.stdout.contains("interrupted"),
        "the run is listed as interrupted\n{list}"
    );
    let show = lab.oslab(&["show", "--json"]);
    show.assert_code(0);
    let doc = show.json();
    check_run_contract(&doc);
    assert!(doc["finished_at"].is_null(), "{}", doc["finished_at"]);
    assert_eq!(
        experiment_names(&doc),
        ["syscall.getppid", "synthetic.spin"]
    );
    assert_eq!(result(&doc, "syscall.getppid")["status"], "ok");
    // The experiment that was running is kept too, as failed, with what it had measured.
    let hung = result(&doc, "synthetic.spin");
    assert_eq!(hung["status"], "failed", "{hung:#}");
    let reason = hung["reason"].as_str().unwrap_or("");
    assert!(reason.contains("interrupted by SIGINT"), "{reason}");
    // The table marks it as partial wherever it shows a figure of it.
    let text = lab.oslab(&["show"]);
    text.assert_code(0);
    let row = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("synthetic.spin"))
        .unwrap_or_else(|| panic!("a row of the interrupted experiment\n{text}"));
    if hung["samples"].as_u64().unwrap_or(0) > 0 {
        assert!(row.contains("failed (partial)"), "{row}");
    }
    assert!(text.stdout.contains("this run was interrupted"), "{text}");
}

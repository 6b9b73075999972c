//! `oslab run` end to end: real workers, a private database, the JSON contract, `show`
//! reproducing a stored run, and every way a worker can end (through `synthetic.spin`).
//!
//! Budgets are small (`--quick`, `--budget 0.3`); no test asserts a timing value except
//! ordering invariants with wide margins.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{
    Lab, SYSCALL_EXPERIMENTS, check_result_contract, check_run_contract, counter_per_op,
    experiment_names, num, result, results,
};
use serde_json::Value;

const QUICK: [&str; 3] = ["--quick", "--budget", "0.3"];

fn args<'a>(targets: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = targets.to_vec();
    v.extend_from_slice(extra);
    v
}

// --- the syscall family ---

#[test]
fn syscall_family_json_contract_and_validation() {
    let lab = Lab::new();
    let out = lab.oslab(&["run", "syscall", "--quick", "--json"]);
    out.assert_code(0);
    // Diagnostics (progress, "stored as run") go to stderr: stdout parses on its own.
    let doc = out.json();
    assert!(out.stderr.contains("stored as run"), "{out}");
    check_run_contract(&doc);

    let mut names = experiment_names(&doc);
    names.dedup();
    assert_eq!(
        names, SYSCALL_EXPERIMENTS,
        "the syscall family, in registry order"
    );
    for r in results(&doc) {
        let name = r["experiment"].as_str().unwrap();
        assert_eq!(r["status"], "ok", "{name} is ok: {r:#}");
        assert!(r["samples"].as_u64().unwrap() > 0, "{name}");
        let validation = r["validation"].as_array().unwrap();
        assert!(!validation.is_empty(), "{name} checked its expectations");
        for v in validation {
            assert_eq!(v["ok"], true, "{name}: validation passes: {v}");
        }
        let rusage = &r["rusage"];
        let faults = num(&rusage["minflt"], "minflt") + num(&rusage["majflt"], "majflt");
        assert!(faults < 0.01, "{name}: {faults} page faults per op");
        let nvcsw = num(&rusage["nvcsw"], "nvcsw");
        assert!(nvcsw < 0.01, "{name}: {nvcsw} voluntary switches per op");
    }

    let call = num(&result(&doc, "syscall.function_call")["median"], "median");
    let getppid = num(&result(&doc, "syscall.getppid")["median"], "median");
    assert!(
        call < getppid,
        "a function call ({call} ns) is cheaper than getppid ({getppid} ns)"
    );

    check_both_paths(&doc);

    // Kernel entries per operation, where the tracepoint counter works here.
    for (name, expected) in [
        ("syscall.function_call", 0.0),
        ("syscall.vdso_clock_gettime", 0.0),
        ("syscall.getppid", 1.0),
        ("syscall.open_close", 2.0),
    ] {
        if let Some(per_op) = counter_per_op(result(&doc, name), "syscalls") {
            assert!(
                (per_op - expected).abs() <= 0.05,
                "{name}: {per_op} syscalls per op, expected {expected} ± 0.05"
            );
        }
    }
}

/// Every rung that enters the kernel was measured on the called and the inline path, one after
/// the other, making the same system calls, at costs of the same order.
fn check_both_paths(doc: &Value) {
    let all = results(doc);
    let with_entry: Vec<&Value> = all
        .iter()
        .filter(|r| !r["params"]["entry"].is_null())
        .collect();
    assert_eq!(with_entry.len(), 16, "eight rungs on two paths each");
    for pair in with_entry.chunks(2) {
        let name = pair[0]["experiment"].as_str().unwrap();
        assert_eq!(pair[1]["experiment"], name);
        assert_eq!(
            (
                pair[0]["params"]["entry"].as_str(),
                pair[1]["params"]["entry"].as_str()
            ),
            (Some("call"), Some("inline")),
            "{name}: the called path first"
        );
        let (call, inline) = (
            num(&pair[0]["median"], "median"),
            num(&pair[1]["median"], "median"),
        );
        // Wide margins: the gap is 0–60% here; a factor of 4 either way means a broken path.
        assert!(
            call / inline > 0.25 && call / inline < 4.0,
            "{name}: call {call} ns and inline {inline} ns are of the same order"
        );
        let counted: Vec<Option<f64>> =
            pair.iter().map(|r| counter_per_op(r, "syscalls")).collect();
        if let [Some(a), Some(b)] = counted[..] {
            assert!(
                (a - b).abs() <= 0.05,
                "{name}: the same calls on both paths ({a}, {b})"
            );
        }
    }
}

#[test]
fn show_reproduces_the_stored_run() {
    let lab = Lab::new();
    let tag = "it-show-tag";
    let run = lab.run_json(&["syscall", "--quick", "--tag", tag], 0);
    let run_id = run["run_id"].as_i64().expect("run_id");
    assert_eq!(run["tag"], tag);

    // The latest run, by id and by tag: the same document as `run --json` printed.
    let id_text = run_id.to_string();
    for which in [&[][..], &[id_text.as_str()], &[tag]] {
        let mut a = vec!["show"];
        a.extend_from_slice(which);
        a.push("--json");
        let out = lab.oslab(&a);
        out.assert_code(0);
        assert_eq!(
            out.json(),
            run,
            "`oslab {a:?}` reproduces the document of `run --json`"
        );
        assert!(out.stderr.is_empty(), "nothing on stderr\n{out}");
    }

    // The same run as text, by id and by tag.
    for which in [&[][..], &[id_text.as_str()], &[tag]] {
        let mut a = vec!["show"];
        a.extend_from_slice(which);
        let out = lab.oslab(&a);
        out.assert_code(0);
        assert!(out.stdout.contains("Cost ladder"), "{out}");
        for name in SYSCALL_EXPERIMENTS {
            assert!(
                out.stdout.contains(name),
                "`oslab {a:?}` shows {name}\n{out}"
            );
        }
    }

    // The list of runs has this one, with its tag.
    let out = lab.oslab(&["show", "--list"]);
    out.assert_code(0);
    assert!(
        out.stdout
            .lines()
            .any(|l| { l.split_whitespace().next() == Some(id_text.as_str()) && l.contains(tag) }),
        "`show --list` lists run {run_id} with tag {tag}\n{out}"
    );
}

#[test]
fn show_picks_the_latest_run_and_finds_older_ones_by_id_and_tag() {
    let lab = Lab::new();
    let first = lab.run_json(&args(&["syscall.getppid", "--tag", "first"], &QUICK), 0);
    let second = lab.run_json(
        &args(&["syscall.function_call", "--tag", "second"], &QUICK),
        0,
    );
    let (id1, id2) = (
        first["run_id"].as_i64().unwrap(),
        second["run_id"].as_i64().unwrap(),
    );
    assert!(id2 > id1, "run ids grow: {id1} then {id2}");

    let latest = lab.oslab(&["show", "--json"]);
    latest.assert_code(0);
    assert_eq!(latest.json(), second, "`show` is the latest run");
    let by_id = lab.oslab(&["show", &id1.to_string(), "--json"]);
    by_id.assert_code(0);
    assert_eq!(by_id.json(), first);
    let by_tag = lab.oslab(&["show", "first", "--json"]);
    by_tag.assert_code(0);
    assert_eq!(by_tag.json(), first);

    let list = lab.oslab(&["show", "--list"]);
    list.assert_code(0);
    for (id, tag) in [(id1, "first"), (id2, "second")] {
        let id = id.to_string();
        assert!(
            list.stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(id.as_str()) && l.contains(tag)),
            "run {id} ({tag}) listed\n{list}"
        );
    }
}

// --- the default suite, the clock, repetitions ---

#[test]
fn default_suite_runs_without_the_synthetic_experiment() {
    let lab = Lab::new();
    let list = lab.oslab(&["list", "--json"]);
    list.assert_code(0);
    let default: BTreeSet<String> = list
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["default_suite"] == true)
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!default.contains("synthetic.spin"));

    let doc = lab.run_json(&["--quick", "--budget", "0.2"], 0);
    check_run_contract(&doc);
    let names = experiment_names(&doc);
    assert!(
        !names.iter().any(|n| n == "synthetic.spin"),
        "the default suite leaves out synthetic.spin: {names:?}"
    );
    assert_eq!(
        names.iter().cloned().collect::<BTreeSet<_>>(),
        default,
        "the default suite is every experiment `list` marks as default"
    );
    // Each default experiment once per combination of the parameters it sweeps by default.
    let expected_runs: usize = list
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["default_suite"] == true)
        .map(|e| {
            e["params"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["sweep"].as_array().map(Vec::len))
                .product::<usize>()
        })
        .sum();
    assert_eq!(
        names.len(),
        expected_runs,
        "each default configuration once"
    );
    for name in SYSCALL_EXPERIMENTS {
        assert!(
            names.iter().any(|n| n == name),
            "{name} is in the default suite"
        );
    }
}

#[test]
fn monotonic_clock_is_recorded_as_clock_monotonic_raw() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &args(&["syscall.getppid", "--clock", "monotonic"], &QUICK),
        0,
    );
    check_run_contract(&doc);
    assert_eq!(
        doc["clock"]["source"], "clock_monotonic_raw",
        "{:#}",
        doc["clock"]
    );
    assert_eq!(result(&doc, "syscall.getppid")["status"], "ok");
}

#[test]
fn repeat_gives_one_result_per_experiment_and_repetition() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &args(
            &[
                "syscall.getppid",
                "syscall.function_call",
                "--repeat",
                "2",
                "--param",
                "entry=call",
            ],
            &QUICK,
        ),
        0,
    );
    check_run_contract(&doc);
    let names = experiment_names(&doc);
    assert_eq!(
        names,
        [
            "syscall.function_call",
            "syscall.getppid",
            "syscall.function_call",
            "syscall.getppid"
        ],
        "two results per experiment, interleaved in registry order"
    );
    for r in results(&doc) {
        assert_eq!(r["status"], "ok", "{r:#}");
    }
    // `show` has the four results as well.
    let out = lab.oslab(&["show", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json(), doc);
}

// --- synthetic.spin: every way a worker can end ---

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

#[test]
fn synthetic_crash_is_a_failed_result_and_the_run_is_stored() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &[
            "synthetic.spin",
            "--param",
            "mode=crash",
            "--precision",
            "0.01",
            "--quick",
        ],
        3,
    );
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "failed", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
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
    let doc = lab.run_json(
        &[
            "synthetic.spin",
            "--param",
            "mode=fail",
            "--precision",
            "0.01",
            "--quick",
        ],
        3,
    );
    check_run_contract(&doc);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "failed", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
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
}

/// `--param NAME=A,B` sweeps: one result per value, in the order given. A suite is refused
/// with a target or with a parameter that defines its configurations, and an unknown suite
/// names the known ones.
#[test]
fn a_parameter_list_sweeps_and_suites_are_checked() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &args(
            &[
                "syscall.read",
                "--param",
                "size=1,4K",
                "--param",
                "entry=call",
            ],
            &QUICK,
        ),
        0,
    );
    let sizes: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["params"]["size"].as_str().unwrap())
        .collect();
    assert_eq!(sizes, ["1", "4K"]);
    assert!(
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "ok")
    );

    lab.oslab(&["run", "--suite", "nosuch"])
        .assert_user_error(&["--suite nosuch", "mmap-lab"]);
    lab.oslab(&["run", "syscall", "--suite", "mmap-lab"])
        .assert_user_error(&["names its own experiments"]);
    lab.oslab(&["run", "--suite", "mmap-lab", "--param", "backing=malloc"])
        .assert_user_error(&["--param backing", "mmap-lab"]);
    lab.oslab(&["run", "syscall.read", "--param", "size=1,,4"])
        .assert_user_error(&["size"]);
}

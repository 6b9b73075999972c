//! Windows: the real `oslab.exe` (run natively on Windows, or under Wine by `.ci/windows`)
//! describes the machine, lists what runs there, measures the Windows experiments with their
//! proofs, stores the POSIX ones `unsupported` with their reason, reports a crash and a hang of its worker, and
//! shows and compares what it stored. Under Wine the figures are Wine's and no expectation is
//! judged (Wine counts no context switches or page faults): the results say so.
#![cfg(windows)]

mod common;

use common::*;
use serde_json::Value;

const WINDOWS_EXPERIMENTS: [&str; 9] = [
    "syscall.function_call",
    "syscall.create_file",
    "ctxswitch.yield",
    "ctxswitch.event",
    "process.thread",
    "process.create_process",
    "pagefault.virtual_alloc",
    "synthetic.spin",
    "ctxswitch.sleep",
];

/// Every expectation of `r` holds, or (under Wine) was measured and left unjudged.
fn assert_checked(r: &Value) {
    check_result_contract(r);
    assert_eq!(r["status"], "ok", "{r:#}");
    if emulation().is_some() {
        assert_unjudged_under_emulation(r);
        return;
    }
    for v in r["validation"].as_array().expect("validation") {
        assert_eq!(v["ok"], true, "{}: {v}", r["experiment"]);
    }
}

#[test]
fn env_describes_windows() {
    let lab = Lab::new();
    let doc = lab.oslab(&["env", "--json"]).assert_code(0).json();
    let env = &doc["environment"];
    assert_eq!(env["os"], "windows");
    assert!(num(&env["logical_cpus"], "logical_cpus") >= 1.0);
    assert!(num(&env["mem_total_bytes"], "mem_total_bytes") > 0.0);
    assert!(
        env["kernel_release"]
            .as_str()
            .is_some_and(|k| !k.is_empty())
    );
    assert_eq!(env["emulation"].as_str().map(str::to_string), emulation());
}

#[test]
fn list_names_what_runs_here() {
    let lab = Lab::new();
    let list = lab.oslab(&["list", "--json"]).assert_code(0).json();
    let runs_here: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .filter(|e| {
            e["os"]
                .as_array()
                .is_some_and(|os| os.iter().any(|o| o == "windows"))
        })
        .filter_map(|e| e["name"].as_str())
        .collect();
    for name in WINDOWS_EXPERIMENTS {
        assert!(runs_here.contains(&name), "{name} in {runs_here:?}");
    }
    assert!(!runs_here.contains(&"process.fork"));
}

#[test]
fn a_posix_experiment_is_unsupported_with_its_reason() {
    // As on every system: an experiment named where it does not run is stored `unsupported`,
    // with where it runs and its cell's reason (the equivalence table).
    let lab = Lab::new();
    let doc = lab.run_json(&["process.fork", "--quick"], 0);
    check_run_contract(&doc);
    let r = &results(&doc)[0];
    assert_eq!(r["experiment"], "process.fork", "{r:#}");
    assert_eq!(r["status"], "unsupported", "{r:#}");
    let reason = r["reason"].as_str().expect("a reason");
    assert!(reason.contains("not on windows"), "{reason}");
    assert!(reason.contains("no fork"), "{reason}");
    lab.oslab(&["run", "no.such"])
        .assert_user_error(&["unknown experiment"]);
}

#[test]
fn the_windows_experiments_run_with_their_proofs() {
    let lab = Lab::new();
    let mut args = vec!["--quick"];
    args.extend(WINDOWS_EXPERIMENTS);
    let doc = lab.run_json(&args, 0);
    check_run_contract(&doc);
    for r in results(&doc) {
        assert_checked(r);
    }
    let sleeps: Vec<&str> = results(&doc)
        .iter()
        .filter(|r| r["experiment"] == "ctxswitch.sleep")
        .filter_map(|r| r["params"]["ms"].as_str())
        .collect();
    assert_eq!(sleeps, ["0", "1"], "Sleep(0) and Sleep(1) by default");
    // A hand-over between two threads blocks and wakes each: far dearer than a call (a wide
    // margin, not a timing: 10× where Windows and Wine measure 1000× and more).
    let median = |name: &str| num(&result(&doc, name)["median"], name);
    assert!(median("ctxswitch.event") > 10.0 * median("syscall.function_call"));

    // With a competitor on the same CPU, each yield switches.
    let doc = lab.run_json(
        &[
            "--quick",
            "ctxswitch.yield",
            "--param",
            "competitor=same_cpu",
        ],
        0,
    );
    assert_checked(result(&doc, "ctxswitch.yield"));

    // What was stored is shown and compared.
    let show = lab.oslab(&["show", "1"]).assert_code(0).stdout.clone();
    assert!(show.contains("ctxswitch.event"), "{show}");
    lab.oslab(&["compare", "1", "2", "--json"])
        .assert_code(0)
        .json();
}

#[test]
fn a_crashed_or_hung_worker_is_a_failed_result() {
    let lab = Lab::new();
    let precise = ["--precision", "0.01", "--quick"];
    let doc = lab.run_json(
        &[&["synthetic.spin", "-p", "mode=crash"][..], &precise].concat(),
        3,
    );
    let reason = result(&doc, "synthetic.spin")["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("the worker was killed by"), "{reason}");
    let hang = ["synthetic.spin", "-p", "mode=hang", "--timeout", "4"];
    let doc = lab.run_json(&[&hang[..], &precise].concat(), 3);
    let r = result(&doc, "synthetic.spin");
    assert_eq!(r["status"], "failed");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("timed out"), "{reason}");
}

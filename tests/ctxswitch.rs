//! The `ctxswitch` and `ipc` families end to end: every experiment runs for real and passes
//! its expectations (the counters prove the switches happened), `cross` placement is
//! unsupported with its reason where one CPU is allowed, and no partner, competitor or load
//! process outlives a run, even when the worker is killed.
//!
//! Budgets are small (`--quick`, `--budget 0.3`). No timing value is asserted: only counts and
//! statuses, which hold with and without a PMU, as root or not.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]
// Its experiments declare Linux only (they use Linux's APIs or counters).
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{
    Lab, check_result_contract, check_run_contract, experiment_names, num, result, results,
};
use serde_json::Value;

const QUICK: [&str; 3] = ["--quick", "--budget", "0.3"];

const CTXSWITCH: [&str; 5] = [
    "ctxswitch.pipe",
    "ctxswitch.pipe_noswitch",
    "ctxswitch.futex",
    "ctxswitch.yield",
    "ctxswitch.nanosleep0",
];
const IPC: [&str; 2] = ["ipc.pipe_bandwidth", "ipc.unix_latency"];

fn args<'a>(targets: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = targets.to_vec();
    v.extend_from_slice(extra);
    v
}

/// The CPUs this test process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is the empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(rc, 0, "sched_getaffinity");
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// A measured result with every expectation held, and at least the checks in `checks`.
fn assert_ok_and_valid(r: &Value, checks: &[&str]) {
    let name = r["experiment"].as_str().unwrap();
    assert_eq!(r["status"], "ok", "{name} {} is ok: {r:#}", r["params"]);
    assert!(r["samples"].as_u64().unwrap() > 0, "{name}");
    let validation = r["validation"].as_array().unwrap();
    assert!(!validation.is_empty(), "{name} checked its expectations");
    for v in validation {
        assert_eq!(v["ok"], true, "{name}: validation passes: {v}");
    }
    for check in checks {
        assert!(
            validation
                .iter()
                .any(|v| v["check"].as_str().unwrap().starts_with(check)),
            "{name} checks `{check}`: {validation:#?}"
        );
    }
}

/// The sum of voluntary and involuntary switches per op of both sides, from the result's
/// rusage figures (a partner thread is already in the worker's).
fn switches_both_sides(r: &Value) -> f64 {
    let side = |v: &Value| {
        if v.is_null() {
            0.0
        } else {
            num(&v["nvcsw"], "nvcsw") + num(&v["nivcsw"], "nivcsw")
        }
    };
    side(&r["rusage"]) + side(&r["partner_rusage"])
}

#[test]
fn both_families_run_and_prove_their_switches() {
    let lab = Lab::new();
    let doc = lab.run_json(&args(&["ctxswitch", "ipc"], &QUICK), 0);
    check_run_contract(&doc);
    let expected: Vec<&str> = CTXSWITCH.iter().chain(IPC.iter()).copied().collect();
    assert_eq!(experiment_names(&doc), expected, "both families, in order");

    const SWITCHES: &str = "switches (nvcsw+nivcsw) of both sides per op";
    for name in ["ctxswitch.pipe", "ctxswitch.futex", "ipc.unix_latency"] {
        let r = result(&doc, name);
        assert_ok_and_valid(r, &[SWITCHES]);
        assert!(
            !r["partner_rusage"].is_null(),
            "{name}: the partner process's figures are read from /proc"
        );
        let switches = switches_both_sides(r);
        assert!(
            switches >= 1.75,
            "{name}: a round trip switches twice at least, measured {switches}"
        );
    }
    let pipe = result(&doc, "ctxswitch.pipe");
    assert_eq!(pipe["params"]["placement"], "same");
    assert_eq!(pipe["params"]["working_set_kb"], "0");

    let noswitch = result(&doc, "ctxswitch.pipe_noswitch");
    assert_ok_and_valid(noswitch, &["nvcsw per op"]);
    assert!(num(&noswitch["rusage"]["nvcsw"], "nvcsw") < 0.01);

    // Alone, sched_yield switches nowhere, and the result says so.
    let alone = result(&doc, "ctxswitch.yield");
    assert_eq!(alone["params"]["competitor"], "none");
    // nivcsw is no claim: another task's turn on the CPU is contamination (issue 31).
    assert_ok_and_valid(alone, &["nvcsw per op"]);
    if common::unsupported_under_emulation("judging switch counts").is_some() {
        // The emulator's own switches are in the counts: shown, not judged.
        common::assert_unjudged_under_emulation(alone);
    } else {
        let said = alone["validation"].as_array().unwrap().iter().any(|v| {
            v["detail"]
                .as_str()
                .unwrap()
                .contains("no switch took place")
        });
        assert!(said, "the result says no switch took place: {alone:#}");
    }

    let sleep = result(&doc, "ctxswitch.nanosleep0");
    assert_ok_and_valid(sleep, &["nvcsw per op"]);
    let bandwidth = result(&doc, "ipc.pipe_bandwidth");
    assert_ok_and_valid(bandwidth, &["page faults"]);
    assert_eq!(bandwidth["params"]["size"], "64K");
    assert!(
        bandwidth["unit"].as_str().unwrap().starts_with("ns/"),
        "time per transfer: {}",
        bandwidth["unit"]
    );

    // System calls per op of the worker thread alone, where the tracepoint works here.
    for (name, expected) in [
        ("ctxswitch.pipe", 2.0),
        ("ctxswitch.pipe_noswitch", 4.0),
        ("ctxswitch.yield", 1.0),
        ("ipc.unix_latency", 2.0),
        ("ipc.pipe_bandwidth", 1.0),
    ] {
        if let Some(per_op) = common::counter_per_op(result(&doc, name), "syscalls") {
            assert!(
                (per_op - expected).abs() <= 0.05,
                "{name}: {per_op} syscalls per op, expected {expected}"
            );
        }
    }
}

#[test]
fn parameter_variants_prove_their_switches() {
    let lab = Lab::new();
    // Each variant on its own run: `--param` applies to every selected experiment that has it.
    let variants: [(&str, &[&str], &str); 4] = [
        (
            "ctxswitch.yield",
            &["--param", "competitor=same_cpu"],
            "switches (nvcsw+nivcsw) of both sides per op",
        ),
        (
            "ctxswitch.futex",
            &["--param", "mode=threads"],
            "switches (nvcsw+nivcsw) of both sides per op",
        ),
        (
            "ctxswitch.pipe",
            &["--param", "working_set_kb=64"],
            "switches (nvcsw+nivcsw) of both sides per op",
        ),
        (
            "ctxswitch.nanosleep0",
            &["--param", "timer_slack_ns=1"],
            "syscalls per op",
        ),
    ];
    let emulated = common::emulation().is_some();
    for (name, params, check) in variants {
        let mut a = vec![name];
        a.extend_from_slice(params);
        a.extend_from_slice(&QUICK);
        let doc = if emulated && name == "ctxswitch.pipe" {
            // Under user-mode emulation the subtracted baseline (summing the working set
            // without switching) can cost more than the round trip it is taken from: the
            // harness then fails the result as no measurement (exit 3), and says why.
            let mut full = vec!["run"];
            full.extend_from_slice(&a);
            full.push("--json");
            let out = lab.oslab(&full);
            let doc = out.json();
            if out.code == Some(3) {
                let r = result(&doc, name);
                assert_eq!(r["status"], "failed", "{r:#}");
                let reason = r["reason"].as_str().unwrap_or("");
                assert!(reason.contains("not above 0"), "{reason}");
                continue;
            }
            out.assert_code(0);
            doc
        } else {
            lab.run_json(&a, 0)
        };
        check_run_contract(&doc);
        let r = result(&doc, name);
        // The syscall check exists only where the tracepoint works: require it only then.
        let needed: &[&str] =
            if check == "syscalls per op" && common::counter_per_op(r, "syscalls").is_none() {
                &[]
            } else {
                &[check]
            };
        assert_ok_and_valid(r, needed);
    }
}

#[test]
fn yield_with_a_competitor_switches_involuntarily() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &args(
            &["ctxswitch.yield", "--param", "competitor=same_cpu"],
            &QUICK,
        ),
        0,
    );
    let r = result(&doc, "ctxswitch.yield");
    assert_ok_and_valid(r, &["nivcsw per op"]);
    assert!(!r["partner_rusage"].is_null(), "the competitor is read too");
    let nivcsw = num(&r["rusage"]["nivcsw"], "nivcsw");
    let nvcsw = num(&r["rusage"]["nvcsw"], "nvcsw");
    assert!(
        nivcsw >= 0.9 && nvcsw < 0.05,
        "a yield's switch is involuntary: nvcsw {nvcsw}, nivcsw {nivcsw} per call"
    );
}

#[test]
fn cross_placement_runs_or_says_why_not() {
    let lab = Lab::new();
    let targets = [
        "ctxswitch.pipe",
        "ctxswitch.futex",
        "ipc.pipe_bandwidth",
        "ipc.unix_latency",
    ];
    let doc = lab.run_json(
        &args(
            &targets,
            &["--param", "placement=cross", "--quick", "--budget", "0.3"],
        ),
        0,
    );
    check_run_contract(&doc);
    let allowed = allowed_cpus();
    for name in targets {
        let r = result(&doc, name);
        assert_eq!(r["params"]["placement"], "cross");
        if allowed.len() >= 2 {
            assert_ok_and_valid(r, &[]);
            // Issue 31: a busy machine sized batches of one round trip, where one stray
            // fault made the result suspect; a hand-off batch holds 128 at least.
            let ops = r["calibration"]["ops_per_sample"].as_f64().unwrap();
            assert!(ops >= 128.0, "{name}: a batch of {ops}");
        } else {
            assert_eq!(r["status"], "unsupported", "{r:#}");
            assert!(r["reason"].as_str().unwrap().contains("CPU"), "{r:#}");
        }
    }
}

#[test]
fn cross_placement_with_one_allowed_cpu_is_unsupported_with_its_reason() {
    let lab = Lab::new();
    let cpu = allowed_cpus()[0];
    let mut cmd = lab.command(&[
        "run",
        "ctxswitch.pipe",
        "--param",
        "placement=cross",
        "--quick",
        "--budget",
        "0.3",
        "--json",
    ]);
    // As `taskset -c CPU oslab ...`: sched_setaffinity is async-signal-safe.
    // SAFETY: the closure only builds a cpu_set_t on the stack and calls sched_setaffinity.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let _turn = common::measuring_turn();
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .expect("start the oslab binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "unsupported is not a failure: {stderr}"
    );
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    check_run_contract(&doc);
    let r = result(&doc, "ctxswitch.pipe");
    assert_eq!(r["status"], "unsupported", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("CPU") && reason.contains("second CPU"),
        "the reason names the missing CPU: {reason}"
    );
    assert_eq!(r["samples"], 0);
}

#[test]
fn load_processes_are_gone_after_the_run() {
    let lab = Lab::new();
    let marker = common::unique_marker("ctxswitch-load");
    let out = lab.oslab_with(
        lab.db(),
        &[
            "run",
            "ctxswitch.pipe",
            "ctxswitch.pipe_noswitch",
            "--load",
            "cpu",
            "--quick",
            "--budget",
            "0.3",
            "--json",
        ],
        &[(common::MARKER_VAR, &marker)],
    );
    out.assert_code(0);
    let doc = out.json();
    check_run_contract(&doc);
    assert_eq!(doc["settings"]["load"], "cpu", "{}", doc["settings"]);
    for r in results(&doc) {
        check_result_contract(r);
        // A busy loop on the same CPU adds time, not switches of our two tasks.
        assert_ok_and_valid(r, &[]);
    }
    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(left.is_empty(), "load or partner processes left: {left:?}");
}

#[test]
fn a_timed_out_worker_leaves_no_partner_behind() {
    let lab = Lab::new();
    let marker = common::unique_marker("ctxswitch-timeout");
    let out = lab.oslab_with(
        lab.db(),
        &[
            "run",
            "ctxswitch.pipe",
            "--timeout",
            "1",
            "--budget",
            "30",
            "--precision",
            "0.001",
            "--json",
        ],
        &[(common::MARKER_VAR, &marker)],
    );
    out.assert_code(3);
    let doc = out.json();
    let r = result(&doc, "ctxswitch.pipe");
    assert_eq!(r["status"], "failed", "{r:#}");
    assert!(r["reason"].as_str().unwrap().contains("timed out"), "{r:#}");
    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(
        left.is_empty(),
        "processes of the killed worker are left: {left:?}"
    );
}

#[test]
fn a_worker_killed_by_a_signal_leaves_no_partner_behind() {
    let lab = Lab::new();
    let marker = common::unique_marker("ctxswitch-kill");
    let turn = common::measuring_turn();
    let mut cmd = lab.command(&[
        "run",
        "ctxswitch.futex",
        "--budget",
        "30",
        "--precision",
        "0.001",
        "--timeout",
        "60",
    ]);
    cmd.env(common::MARKER_VAR, &marker)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut parent = cmd.spawn().expect("start oslab");
    let parent_tag = format!("{}:", parent.id());

    // Wait until the worker and its partner both run: two marked processes besides oslab.
    let deadline = Instant::now() + Duration::from_secs(30);
    let worker = loop {
        let others: Vec<String> = common::processes_with_marker(common::MARKER_VAR, &marker)
            .into_iter()
            .filter(|p| !p.starts_with(&parent_tag))
            .collect();
        if others.len() >= 2 {
            // The worker is the one whose parent is oslab.
            let worker = others.iter().find_map(|p| {
                let pid: i32 = p.split(':').next()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let ppid: u32 = stat[stat.rfind(')')? + 2..]
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()?;
                (ppid == parent.id()).then_some(pid)
            });
            if let Some(w) = worker {
                break w;
            }
        }
        if Instant::now() >= deadline {
            let _ = parent.kill();
            let _ = parent.wait();
            panic!("the worker and its partner never both ran: {others:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: signalling a process of our own test run, identified just above.
    assert_eq!(unsafe { libc::kill(worker, libc::SIGKILL) }, 0);
    let status = parent.wait().expect("oslab ends");
    drop(turn);
    assert_eq!(status.code(), Some(3), "a killed worker is a failed result");
    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(
        left.is_empty(),
        "the partner outlived the killed worker: {left:?}"
    );
}

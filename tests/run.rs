//! `oslab run` end to end: real workers, a private database, the JSON contract, `show`
//! reproducing a stored run, the default suite, repetitions and parameter sweeps (every way
//! a worker can end is in worker_ends.rs).
//!
//! Budgets are small (`--quick`, `--budget 0.3`); no test asserts a timing value except
//! ordering invariants with wide margins.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;

use common::{
    Lab, SYSCALL_EXPERIMENTS, check_run_contract, counter_per_op, experiment_names, num, result,
    results,
};
use serde_json::{Value, json};

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
    // Of those, the ones that run on this system (Windows' yields are listed, not run).
    let runs_here = |e: &&serde_json::Value| {
        e["default_suite"] == true
            && e["os"]
                .as_array()
                .is_some_and(|os| os.iter().any(|o| o == std::env::consts::OS))
    };
    let default: BTreeSet<String> = list
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(runs_here)
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
        .filter(runs_here)
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
    // Only the last process of a configuration counts the probe events (supported or not,
    // their status is there); the pooled configuration has them.
    let probed: Vec<bool> = results(&doc)
        .iter()
        .map(|r| !r["counters"]["syscalls"].is_null())
        .collect();
    assert_eq!(probed, [false, false, true, true], "{probed:?}");
    for c in doc["configurations"].as_array().unwrap() {
        assert!(!c["counters"]["syscalls"].is_null(), "{c:#}");
    }
    // `show` has the four results as well.
    let out = lab.oslab(&["show", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json(), doc);
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
        .assert_user_error(&["--suite mmap-lab measures none of syscall", "mmap."]);
    lab.oslab(&["run", "--suite", "mmap-lab", "--param", "backing=malloc"])
        .assert_user_error(&["--param backing", "mmap-lab"]);
    lab.oslab(&["run", "syscall.read", "--param", "size=1,,4"])
        .assert_user_error(&["size"]);
}

/// Without --repeat, each configuration is measured in three worker processes, interleaved:
/// the JSON keeps each process's result and pools them per configuration, the settings say
/// how many, all on one CPU (the quietest, and why), and the pooled interval holds every
/// figure.
#[test]
fn a_default_run_measures_each_configuration_in_several_processes() {
    let lab = Lab::new();
    let out = lab.oslab_as_given(&[
        "run",
        "syscall.vdso_clock_gettime",
        "syscall.function_call",
        "--quick",
        "--budget",
        "0.3",
        "--json",
    ]);
    out.assert_code(0);
    let doc = out.json();
    check_run_contract(&doc);
    assert_eq!(doc["settings"]["processes"], 3);
    let names = experiment_names(&doc);
    assert_eq!(names.len(), 6);
    assert_ne!(names[0], names[1]);
    assert!(
        names[..2] == names[2..4] && names[2..4] == names[4..],
        "interleaved: each round runs every experiment once: {names:?}"
    );
    let configs = doc["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 2);
    for c in configs {
        assert_eq!(c["processes"], 3, "{c}");
        // A process taken wholly in a slow kernel phase of the host is listed apart.
        let medians = c["process_medians"].as_array().expect("process medians");
        let apart = c["left_out_process_medians"].as_array().expect("left out");
        assert_eq!(medians.len() + apart.len(), 3, "{c}");
        // Processes 2× apart (seen under qemu-user, where a slow phase of the emulator can
        // fall on one process) are unstable: no interval, and the medians shown instead.
        let median = num(&c["median"], "median");
        if c["unstable"] == true {
            assert!(c["ci_low"].is_null() && c["ci_high"].is_null(), "{c}");
        } else {
            let (lo, hi) = (num(&c["ci_low"], "ci_low"), num(&c["ci_high"], "ci_high"));
            assert!(lo <= median && median <= hi, "{c}");
        }
        assert!(num(&c["between_processes"], "between") >= 0.0);
        // Every sample carries the host's readings: a canary, a kernel canary on Unix, and on
        // Linux the steal.
        let host = &c["host"];
        assert!(num(&host["canary_median_ns"], "canary") > 0.0, "{c}");
        if cfg!(unix) {
            assert!(
                num(&host["kernel_canary_median_ns"], "null call") > 0.0,
                "{c}"
            );
            assert!(num(&host["kernel_canary_spread"], "apart") >= 0.0, "{c}");
            // The kernel phases: the fast level is the low decile of the readings, so it
            // lies at or below their median; a slow sample is one of those read.
            let phase = &host["kernel_phase"];
            let fast = num(&phase["fast_ns"], "fast level");
            assert!(fast > 0.0 && fast <= num(&host["kernel_canary_median_ns"], "call"));
            let read = phase["samples"].as_u64().expect("kernel_phase.samples");
            assert!(
                phase["slow_samples"].as_u64().is_some_and(|n| n <= read),
                "{c}"
            );
        }
        assert_eq!(host["samples"], c["samples"], "{c}");
        if cfg!(target_os = "linux") {
            assert!(host["stolen_samples"].is_u64(), "{c}");
            assert!(num(&host["steal_ns"], "steal") >= 0.0, "{c}");
        }
    }
    let turns = doc["settings"]["cpu_turns"].as_array().expect("cpu_turns");
    assert!(turns.is_empty(), "no CPUs in turn without --cpu-turns");
    let cpus: BTreeSet<String> = results(&doc)
        .iter()
        .map(|r| r["calibration"]["cpus"].to_string())
        .collect();
    assert_eq!(cpus.len(), 1, "one CPU for every process: {cpus:?}");
    // The table says how the figures were pooled, and where and why.
    let shown = lab.oslab(&["show"]);
    shown.assert_code(0);
    assert!(
        shown.stdout.contains("pools the 3 worker processes"),
        "{shown}"
    );
    assert!(
        shown.stdout.contains("\nHost\n\n  the hypervisor stole")
            || shown
                .stdout
                .contains("\nHost\n\n  stolen time is not read here"),
        "{shown}"
    );
    let choice = doc["settings"]["cpu_choice"].as_str();
    if cfg!(target_os = "linux") && allowed_cpu_ids().len() > 1 {
        let why = choice.expect("oslab chose the CPU and says why");
        assert!(
            why.starts_with("the fewest device interrupts since boot (")
                || why.ends_with("(no per-CPU interrupt counts here)"),
            "{why}"
        );
        let cpu = &doc["settings"]["cpus"][0];
        assert!(
            shown.stdout.contains(&format!("\nCPU {cpu}: {why}\n")),
            "{shown}"
        );
    }
}

/// `--cpu-turns` pins each configuration's processes to the CPUs in turn, two per CPU, and
/// tests whether the CPUs differ: the JSON has each process's CPU and the test, `show` the
/// CPU beside each process median and what the test found.
#[test]
fn cpu_turns_measure_whether_the_cpus_differ() {
    let [a, b] = match allowed_cpu_ids().as_slice() {
        [a, b, ..] => [*a, *b],
        _ => {
            eprintln!("fewer than two CPUs known here: nothing to take in turn");
            return;
        }
    };
    let lab = Lab::new();
    let turns = format!("{a},{b}");
    let out = lab.oslab_as_given(&[
        "run",
        "syscall.function_call",
        "--quick",
        "--budget",
        "0.4",
        "--cpu-turns",
        &turns,
        "--json",
    ]);
    out.assert_code(0);
    let doc = out.json();
    check_run_contract(&doc);
    assert_eq!(doc["settings"]["processes"], 4, "two per CPU");
    assert_eq!(doc["settings"]["cpu_turns"], json!([b, a]), "from the last");
    assert!(doc["settings"]["cpu_choice"].is_null());
    let config = &doc["configurations"][0];
    let cpus: BTreeSet<u64> = config["process_cpus"]
        .as_array()
        .expect("process_cpus")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(cpus, BTreeSet::from([a as u64, b as u64]), "{config}");
    let effect = &config["cpu_effect"];
    let p = num(&effect["p"], "p");
    assert!((0.0..=1.0).contains(&p), "{effect}");
    assert_eq!(effect["differ"], json!(p < 0.05));
    assert_eq!(effect["cpus"].as_array().map(Vec::len), Some(2), "{effect}");
    let shown = lab.oslab(&["show"]);
    shown.assert_code(0);
    for cpu in [a, b] {
        assert!(shown.stdout.contains(&format!("(CPU {cpu})")), "{shown}");
    }
    assert!(
        shown
            .stdout
            .contains(&format!("pinned to CPUs {b}, {a} in turn")),
        "{shown}"
    );
    let found = if p < 0.05 {
        "CPUs differ: ".to_string()
    } else {
        format!("no CPU effect: CPUs {a}, {b} do not differ measurably")
    };
    assert!(shown.stdout.contains(&found), "{shown}");
}

/// The CPUs this test process may run on, from /proc/self/status (Linux); empty elsewhere.
fn allowed_cpu_ids() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let Some(list) = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
    else {
        return Vec::new();
    };
    let mut cpus = Vec::new();
    for part in list.trim().split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(lo), Ok(hi)) = (lo.parse::<usize>(), hi.parse::<usize>()) {
            cpus.extend(lo..=hi);
        }
    }
    cpus
}

/// --repeat sets the number of processes, and --processes is the same option.
#[test]
fn repeat_and_processes_name_the_number_of_processes() {
    let lab = Lab::new();
    for flag in ["--repeat", "--processes"] {
        let out = lab.oslab_as_given(&[
            "run",
            "syscall.function_call",
            "--quick",
            "--budget",
            "0.2",
            flag,
            "2",
            "--json",
        ]);
        out.assert_code(0);
        let doc = out.json();
        assert_eq!(doc["settings"]["processes"], 2, "{flag}");
        assert_eq!(results(&doc).len(), 2, "{flag}");
    }
    lab.oslab_as_given(&["run", "syscall.function_call", "--repeat", "0"])
        .assert_user_error(&["--repeat", "1 to 1000"]);
}

#[test]
fn a_run_whose_stderr_reader_has_gone_finishes_and_is_stored() {
    let lab = Lab::new();
    let status = {
        let _turn = common::measuring_turn();
        let mut child = lab
            .command(&["run", "syscall.getppid", "--quick"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("oslab starts");
        // What `oslab run 2>&1 | head -1` leaves once head has exited: nobody reads stderr,
        // and every progress line written there fails with EPIPE.
        drop(child.stderr.take());
        child.wait().expect("oslab ends")
    };
    assert_eq!(
        status.code(),
        Some(0),
        "the run goes on without its progress lines: {status}"
    );
    let list = lab.oslab(&["show", "--list"]);
    list.assert_code(0);
    assert!(
        list.stdout
            .lines()
            .any(|l| { l.split_whitespace().next() == Some("1") && !l.contains("interrupted") }),
        "the run is stored whole, not as interrupted\n{list}"
    );
}

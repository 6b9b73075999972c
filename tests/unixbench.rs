//! `oslab run --suite unixbench --quick` end to end: every UnixBench test measures for real,
//! is `ok` with its expectations held, and the run prints each test in UnixBench's unit with
//! its index and the System Benchmarks Index Score; `oslab show --json` carries the same
//! figures under `unixbench`. No timing value is asserted.

// UnixBench's tests are POSIX programs (fork, pipes, /bin/sh).
#![cfg(unix)]

mod common;

use common::{Lab, num};
use oslab::report::peers::unixbench::TESTS;
use serde_json::Value;

/// The tests this system runs: execl is Linux-only (build.rs links its dynamic program for
/// Linux targets; under the aarch64 CI's qemu-user every image starts qemu anew, and runs).
fn runs_here(experiment: &str) -> bool {
    experiment != "unixbench.execl" || cfg!(target_os = "linux")
}

#[test]
fn the_quick_suite_prints_every_test_with_its_unit_index_and_the_score() {
    // `Lab::oslab` takes the measuring turn for a `run` itself.
    let lab = Lab::new();
    let out = lab.oslab(&["run", "--suite", "unixbench", "--quick"]);
    assert!(
        matches!(out.code, Some(0) | Some(4)),
        "oslab run --suite unixbench --quick did not run\n{out}"
    );
    let text = &out.stdout;
    assert!(
        text.contains("UnixBench (System Benchmarks Index"),
        "no UnixBench section\n{out}"
    );
    for t in TESTS.iter().filter(|t| runs_here(t.experiment())) {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(t.label()) && l.contains(t.unit.name()))
            .unwrap_or_else(|| panic!("no line for {} in {}\n{out}", t.label(), t.unit.name()));
        let baseline = format!("{:.1}", t.baseline);
        assert!(line.contains(&baseline), "{line}: baseline {baseline}");
        assert!(
            line.trim_end().ends_with("ok"),
            "{} is not ok: {line}\n{out}",
            t.label()
        );
    }
    let n = oslab::platform::cpu::allowed().len();
    if TESTS.iter().all(|t| runs_here(t.experiment())) {
        assert!(
            text.contains("System Benchmarks Index Score (1 copy): "),
            "no score line\n{out}"
        );
        // Like UnixBench's report, the suite measures one copy per CPU too.
        if n > 1 {
            let line = format!("System Benchmarks Index Score ({n} copies): ");
            assert!(text.contains(&line), "no {n}-copy score line\n{out}");
        }
    }

    let show = lab.oslab(&["show", "--json"]);
    show.assert_code(0);
    check_json(&show.json());
}

fn check_json(doc: &Value) {
    let groups = doc["unixbench"].as_array().expect("a unixbench array");
    let n = oslab::platform::cpu::allowed().len();
    let counts: Vec<u64> = groups
        .iter()
        .map(|g| g["copies"].as_u64().unwrap())
        .collect();
    let expected_counts: Vec<u64> = if n > 1 { vec![1, n as u64] } else { vec![1] };
    assert_eq!(
        counts, expected_counts,
        "1 copy and one per CPU: {groups:?}"
    );
    for g in groups {
        check_group(doc, g);
    }
}

fn check_group(doc: &Value, g: &Value) {
    let tests = g["tests"].as_array().unwrap();
    let expected: Vec<_> = TESTS.iter().filter(|t| runs_here(t.experiment())).collect();
    assert_eq!(tests.len(), expected.len(), "{tests:?}");
    for (t, want) in tests.iter().zip(&expected) {
        assert_eq!(t["test"], want.label());
        assert_eq!(t["unit"], want.unit.name());
        assert_eq!(t["status"], "ok", "{t}");
        let value = num(&t["value"], "value");
        let index = num(&t["index"], "index");
        assert!(value > 0.0 && index > 0.0, "{t}");
        assert!(
            (index - value / want.baseline * 10.0).abs() <= 1e-6 * index,
            "{t}"
        );
        assert!(num(&t["median_ns"], "median_ns") > 0.0);
        assert!(num(&t["median_value"], "median_value") > 0.0);
        // Sampled in UnixBench's passes (--quick: fewer and shorter), the lowest third
        // dropped.
        let quick = oslab::experiment::suites::Timing {
            quick: true,
            passes: None,
        };
        let passes = oslab::experiment::suites::unixbench_passes(want.experiment(), quick);
        assert_eq!(t["passes"], passes.name().as_str(), "{t}");
        let kept = passes.count - passes.count / 3;
        assert_eq!(t["passes_kept"], kept, "{t}");
    }
    // Each configuration of the suite measured, with its validation held.
    let configurations = doc["configurations"].as_array().unwrap();
    for c in configurations {
        let name = c["experiment"].as_str().unwrap();
        assert!(name.starts_with("unixbench."), "{name}");
        let failed: Vec<&Value> = c["validation"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["ok"] != true)
            .collect();
        assert!(failed.is_empty(), "{name}: {failed:?}");
    }
    if expected.len() == TESTS.len() {
        assert!(g["missing"].as_array().unwrap().is_empty());
        let score = num(&g["score"], "score");
        let indexes: Vec<f64> = tests.iter().map(|t| num(&t["index"], "index")).collect();
        let mean_log = indexes.iter().map(|i| i.ln()).sum::<f64>() / indexes.len() as f64;
        assert!(
            (score - mean_log.exp()).abs() <= 1e-6 * score,
            "{score} {indexes:?}"
        );
    } else {
        assert!(g["score"].is_null());
    }
}

/// Experiments named beside the suite pick its configurations of them, as UnixBench's `./Run
/// fstime` does: the three File Copy tests, each in timed passes (every pass starting as
/// fstime starts), and a partial score that says which tests are missing.
#[test]
fn naming_an_experiment_runs_only_the_suites_configurations_of_it() {
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "--suite",
        "unixbench",
        "unixbench.file_copy",
        "--copies",
        "1",
        "--quick",
    ]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("not computed, 9 of 12 tests missing"),
        "{out}"
    );
    let show = lab.oslab(&["show", "--json"]);
    show.assert_code(0);
    let doc = show.json();
    let results = doc["results"].as_array().expect("results");
    let sizes: Vec<&str> = results
        .iter()
        .map(|r| {
            assert_eq!(r["experiment"], "unixbench.file_copy", "{r}");
            assert!(r["params"]["passes"].is_string(), "timed passes: {r}");
            r["params"]["bufsize"].as_str().expect("bufsize")
        })
        .collect();
    assert_eq!(sizes, ["1024", "256", "4096"], "UnixBench's order");
}

/// fstime's `-m` is KiB of file: a source smaller than one buffer is refused in one line
/// before anything runs.
#[test]
fn a_file_copy_source_smaller_than_its_buffer_is_one_line() {
    let lab = Lab::new();
    lab.oslab_as_given(&[
        "run",
        "unixbench.file_copy",
        "--quick",
        "-p",
        "bufsize=4096",
        "-p",
        "maxblocks=2",
    ])
    .assert_user_error(&["bufsize 4096", "2 KiB", "--param maxblocks="]);
    assert!(!lab.db().exists(), "nothing was stored");
}

/// UnixBench's names of its tests pick one configuration each, in the suite's order,
/// `syscall` meaning UnixBench's test and not oslab's family of that name; outside the suite
/// such a name is one line that names `--suite unixbench`.
#[test]
fn unixbench_names_pick_one_test_each() {
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "--suite",
        "unixbench",
        "syscall",
        "fsdisk",
        "--copies",
        "1",
        "--quick",
    ]);
    out.assert_code(0);
    let show = lab.oslab(&["show", "--json"]);
    show.assert_code(0);
    let doc = show.json();
    let picked: Vec<String> = doc["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["experiment"].as_str().unwrap(),
                r["params"]["bufsize"]
            )
        })
        .collect();
    assert_eq!(
        picked,
        ["unixbench.file_copy \"4096\"", "unixbench.syscall null"],
        "File Copy 4096 and System Call Overhead, in UnixBench's order"
    );

    lab.oslab_as_given(&["run", "fsdisk", "--quick"])
        .assert_user_error(&["fsdisk", "File Copy 4096", "--suite unixbench"]);
    lab.oslab_as_given(&["run", "--suite", "unixbench", "syscall.getpid"])
        .assert_user_error(&["measures none of syscall.getpid", "fsdisk"]);
}

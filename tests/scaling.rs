//! `--copies` end to end: N copies of an experiment measured at once, one per CPU, as worker
//! processes or as threads of one worker; every copy's result passes its expectations, the
//! scaling table and JSON give per-copy and total throughput and the efficiency against one
//! copy, the scaling experiments leave nothing behind, and every mistake is one line.
//!
//! No timing value is asserted: counts, the table's shape and the ratios' definitions.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use common::{Lab, check_run_contract, results};
use serde_json::Value;

/// Every result of `doc` is `ok` (its expectations held, or not judged).
fn all_ok(doc: &Value) {
    for r in results(doc) {
        assert_eq!(r["status"], "ok", "{r:#}");
    }
}

/// The run's scaling curve named `name` (without copies) in mode `mode`.
fn curve<'a>(doc: &'a Value, name: &str, mode: &str) -> &'a Value {
    doc["scaling"]
        .as_array()
        .expect("scaling is an array")
        .iter()
        .find(|c| c["name"] == name && c["copy_mode"] == mode)
        .unwrap_or_else(|| panic!("no curve {name} ({mode}): {:#}", doc["scaling"]))
}

#[test]
fn page_faults_of_copies_in_processes_and_threads() {
    let lab = Lab::new();
    let quick = [
        "--quick", "--budget", "0.3", "-p", "size=8M", "-p", "thp=off",
    ];
    for mode in ["processes", "threads"] {
        let mut args = vec!["pagefault.anon", "--copies", "1,2", "--copy-mode", mode];
        args.extend_from_slice(&quick);
        let doc = lab.run_json(&args, 0);
        check_run_contract(&doc);
        all_ok(&doc);
        // One result per copy in processes (1 + 2), one per configuration in threads.
        let expected = if mode == "processes" { 3 } else { 2 };
        assert_eq!(results(&doc).len(), expected, "{mode}");
        for r in results(&doc) {
            assert_eq!(r["params"]["copy_mode"], mode);
            assert!(matches!(r["params"]["copies"].as_str(), Some("1" | "2")));
        }
        let c = curve(&doc, "pagefault.anon size=8M thp=off", mode);
        let points = c["points"].as_array().unwrap();
        assert_eq!(points.len(), 2, "{c:#}");
        assert_eq!(points[0]["copies"], 1);
        assert_eq!(points[0]["efficiency"], 1.0);
        let two = &points[1];
        let (per, total) = (
            two["per_copy_ops_per_s"].as_f64().unwrap(),
            two["total_ops_per_s"].as_f64().unwrap(),
        );
        assert!(
            per > 0.0 && (total - 2.0 * per).abs() < 1e-6 * total,
            "{two:#}"
        );
        let one = points[0]["total_ops_per_s"].as_f64().unwrap();
        let eff = two["efficiency"].as_f64().unwrap();
        assert!((eff - total / (2.0 * one)).abs() < 1e-9, "{two:#}");
        let oversubscribed = two["oversubscribed"].as_bool().unwrap();
        assert_eq!(oversubscribed, num_cpus() < 2);
    }
    let shown = lab.oslab(&["show", "--json"]);
    shown.assert_code(0);
    if let Some(r) = results(&shown.json()).last() {
        let facts = r["facts"].as_array().unwrap();
        assert!(
            facts.iter().any(|f| f["name"] == "copy_2_ns_per_op"),
            "a worker of two thread copies names its companion: {r:#}"
        );
    }
}

fn num_cpus() -> usize {
    oslab::platform::cpu::allowed().len()
}

#[test]
fn the_scaling_experiments_share_or_keep_their_directories_and_leave_nothing() {
    let lab = Lab::new();
    let dir = lab.dir().join("fs");
    std::fs::create_dir(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap();
    let quick = [
        "--quick", "--budget", "0.2", "--dir", dir_arg, "--copies", "1,2",
    ];
    // Under qemu-user two threads mapping and unmapping 128 MiB take 90 times one thread's
    // time (its exclusive sections stop every guest thread at each change of the memory
    // map): past the time limit. 4 MiB shows the same directories and curves.
    let small =
        common::unsupported_under_emulation("scale.mmap_munmap of 128 MiB in threads").is_some();
    let mmap = if small {
        "scale.mmap_munmap size=4M"
    } else {
        "scale.mmap_munmap"
    };
    for mode in ["processes", "threads"] {
        let mut args = vec!["scale.open_close", "scale.mmap_munmap", "--copy-mode", mode];
        args.extend_from_slice(&quick);
        if small {
            args.extend_from_slice(&["--param", "size=4M"]);
        }
        let doc = lab.run_json(&args, 0);
        all_ok(&doc);
        for name in [
            "scale.open_close dir=private",
            "scale.open_close dir=shared",
            mmap,
        ] {
            assert_eq!(
                curve(&doc, name, mode)["points"].as_array().unwrap().len(),
                2
            );
        }
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{mode}: left behind {left:?}");
    }
    let text = lab.oslab(&["show"]);
    text.assert_code(0);
    assert!(
        text.stdout.contains("Scaling (copies at once"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("efficiency"), "{}", text.stdout);
}

#[test]
fn fork_from_copies_and_pipe_pairs_pass_their_checks() {
    let lab = Lab::new();
    let doc = lab.run_json(
        &[
            "process.fork",
            "ctxswitch.pipe",
            "--copies",
            "2",
            "--quick",
            "--budget",
            "0.3",
        ],
        0,
    );
    all_ok(&doc);
    assert_eq!(results(&doc).len(), 4, "two copies of each");
    let text = lab.oslab(&["show"]).stdout;
    assert!(text.contains("×2 processes"), "{text}");
}

#[test]
fn each_mistake_is_one_line() {
    let lab = Lab::new();
    let cases: [(&[&str], &[&str]); 6] = [
        (&["--copies", "0"], &["--copies 0", "from 1 to"]),
        (&["--copies", "two"], &["not a number", "1,2,4,N"]),
        (&["--copies", "1,,2"], &["--copies"]),
        (&["--copy-mode", "threads"], &["--copies LIST"]),
        (
            &["--copies", "2", "--copy-mode", "fibres"],
            &["processes or threads"],
        ),
        (
            &["--copies", "2", "--copy-mode", "threads", "process.fork"],
            &["process.fork does not run as threads", "as processes"],
        ),
    ];
    for (args, needles) in cases {
        let mut full = vec!["run", "syscall.getppid"];
        full.extend_from_slice(args);
        lab.oslab(&full).assert_user_error(needles);
    }
    let both = lab.oslab(&["run", "--copies", "2", "--scale"]);
    assert_eq!(both.code, Some(2), "{both}");
}

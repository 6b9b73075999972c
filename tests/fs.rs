//! `oslab run fs.*` end to end: every experiment measures for real at a small size under a
//! temporary `--dir` and passes its expectations, or is `unsupported` with a reason where the
//! file system cannot do what the variant needs (O_DIRECT refused, a memory-backed file
//! system with no device to reach). A bad `--dir` is one error line and exit code 2. Nothing
//! is left in the directory after a run, a failed run, or a worker killed mid-run.
//!
//! No timing value is asserted. Passes as root and not (no cache dropping through
//! /proc/sys/vm/drop_caches: cold reads use posix_fadvise).

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Lab, check_run_contract, leftovers, measuring_turn, memory_backed, result, results};
use serde_json::Value;

const QUICK: [&str; 3] = ["--quick", "--budget", "0.3"];
const SMALL: [&str; 2] = ["--param", "size=4M"];

fn scratch(prefix: &str, under: Option<&Path>) -> tempfile::TempDir {
    let mut b = tempfile::Builder::new();
    b.prefix(prefix);
    match under {
        Some(dir) => b.tempdir_in(dir),
        None => b.tempdir(),
    }
    .expect("temporary directory")
}

fn run_in(lab: &Lab, dir: &Path, args: &[&str]) -> Value {
    let mut full: Vec<&str> = args.to_vec();
    let d = dir.to_str().unwrap();
    full.extend_from_slice(&["--dir", d]);
    full.extend_from_slice(&QUICK);
    let doc = lab.run_json_warm(&full);
    check_run_contract(&doc);
    assert!(
        leftovers(dir).is_empty(),
        "nothing left in --dir: {:?}",
        leftovers(dir)
    );
    doc
}

/// `ok` with every check held, or `unsupported` with a reason when `may_be_unsupported`.
fn assert_ok_or_unsupported(r: &Value, may_be_unsupported: bool) {
    let name = r["experiment"].as_str().unwrap();
    match r["status"].as_str().unwrap() {
        "ok" => {
            let failed: Vec<&Value> = r["validation"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v["ok"] != true)
                .collect();
            assert!(failed.is_empty(), "{name}: {failed:?}");
            assert!(
                !r["validation"].as_array().unwrap().is_empty(),
                "{name}: checks were made"
            );
        }
        "unsupported" if may_be_unsupported => {
            assert!(
                r["reason"].as_str().is_some_and(|s| !s.trim().is_empty()),
                "{name}: unsupported says why: {r:#}"
            );
        }
        other => panic!("{name}: status {other}: {}", r["reason"]),
    }
}

/// Whether the directory is on a memory-backed file system (then device variants are
/// unsupported by design).
#[test]
fn every_default_experiment_passes_its_checks() {
    let lab = Lab::new();
    let dir = scratch("oslab-fs-it-", None);
    let mut args = vec!["run", "fs"];
    args.extend_from_slice(&SMALL);
    let doc = run_in(&lab, dir.path(), &args[1..]);
    let rs = results(&doc);
    assert_eq!(rs.len(), 12, "{}", common::summary(&doc));
    // The run records what the directory is on: file system type, device, mount point.
    let mount = doc["settings"]["dir_mount"].as_str().unwrap_or("");
    assert!(
        mount.contains(" on ") && mount.contains(" at "),
        "dir_mount: {mount:?}"
    );
    let tmpfs = memory_backed(dir.path());
    for r in rs {
        // fs.fsync needs a device; everything else works on any file system.
        assert_ok_or_unsupported(r, tmpfs && r["experiment"] == "fs.fsync");
    }
}

#[test]
fn sync_variants_reach_the_device_or_say_why_not() {
    let lab = Lab::new();
    let dir = scratch("oslab-fs-it-", None);
    for sync in ["end", "each", "direct"] {
        let param = format!("sync={sync}");
        let doc = run_in(
            &lab,
            dir.path(),
            &[
                "fs.write",
                "fs.copy",
                "fs.random_write",
                "--param",
                "size=4M",
                "--param",
                &param,
            ],
        );
        for r in results(&doc) {
            // O_DIRECT may be refused; a memory-backed file system refuses all three.
            assert_ok_or_unsupported(r, sync == "direct" || memory_backed(dir.path()));
        }
    }
    // O_DIRECT with a buffer that is not a multiple of the logical block size.
    let doc = run_in(
        &lab,
        dir.path(),
        &[
            "fs.write",
            "--param",
            "size=1M",
            "--param",
            "sync=direct",
            "--param",
            "bufsize=100",
        ],
    );
    let r = result(&doc, "fs.write");
    assert_eq!(r["status"], "unsupported", "{r:#}");
}

#[test]
fn cold_reads_come_from_the_device() {
    let lab = Lab::new();
    let dir = scratch("oslab-fs-it-", None);
    let doc = run_in(
        &lab,
        dir.path(),
        &[
            "fs.read",
            "fs.random_read",
            "--param",
            "size=4M",
            "--param",
            "cache=cold",
        ],
    );
    for r in results(&doc) {
        assert_ok_or_unsupported(r, memory_backed(dir.path()));
    }
}

#[test]
fn a_memory_backed_directory_reaches_no_device() {
    let Some(dir) = common::shm_dir("oslab-fs-it-") else {
        return;
    };
    let lab = Lab::new();
    let doc = run_in(
        &lab,
        dir.path(),
        &[
            "fs.write",
            "fs.fsync",
            "--param",
            "size=1M",
            "--param",
            "sync=direct",
        ],
    );
    for name in ["fs.write", "fs.fsync"] {
        let r = result(&doc, name);
        assert_eq!(r["status"], "unsupported", "{r:#}");
        let reason = r["reason"].as_str().unwrap();
        assert!(reason.contains("no device"), "{reason}");
    }
    let doc = run_in(&lab, dir.path(), &["fs.write", "--param", "size=1M"]);
    assert_ok_or_unsupported(result(&doc, "fs.write"), false);
}

#[test]
fn a_bad_dir_is_one_error_line() {
    let lab = Lab::new();
    let dir = scratch("oslab-fs-it-", None);
    let missing = dir.path().join("missing");
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let cases: [(&Path, &[&str], &[&str]); 3] = [
        (&missing, &["size=4M"], &["does not exist"]),
        (&file, &["size=4M"], &["not a directory"]),
        (
            dir.path(),
            &["size=1T"],
            &["free", "--dir", "--param size="],
        ),
    ];
    for (d, params, needles) in cases {
        let out = lab.oslab(&[
            "run",
            "fs.write",
            "--param",
            params[0],
            "--dir",
            d.to_str().unwrap(),
            "--quick",
        ]);
        out.assert_user_error(needles);
    }
    assert_eq!(leftovers(dir.path()), ["file"], "nothing else created");
    // A directory nothing can be made in (procfs's root refuses every mkdir, even root's).
    if cfg!(target_os = "linux") {
        lab.oslab(&["run", "fs.write", "--dir", "/proc", "--quick"])
            .assert_user_error(&["--dir /proc is not writable", "pass a directory"]);
    }
}

#[test]
fn a_failed_run_leaves_nothing() {
    let lab = Lab::new();
    let dir = scratch("oslab-fs-it-", None);
    let d = dir.path().to_str().unwrap();
    let out = lab.oslab(&[
        "run",
        "fs.write",
        "--param",
        "size=4M",
        "--dir",
        d,
        "--timeout",
        "1",
        "--budget",
        "30",
        "--precision",
        "0.001",
        "--json",
    ]);
    let doc = out.json();
    assert_eq!(result(&doc, "fs.write")["status"], "failed", "{out}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn a_killed_worker_leaves_nothing() {
    let lab = Lab::new();
    let dir = scratch("oslab-fs-it-", None);
    let marker = common::unique_marker("fs");
    let _turn = measuring_turn();
    let doc = common::run_killing_the_worker(
        &lab,
        &["fs.write", "--param", "size=4M", "--budget", "30"],
        dir.path(),
        &marker,
        Duration::from_millis(300),
    );
    let r = result(&doc, "fs.write");
    assert_eq!(r["status"], "failed", "{r:#}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    assert!(common::marked_processes_after_grace(common::MARKER_VAR, &marker).is_empty());
}

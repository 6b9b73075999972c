//! `oslab run --suite filemicro --quick` for real, under a temporary `--dir`: every Filebench
//! personality measures and passes its checks (or, on a memory-backed file system, those
//! that need a device say why not), the summary prints Filebench's columns and units, and
//! `--json` carries the same figures under `filemicro`. No timing value is asserted.

#![cfg(unix)]

mod common;

use std::path::Path;

use common::{Lab, check_run_contract, leftovers, memory_backed, results};
use serde_json::Value;

/// The suite's configurations: Filebench's workload names, in the suite's order.
const PERSONALITIES: [&str; 16] = [
    "filemicro_create (createandalloc)",
    "filemicro_createfiles",
    "filemicro_createrand",
    "filemicro_delete",
    "openfiles",
    "filemicro_rread",
    "filemicro_rwrite",
    "filemicro_rwritedsync",
    "filemicro_rwritefsync",
    "filemicro_seqread",
    "filemicro_seqwrite",
    "filemicro_seqwriterand",
    "filemicro_seqwriterandvargam",
    "filemicro_seqwriterandvartab",
    "filemicro_statfile",
    "filemicro_writefsync",
];

/// The personalities that need a device (fsync, O_DSYNC, a read from the device).
const NEED_A_DEVICE: [&str; 6] = [
    "filemicro.createrand",
    "filemicro.rread",
    "filemicro.rwritedsync",
    "filemicro.rwritefsync",
    "filemicro.seqread",
    "filemicro.writefsync",
];

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oslab-filemicro-it-")
        .tempdir()
        .expect("temporary directory")
}

fn suite_args(dir: &Path) -> Vec<&str> {
    vec![
        "--suite",
        "filemicro",
        "--quick",
        "--dir",
        dir.to_str().unwrap(),
    ]
}

fn check_result(r: &Value, tmpfs: bool) {
    let name = r["experiment"].as_str().unwrap();
    match r["status"].as_str().unwrap() {
        "ok" => {
            let checks = r["validation"].as_array().unwrap();
            assert!(!checks.is_empty(), "{name}: checks were made");
            let failed: Vec<&Value> = checks.iter().filter(|v| v["ok"] != true).collect();
            assert!(failed.is_empty(), "{name}: {failed:?}");
        }
        "unsupported" if tmpfs && NEED_A_DEVICE.contains(&name) => {
            assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "{r:#}");
        }
        other => panic!("{name}: status {other}: {}", r["reason"]),
    }
}

#[test]
fn the_quick_suite_measures_every_personality() {
    let lab = Lab::new();
    let dir = scratch();
    let doc = lab.run_json_warm(&suite_args(dir.path()));
    check_run_contract(&doc);
    assert!(leftovers(dir.path()).is_empty(), "nothing left in --dir");
    let tmpfs = memory_backed(dir.path());

    let rs = results(&doc);
    assert_eq!(rs.len(), PERSONALITIES.len(), "{}", common::summary(&doc));
    for r in rs {
        check_result(r, tmpfs);
    }

    let summary = doc["filemicro"].as_array().expect("a filemicro summary");
    let labels: Vec<&str> = summary
        .iter()
        .map(|l| l["personality"].as_str().unwrap())
        .collect();
    assert_eq!(labels, PERSONALITIES);
    for l in summary {
        let name = l["experiment"].as_str().unwrap();
        if l["status"] != "ok" {
            continue;
        }
        let ms = l["ms_per_op"].as_f64().unwrap();
        let ops = l["ops_per_s"].as_f64().unwrap();
        let flowops = l["flowops_per_op"].as_f64().unwrap();
        let mb = l["mb_per_s"].as_f64().unwrap();
        assert!(ms > 0.0, "{name}");
        assert!(
            (ops * ms / 1000.0 / flowops - 1.0).abs() < 1e-9,
            "{name}: ops/s = Filebench's ops per op × 1000 / ms/op"
        );
        let expected = match name {
            "filemicro.createfiles" => 3.0..=3.0,
            "filemicro.openfiles" => 2.0..=2.0,
            _ => 1.0..=1.5,
        };
        assert!(expected.contains(&flowops), "{name}: {flowops} ops per op");
        assert!(mb >= 0.0, "{name}");
        let metadata = [
            "filemicro.delete",
            "filemicro.statfile",
            "filemicro.openfiles",
        ];
        assert_eq!(mb == 0.0, metadata.contains(&name), "{name}: MB/s {mb}");
        assert!(l["inblock_per_op"].as_f64().is_some(), "{name}");
        let written = l["oublock_per_op"].as_f64().unwrap();
        // The proof of what reached the disk: an fsync'd or O_DSYNC write dirtied blocks.
        if !tmpfs && ["filemicro.writefsync", "filemicro.rwritedsync"].contains(&name) {
            assert!(written > 0.0, "{name}: oublock per op {written}");
        }
        if name == "filemicro.seqread" {
            let read = l["inblock_per_op"].as_f64().unwrap();
            assert!(
                read > 0.0,
                "cached=false reads come from the device: {read}"
            );
        }
    }
}

#[test]
fn the_text_report_prints_the_filebench_summary() {
    let lab = Lab::new();
    let dir = scratch();
    let mut args = vec!["run"];
    args.extend(suite_args(dir.path()));
    let out = lab.run_warm(&args);
    let text = &out.stdout;
    let at = text
        .find("Filebench's filemicro workloads, measured by oslab")
        .unwrap_or_else(|| panic!("a summary section\n{out}"));
    let section = &text[at..];
    for column in [
        "personality",
        "ops/s",
        "MB/s",
        "ms/op",
        "rerun 95% (ms)",
        "rd blk/op",
        "wr blk/op",
        "status",
    ] {
        assert!(section.contains(column), "column {column}\n{section}");
    }
    for p in PERSONALITIES {
        assert!(
            section.lines().any(|l| l.trim_start().starts_with(p)),
            "{p} in\n{section}"
        );
    }
}

#[test]
fn too_little_room_is_one_line() {
    let lab = Lab::new();
    let dir = scratch();
    let out = lab.oslab(&[
        "run",
        "filemicro.rread",
        "--param",
        "filesize=4T",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    // fs's refusal in this family's names: the file's size is filesize here.
    let line = out.assert_user_error(&["needs", "free", "--dir", "--param filesize="]);
    assert!(!line.contains("--param size="), "{line}");
}

/// Issue 31: the kernel charges oublock when a write dirties a clean page, so over samples
/// that are not a whole number of fsync periods rwritefsync measured 0.349 and 0.848 blocks a
/// write for 2.0, and the suite exited 4 on an idle machine. The claim is now checked on the
/// blocks of one whole period, counted after sampling from a clean file.
#[test]
fn rwritefsync_claims_its_blocks_over_a_whole_period() {
    let lab = Lab::new();
    let dir = scratch();
    let d = dir.path().to_str().unwrap();
    let doc = lab.run_json(&["filemicro.rwritefsync", "--quick", "--dir", d], 0);
    check_run_contract(&doc);
    let tmpfs = memory_backed(dir.path());
    for r in results(&doc) {
        check_result(r, tmpfs);
        if r["status"] != "ok" {
            continue;
        }
        let fact = r["facts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "oublock_per_write_whole_period")
            .unwrap_or_else(|| panic!("the whole period's blocks are a fact: {r:#}"));
        let blocks = fact["value"].as_f64().unwrap();
        // 16 MiB, 8 KiB writes, 16384 writes a period: nearly every page dirtied, 2 a write.
        assert!(
            (1.49..=2.51).contains(&blocks),
            "{blocks} blocks a write: {r:#}"
        );
        let checks = r["validation"].as_array().unwrap();
        assert!(
            checks.iter().any(|c| c["check"]
                .as_str()
                .unwrap()
                .starts_with("oublock_per_write_whole_period")),
            "the claim is on the whole period: {checks:?}"
        );
    }
}

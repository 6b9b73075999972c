//! `oslab run mmap.access` end to end: every backing at 4 MiB, fresh and populated, measures
//! for real under a temporary `--dir`, passes its expectations and shows the faults a pass
//! must take (one per 4 KiB page on a fresh mapping, almost none once populated); the file
//! of a file backing never outlives the run, not even a killed worker.
//!
//! No timing value is asserted.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::{Lab, check_run_contract, leftovers, measuring_turn, num, result};
use serde_json::Value;

const EXPERIMENT: &str = "mmap.access";
const QUICK: [&str; 5] = ["--quick", "--budget", "0.3", "--param", "size=4M"];
const BACKINGS: [&str; 5] = [
    "malloc",
    "anon_private",
    "anon_shared",
    "file_private",
    "file_shared",
];

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oslab-mmap-it-")
        .tempdir()
        .expect("temporary directory")
}

fn page_size() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 { page as f64 } else { 4096.0 }
}

/// Line accesses that walk one page: each of its 64-byte lines, 16 times.
fn accesses_per_page() -> f64 {
    page_size() / 64.0 * 16.0
}

/// Run `mmap.access` with `params` in a fresh `--dir`; the result, which must be `ok` with
/// every check held (or `unsupported` with a reason, returned as `Err`). The directory must
/// be empty afterwards.
fn measure(params: &[&str]) -> Result<Value, String> {
    let lab = Lab::new();
    let dir = scratch();
    let mut args = vec![EXPERIMENT, "--dir", dir.path().to_str().unwrap()];
    for p in params {
        args.extend_from_slice(&["--param", p]);
    }
    args.extend_from_slice(&QUICK);
    let doc = lab.run_json(&args, 0);
    check_run_contract(&doc);
    assert!(
        leftovers(dir.path()).is_empty(),
        "nothing left in --dir: {:?}",
        leftovers(dir.path())
    );
    let r = result(&doc, EXPERIMENT).clone();
    assert_eq!(r["unit"], "ns/access", "{r:#}");
    let reason = r["reason"].as_str().unwrap_or("").to_string();
    if r["status"] == "unsupported" {
        assert!(!reason.is_empty(), "unsupported says why");
        return Err(reason);
    }
    assert_eq!(r["status"], "ok", "{params:?}: {r:#}");
    let validation = r["validation"].as_array().unwrap();
    assert!(!validation.is_empty(), "{params:?}: checks were made");
    for v in validation {
        assert_eq!(v["ok"], true, "{params:?}: {v}");
    }
    Ok(r)
}

/// Minor faults per page touched: every pattern touches every page once per pass.
fn faults_per_page(r: &Value) -> f64 {
    num(&r["rusage"]["minflt"], "minflt") * accesses_per_page()
}

fn majflt(r: &Value) -> f64 {
    num(&r["rusage"]["majflt"], "majflt")
}

#[test]
fn a_fresh_mapping_faults_once_per_page_for_every_backing() {
    for backing in BACKINGS {
        let param = format!("backing={backing}");
        let r = measure(&[param.as_str()]).unwrap_or_else(|why| panic!("{backing}: {why}"));
        assert_eq!(r["params"]["populate"], "false", "the default");
        let f = faults_per_page(&r);
        if backing == "file_shared" {
            // Linux 6.x maps a whole large folio of the page cache at one shared write
            // fault: at most one fault per page, at least one per 2 MiB.
            assert!(
                (0.99 / 512.0..=1.01).contains(&f),
                "{backing}: {f} faults per page"
            );
        } else {
            // malloc's first page holds its header, faulted before the walk: 1023 of 1024.
            assert!((f - 1.0).abs() <= 0.01, "{backing}: {f} faults per page");
        }
        if !backing.starts_with("file") {
            assert_eq!(
                majflt(&r),
                0.0,
                "{backing}: anonymous memory has no major fault"
            );
        }
    }
}

#[test]
fn a_populated_mapping_walks_without_faults() {
    for backing in BACKINGS {
        let param = format!("backing={backing}");
        let r = match measure(&[param.as_str(), "populate=true"]) {
            Ok(r) => r,
            Err(why) => {
                assert!(why.contains("MADV_POPULATE"), "{backing}: {why}");
                continue;
            }
        };
        let f = faults_per_page(&r);
        if common::unsupported_under_emulation("MAP_POPULATE").is_some() {
            // qemu-user ignores MAP_POPULATE: the walk still faults the pages in itself.
            assert!(
                f > 0.0,
                "{backing}: under emulation the populated pages still fault"
            );
            common::assert_unjudged_under_emulation(&r);
        } else if backing == "file_shared" {
            // Populated read-only where the file system tracks dirty pages (ext4: one
            // write-protect fault per page), writable on tmpfs (none).
            assert!(f <= 1.01, "{backing}: {f} faults per page");
        } else {
            assert!(f < 0.01, "{backing}: {f} faults per page after populate");
        }
    }
}

#[test]
fn msync_leaves_the_walk_to_dirty_the_whole_file_again() {
    match measure(&["backing=file_shared", "prepare=memset_msync"]) {
        Ok(r) => {
            let f = faults_per_page(&r);
            assert!((f - 1.0).abs() <= 0.01, "{f} write-protect faults per page");
            // size/512 blocks per pass: page/512 blocks per page.
            let blocks = num(&r["rusage"]["oublock"], "oublock") * accesses_per_page();
            assert!(
                (blocks / (page_size() / 512.0) - 1.0).abs() <= 0.1,
                "{blocks} blocks per page"
            );
        }
        Err(why) => assert!(why.contains("memory-backed"), "{why}"),
    }
}

#[test]
fn memset_msync_of_anonymous_memory_leaves_nothing_to_fault() {
    let r = measure(&["backing=anon_private", "prepare=memset_msync"]).expect("runs everywhere");
    let f = faults_per_page(&r);
    assert!(f < 0.01, "{f} faults per page after memset");
}

#[test]
fn random_order_and_cold_caches_touch_every_page_once() {
    match measure(&["pattern=random", "cold=true"]) {
        Ok(r) => {
            let f = faults_per_page(&r);
            assert!((f - 1.0).abs() <= 0.01, "{f} faults per page");
        }
        Err(why) => assert!(why.contains("cache"), "{why}"),
    }
}

#[test]
fn a_killed_worker_leaves_nothing() {
    let lab = Lab::new();
    let dir = scratch();
    let marker = common::unique_marker("mmap");
    let _turn = measuring_turn();
    let doc = common::run_killing_the_worker(
        &lab,
        &[
            EXPERIMENT,
            "--param",
            "backing=file_shared",
            "--param",
            "size=64M",
            "--budget",
            "30",
        ],
        dir.path(),
        &marker,
        Duration::from_millis(500),
    );
    assert_eq!(result(&doc, EXPERIMENT)["status"], "failed");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    assert!(common::marked_processes_after_grace(common::MARKER_VAR, &marker).is_empty());
}

#[test]
fn bad_parameters_are_user_errors() {
    let lab = Lab::new();
    let out = lab.oslab(&["run", EXPERIMENT, "--param", "backing=swap"]);
    out.assert_user_error(&["backing", "anon_private", "file_shared"]);
    let out = lab.oslab(&["run", EXPERIMENT, "--param", "size=512K"]);
    out.assert_user_error(&["size", "1M"]);
}

#[test]
fn a_region_too_large_for_memory_is_refused_before_running() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    let available_kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("MemAvailable");
    // 64 GiB is the largest size accepted; only a machine with less than 128 GiB available
    // refuses it (and a bigger one would measure it, so nothing is run there).
    if available_kb * 1024 / 2 >= 64 << 30 {
        return;
    }
    let lab = Lab::new();
    let out = lab.oslab(&["run", EXPERIMENT, "--param", "size=64G"]);
    out.assert_user_error(&["MemAvailable", "--param size="]);
}

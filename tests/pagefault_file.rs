//! `oslab run pagefault.file` and `pagefault.prefault_sweep` end to end, at small sizes:
//! - `pagefault.file` on the disk the crate is built on (a directory under cargo's target
//!   temporary directory, not /tmp, which may be tmpfs): every variant `ok`, with its fault
//!   invariants (at most one fault per page, exactly one for a private write, major faults
//!   and 8 blocks read per page when cold, none when warm), the work directory empty
//!   afterwards; on tmpfs, `cache=cold` is `unsupported` with the reason and `warm` works;
//! - `pagefault.prefault_sweep`: one result per batch size and order, each `ok` with one
//!   minor fault per page (at populate time) and none when the pages are touched.
//!
//! No timing value is asserted.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::path::Path;

use common::{Lab, check_run_contract, leftovers, memory_backed, num, results};
use serde_json::Value;

const QUICK: [&str; 3] = ["--quick", "--budget", "0.3"];

/// A directory on the file system cargo builds on.
fn disk_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oslab-pf-it-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temporary directory under the target directory")
}

/// `oslab run pagefault.file --dir DIR` with `params`; checks the contract and that nothing
/// is left in DIR.
fn run_file(lab: &Lab, dir: &Path, params: &[&str]) -> Value {
    let d = dir.to_str().unwrap();
    let mut args = vec!["pagefault.file", "--dir", d, "--param", "size=4M"];
    for p in params {
        args.extend_from_slice(&["--param", p]);
    }
    args.extend_from_slice(&QUICK);
    let doc = lab.run_json(&args, 0);
    check_run_contract(&doc);
    assert!(
        leftovers(dir).is_empty(),
        "nothing left in --dir: {:?}",
        leftovers(dir)
    );
    doc
}

fn rusage(r: &Value, field: &str) -> f64 {
    num(&r["rusage"][field], field)
}

fn label(r: &Value) -> String {
    format!("{} {}", r["experiment"], r["params"])
}

/// `ok`, with every check made held.
fn assert_ok(r: &Value) {
    assert_eq!(r["status"], "ok", "{}: {r:#}", label(r));
    let validation = r["validation"].as_array().unwrap();
    assert!(
        validation.len() >= 4,
        "{}: checked: {validation:?}",
        label(r)
    );
    for v in validation {
        assert_eq!(v["ok"], true, "{}: {v}", label(r));
    }
}

/// The check of `name` (its label starts with it) was made and held.
fn assert_checked(r: &Value, name: &str) {
    let found = r["validation"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["check"].as_str().unwrap().starts_with(name) && v["ok"] == true);
    assert!(found, "{}: check of {name} made and held: {r:#}", label(r));
}

#[test]
fn warm_file_faults_take_no_major_fault() {
    let lab = Lab::new();
    let dir = disk_dir();
    let doc = run_file(
        &lab,
        dir.path(),
        &["map=shared,private", "access=read,write"],
    );
    let rs = results(&doc);
    assert_eq!(rs.len(), 4, "{}", common::summary(&doc));
    for r in rs {
        assert_ok(r);
        assert_checked(r, "cached_share_at_start");
        let faults = rusage(r, "minflt") + rusage(r, "majflt");
        // The claim is checked on the median pass (assert_ok): none of its faults waits for
        // the device. Over the whole run a few may, and stay rare: on a loaded machine a
        // warm page may still be reclaimed and read back (one major fault in 9,728 pages in
        // CI, 2026-12-06, while other tests ran), and under qemu-user getrusage counts the
        // emulator's own page-ins too (once one in 93,000 pages).
        assert_checked(r, "majflt per op in the median sample");
        let majflt = rusage(r, "majflt");
        assert!(
            majflt <= 1e-3,
            "{}: {majflt} major faults per page",
            label(r)
        );
        assert!(
            (1.0 / 512.0..=1.01).contains(&faults),
            "{}: {faults} faults per page",
            label(r)
        );
        if r["params"]["map"] == "private" && r["params"]["access"] == "write" {
            assert!(
                (faults - 1.0).abs() <= 0.01,
                "a copy-on-write fault per page: {faults}"
            );
        }
        if r["params"]["map"] == "shared"
            && r["params"]["access"] == "write"
            && !memory_backed(dir.path())
        {
            assert_checked(r, "oublock_per_page");
        }
    }
}

#[test]
fn cold_file_faults_read_every_page_from_the_device() {
    let dir = disk_dir();
    let lab = Lab::new();
    let doc = run_file(
        &lab,
        dir.path(),
        &["cache=cold", "map=shared,private", "access=read,write"],
    );
    let rs = results(&doc);
    assert_eq!(rs.len(), 4, "{}", common::summary(&doc));
    for r in rs {
        if memory_backed(dir.path()) {
            assert_eq!(r["status"], "unsupported", "{r:#}");
            assert!(r["reason"].as_str().unwrap().contains("memory-backed"));
            continue;
        }
        assert_ok(r);
        assert!(rusage(r, "majflt") > 0.0, "{}: major faults", label(r));
        let inblock = rusage(r, "inblock");
        assert!(
            (inblock - 8.0).abs() <= 0.4,
            "{}: {inblock} blocks read per page",
            label(r)
        );
    }
}

#[test]
fn a_tmpfs_file_is_never_cold() {
    let Some(dir) = common::shm_dir("oslab-pf-it-") else {
        return;
    };
    let lab = Lab::new();
    let doc = run_file(&lab, dir.path(), &["cache=warm,cold"]);
    for r in results(&doc) {
        if r["params"]["cache"] == "cold" {
            assert_eq!(r["status"], "unsupported", "{r:#}");
            let reason = r["reason"].as_str().unwrap();
            assert!(
                reason.contains("tmpfs") && reason.contains("--dir"),
                "{reason}"
            );
        } else {
            assert_ok(r);
        }
    }
}

#[test]
fn a_file_too_large_for_the_directory_is_a_user_error() {
    let shm = Path::new("/dev/shm");
    let Ok(dir) = tempfile::Builder::new()
        .prefix("oslab-pf-it-")
        .tempdir_in(shm)
    else {
        return;
    };
    // The largest file the experiment accepts, 16 GiB, must not fit (the check wants twice).
    let c = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
    // SAFETY: all-zero is a valid statvfs to be overwritten.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid path and `st` a writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0
        || st.f_bavail as u64 * st.f_frsize as u64 >= 32 << 30
    {
        return;
    }
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "pagefault.file",
        "--dir",
        dir.path().to_str().unwrap(),
        "--param",
        "size=16G",
    ]);
    out.assert_user_error(&["--dir", "size"]);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn prefault_sweep_faults_at_populate_time_only() {
    let lab = Lab::new();
    let mut args = vec![
        "pagefault.prefault_sweep",
        "--param",
        "size=4M",
        "--param",
        "batch=1,64,512",
    ];
    args.extend_from_slice(&QUICK);
    let doc = lab.run_json(&args, 0);
    check_run_contract(&doc);
    let rs = results(&doc);
    let combos: Vec<(String, String)> = rs
        .iter()
        .map(|r| {
            (
                r["params"]["order"].as_str().unwrap().to_string(),
                r["params"]["batch"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = ["seq", "random"]
        .iter()
        .flat_map(|o| ["1", "64", "512"].map(|b| (o.to_string(), b.to_string())))
        .collect();
    assert_eq!(combos, expected, "each order's batch sizes come together");
    for r in rs {
        if r["status"] == "unsupported" {
            let reason = r["reason"].as_str().unwrap();
            assert!(reason.contains("MADV_POPULATE_WRITE"), "{reason}");
            continue;
        }
        assert_eq!(r["status"], "ok", "{r:#}");
        for v in r["validation"].as_array().unwrap() {
            assert_eq!(v["ok"], true, "{}: {v}", label(r));
        }
        assert_checked(r, "touch_faults_per_page");
        let minflt = rusage(r, "minflt");
        assert!(
            (minflt - 1.0).abs() <= 0.01,
            "{}: {minflt} faults per page",
            label(r)
        );
        assert_eq!(rusage(r, "majflt"), 0.0);
    }
}

//! `--load memory` end to end: the competitor and the worker run confined in a memory cgroup
//! sized from the experiment, the result records the limit, the swap and the memory pressure,
//! neither the competitor nor the cgroup ever goes past the limit, an anonymous experiment
//! that does not fit beside the competitor has the competitor OOM-killed (never the worker),
//! and after the run — finished or interrupted — no `oslab-*` cgroup and no `oslab load`
//! process is left.
//!
//! Where this machine has no memory cgroup oslab may use (no controller mounted, not root),
//! each test prints why and returns: that is `unsupported`, not a failure.
//!
//! No timing value is asserted.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]
// Its experiments declare Linux only (they use Linux's APIs or counters).
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Lab, check_run_contract, result};
use oslab::platform::cgroup;
use serde_json::Value;

/// Why `--load memory` cannot run here, if it cannot.
fn unsupported_here() -> Option<String> {
    match cgroup::hierarchy() {
        Ok(_) => None,
        Err(oslab::experiment::SetupError::Unsupported(reason))
        | Err(oslab::experiment::SetupError::Failed(reason)) => Some(reason),
    }
}

/// The load record of the only result of run `id`, from the export (the whole stored run).
fn load_details(lab: &Lab, id: &Value) -> Vec<(String, String)> {
    let out = lab.oslab(&["export", &id.to_string()]);
    out.assert_code(0);
    let doc = out.json();
    let load = &doc["run"]["results"][0]["load"];
    assert_eq!(load["kind"], "memory", "{load:#}");
    load["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|pair| {
            (
                pair[0].as_str().expect("name").to_string(),
                pair[1].as_str().expect("value").to_string(),
            )
        })
        .collect()
}

fn detail<'a>(details: &'a [(String, String)], name: &str) -> &'a str {
    details
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no `{name}` in the load record: {details:#?}"))
}

/// The exact byte count a size detail carries: `128 MiB (134217728 bytes) ...`.
fn bytes(value: &str) -> u64 {
    let (_, rest) = value
        .split_once('(')
        .unwrap_or_else(|| panic!("no byte count in {value:?}"));
    let number = rest
        .split_once(" bytes")
        .unwrap_or_else(|| panic!("no byte count in {value:?}"))
        .0;
    number
        .parse()
        .unwrap_or_else(|_| panic!("bad byte count in {value:?}"))
}

/// The competitor's pid in the `competitor` detail: `pid 1234: ...`.
fn competitor_pid(details: &[(String, String)]) -> u32 {
    let value = detail(details, "competitor");
    value
        .strip_prefix("pid ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {value:?}"))
}

/// Nothing of the load is left: the cgroup directory and every `oslab-<same pid>-*` sibling
/// are gone, and the competitor process is not running.
fn assert_cleaned_up(details: &[(String, String)]) {
    let cgroup = detail(details, "cgroup");
    let dir = PathBuf::from(cgroup.split(" (").next().expect("a path"));
    assert!(
        !dir.exists(),
        "the cgroup {} was left behind",
        dir.display()
    );
    let name = dir.file_name().and_then(|n| n.to_str()).expect("a name");
    let oslab_pid: u32 = name
        .strip_prefix(cgroup::CGROUP_PREFIX)
        .and_then(|rest| rest.split('-').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("cgroup name {name}"));
    let parent = dir.parent().expect("a parent");
    assert_eq!(cgroup::cgroups_of(parent, oslab_pid), Vec::<PathBuf>::new());
    assert!(
        !Path::new(&format!("/proc/{}", competitor_pid(details))).exists(),
        "the competitor is still running"
    );
}

/// The competitor and the cgroup stayed within the limit, and the record has the swap and
/// the memory pressure.
fn assert_within_limit(details: &[(String, String)]) -> u64 {
    let limit = bytes(detail(details, "memory limit"));
    let region = bytes(detail(details, "competitor"));
    assert!(
        region < limit,
        "the competitor's region {region} is under the limit {limit}"
    );
    let peak = bytes(detail(details, "cgroup peak usage"));
    assert!(peak <= limit, "cgroup peak {peak} <= limit {limit}");
    let competitor_peak = bytes(detail(details, "competitor peak RSS"));
    assert!(
        competitor_peak <= limit,
        "competitor peak RSS {competitor_peak} <= limit {limit}"
    );
    assert!(
        competitor_peak >= region / 2,
        "the competitor held its region: {competitor_peak} of {region}"
    );
    assert!(!detail(details, "swap").is_empty());
    let has_psi = details
        .iter()
        .any(|(n, _)| n.starts_with("memory pressure"));
    assert!(has_psi, "the record says what PSI showed: {details:#?}");
    limit
}

#[test]
fn memory_load_confines_the_competitor_and_leaves_nothing() {
    if let Some(reason) = unsupported_here() {
        eprintln!("skipped: --load memory cannot run here: {reason}");
        return;
    }
    let lab = Lab::new();
    let doc = lab.run_json(
        &[
            "pagefault.anon",
            "--quick",
            "--budget",
            "0.3",
            "--param",
            "size=32M",
            "--param",
            "thp=off",
            "--load",
            "memory",
        ],
        0,
    );
    check_run_contract(&doc);
    let r = result(&doc, "pagefault.anon");
    if r["status"] == "unsupported" {
        eprintln!("skipped: {}", r["reason"]);
        return;
    }
    assert_eq!(r["status"], "ok", "{r:#}");
    let details = load_details(&lab, &doc["run_id"]);
    let limit = assert_within_limit(&details);
    // 32 MiB plus the 64 MiB the worker is always left.
    assert_eq!(limit, 96 << 20, "{details:#?}");
    assert!(
        detail(&details, "competitor at the end").starts_with("alive"),
        "{details:#?}"
    );
    assert_cleaned_up(&details);
}

#[test]
fn an_anonymous_experiment_that_does_not_fit_has_the_competitor_oom_killed() {
    if let Some(reason) = unsupported_here() {
        eprintln!("skipped: --load memory cannot run here: {reason}");
        return;
    }
    if std::fs::read_to_string("/proc/meminfo").is_ok_and(|m| {
        !m.lines()
            .any(|l| l.starts_with("SwapTotal:") && l.ends_with(" 0 kB"))
    }) {
        eprintln!("skipped: this machine has swap, so the competitor may be paged out instead");
        return;
    }
    // mmap.access walks a fresh 64 MiB anonymous mapping per pass, all of it resident at
    // the end of the pass: with the competitor's 64 MiB it cannot fit in 128 MiB, and
    // anonymous memory has nowhere to go.
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "mmap.access",
        "--quick",
        "--budget",
        "0.3",
        "--param",
        "backing=anon_private",
        "--param",
        "size=64M",
        "--load",
        "memory",
        "--json",
    ]);
    // Natively the worker measures; under emulation it may be a victim too (below).
    if common::emulation().is_none() {
        out.assert_code(0);
    }
    let doc = out.json();
    let r = result(&doc, "mmap.access");
    if r["status"] == "unsupported" {
        eprintln!("skipped: {}", r["reason"]);
        return;
    }
    let details = load_details(&lab, &doc["run_id"]);
    assert_within_limit(&details);
    let end = detail(&details, "competitor at the end");
    assert!(end.starts_with("OOM-killed"), "{details:#?}");
    if let Some(why) = common::unsupported_under_emulation("the worker's own footprint") {
        // Under qemu-user the worker is the emulator, whose translation buffers are charged
        // to the cgroup too: once the competitor is gone it may not fit alone either. The
        // kills are recorded whichever process they took, and nothing is left.
        eprintln!("{why}: {}", detail(&details, "OOM kills in the cgroup"));
        assert_cleaned_up(&details);
        return;
    }
    // The worker was never the victim: it finished and measured.
    assert_eq!(r["status"], "ok", "{r:#}");
    // The competitor alone: a second kill would have been the worker's.
    assert_eq!(
        detail(&details, "OOM kills in the cgroup"),
        "1",
        "{details:#?}"
    );
    assert_cleaned_up(&details);
}

/// Kills the child on drop, so a failing assertion does not leave `oslab` running.
#[test]
fn ctrl_c_removes_the_cgroup_and_the_competitor() {
    use std::process::Stdio;

    let Ok(hierarchy) = cgroup::hierarchy() else {
        eprintln!(
            "skipped: --load memory cannot run here: {:?}",
            unsupported_here()
        );
        return;
    };
    let lab = Lab::new();
    let marker = common::unique_marker("memload");
    let turn = common::measuring_turn();
    let mut child = common::spawn_interruptible(
        &lab,
        &common::HANG_UNDER_MEMORY_LOAD,
        &marker,
        Stdio::null(),
    );
    let oslab_pid = child.0.id();

    // Wait until the competitor and the worker are both in the cgroup.
    let deadline = Instant::now() + Duration::from_secs(60);
    let cgroup = loop {
        let found = cgroup::cgroups_of(&hierarchy.parent, oslab_pid);
        if let Some(dir) = found.first() {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            if procs.lines().count() >= 2 {
                break dir.clone();
            }
        }
        if let Ok(Some(status)) = child.0.try_wait() {
            let reason = unsupported_here();
            eprintln!("skipped: oslab ended ({status}) before the load ran: {reason:?}");
            return;
        }
        assert!(Instant::now() < deadline, "the memory load never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));

    let status = child.interrupt(deadline);
    drop(turn);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(!cgroup.exists(), "{} was left behind", cgroup.display());
    assert!(cgroup::cgroups_of(&hierarchy.parent, oslab_pid).is_empty());
    let left = common::marked_processes_after_grace(common::MARKER_VAR, &marker);
    assert!(left.is_empty(), "processes outlived oslab: {left:?}");
}

#[test]
fn an_unknown_load_names_the_choices() {
    let lab = Lab::new();
    lab.oslab(&["run", "synthetic.spin", "--load", "disk"])
        .assert_user_error(&["--load disk", "cpu", "cpu:all", "memory", "io"]);
}

/// `--load io`: the load writes, fsyncs and reads in `--dir` beside the experiment, the result
/// records the rates it achieved, and its directory is gone afterwards.
#[test]
fn an_io_load_records_its_achieved_rates_and_leaves_nothing() {
    let lab = Lab::new();
    let dir = lab.dir().join("io");
    std::fs::create_dir(&dir).unwrap();
    let doc = lab.run_json(
        &[
            "syscall.getppid",
            "--load",
            "io",
            "--dir",
            dir.to_str().unwrap(),
            "--quick",
            "--budget",
            "0.5",
            "-p",
            "entry=call",
        ],
        0,
    );
    check_run_contract(&doc);
    let r = result(&doc, "syscall.getppid");
    assert_eq!(r["load"]["kind"], "io", "{r:#}");
    let details: Vec<(String, String)> =
        serde_json::from_value(r["load"]["details"].clone()).unwrap();
    let detail = |name: &str| {
        details
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no `{name}` in {details:?}"))
    };
    let rate = |name: &str| -> f64 { detail(name).split(' ').next().unwrap().parse().unwrap() };
    let write = rate("achieved write rate");
    assert!(write > 0.0, "achieved write rate: {details:?}");
    // The load reads its file back once it has written it: a load stopped before that (a slow
    // machine, an emulated one: the experiment's processes end first) has read nothing, and
    // says so. One that wrote more than the file had read it whole before writing again; a
    // quarter of the file is the margin for the two rounded figures multiplied here.
    let over: f64 = detail("measured over")
        .trim_start_matches("its first ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let file_mib = oslab::measure::ioload::FILE_BYTES as f64 / (1u64 << 20) as f64;
    if write * over > 1.25 * file_mib {
        assert!(
            rate("achieved read rate") > 0.0,
            "achieved read rate: {details:?}"
        );
    }
    assert!(detail("fsyncs").ends_with("/s"));
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "the load's directory is removed: {left:?}");
}

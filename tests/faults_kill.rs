//! The fault drill's `kill -9` and crowding: the worker killed at random moments, oslab
//! itself killed at random moments (with and without a memory load), and two runs on one
//! database at once. Each time: the database whole, no process left, and what a killed oslab
//! could not remove (its scratch directories, its memory cgroup) removed by the next run.
//!
//! No timing is asserted: the moments only spread the kills over each command's life.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use common::*;
#[cfg(target_os = "linux")]
use oslab::platform::cgroup;

/// A worker killed with SIGKILL at a random moment of its life (starting, calibrating,
/// measuring) fails that configuration only, named by the signal; the run goes on with the
/// next one, ends with exit code 3 and leaves nothing behind. (A worker that finished before
/// the signal came leaves a run with nothing failed.)
#[test]
fn a_worker_killed_at_any_moment_fails_its_configuration_only() {
    let lab = Lab::new();
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "syscall.function_call",
        "syscall.getpid",
        "--param",
        "entry=call",
        "--quick",
        "--budget",
        "0.3",
    ];
    let mut moments = Moments::new();
    let mut hit = 0;
    let _turn = measuring_turn();
    for round in 0..3 {
        let mut oslab = start(&lab, &args, tmp.path(), false);
        let worker = oslab.first_worker().expect("a worker started");
        let after = moments.upto(Duration::from_millis(300));
        std::thread::sleep(after);
        // SAFETY: signalling the worker this test's oslab started, found by its marker.
        unsafe { libc::kill(worker, libc::SIGKILL) };
        let status = oslab.wait();
        let stderr = oslab.stderr();
        eprintln!("round {round}: worker killed after {after:?}: {status:?}");
        assert!(!stderr.contains("oslab: "), "no error line: {stderr}");
        oslab.assert_no_process_left();
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new());

        let doc = lab.oslab(&["show", "--json"]).json();
        assert!(!doc["finished_at"].is_null(), "the run finished");
        let first = result(&doc, "syscall.function_call");
        assert_eq!(result(&doc, "syscall.getpid")["status"], "ok");
        if status.code() == Some(3) {
            assert_eq!(first["status"], "failed", "{first:#}");
            let reason = first["reason"].as_str().unwrap_or("");
            assert!(reason.contains("killed by SIGKILL"), "{reason}");
            hit += 1;
        } else {
            assert_eq!(status.code(), Some(0), "{stderr}");
            assert_eq!(first["status"], "ok", "{first:#}");
        }
        assert_db_intact(&lab);
    }
    assert!(hit > 0, "no kill came while the worker ran");
}

/// oslab killed with SIGKILL at a random moment — starting, storing, measuring in `--dir`,
/// waiting on a worker — takes its workers with it; the database reads fine; what it left
/// (scratch directories) goes with the next run.
#[test]
fn oslab_killed_at_any_moment_leaves_nothing_the_next_run_keeps() {
    let lab = Lab::new();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let args = [
        "run",
        "fs.stat",
        "syscall.function_call",
        "synthetic.spin",
        "--param",
        "mode=hang",
        "--quick",
        "--budget",
        "0.2",
        "--timeout",
        "60",
        "--dir",
        dir_arg,
    ];
    let mut moments = Moments::new();
    let turn = measuring_turn();
    for round in 0..4 {
        let mut oslab = start(&lab, &args, tmp.path(), false);
        let after = moments.upto(Duration::from_millis(1500));
        std::thread::sleep(after);
        oslab.child.0.kill().expect("SIGKILL oslab");
        let status = oslab.wait();
        eprintln!("round {round}: oslab killed after {after:?}: {status:?}");
        oslab.assert_no_process_left();
        assert_db_intact(&lab);
    }
    drop(turn);
    // The next run removes what the killed ones left in the temporary directory and --dir.
    let next = start(
        &lab,
        &[
            "run", "fs.stat", "--quick", "--budget", "0.2", "--dir", dir_arg,
        ],
        tmp.path(),
        false,
    );
    let mut next = next;
    let _turn = measuring_turn();
    assert!(next.wait().success(), "{}", next.stderr());
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    assert_db_intact(&lab);
}

/// oslab killed with SIGKILL while a memory load runs leaves its memory cgroup (nothing can
/// remove it then; the competitor and the worker die with oslab); the next run — even one
/// without a load — removes it.
// Memory cgroups are Linux's.
#[cfg(target_os = "linux")]
#[test]
fn a_memory_cgroup_a_killed_oslab_left_goes_with_the_next_run() {
    let Ok(hierarchy) = cgroup::hierarchy() else {
        eprintln!("skipped: no memory cgroup oslab may use here");
        return;
    };
    let lab = Lab::new();
    let tmp = tempfile::tempdir().unwrap();
    let args = HANG_UNDER_MEMORY_LOAD;
    let mut moments = Moments::new();
    let turn = measuring_turn();
    let mut oslab = start(&lab, &args, tmp.path(), false);
    let pid = oslab.pid();
    let deadline = Instant::now() + Duration::from_secs(60);
    while cgroup::cgroups_of(&hierarchy.parent, pid).is_empty() {
        if oslab.ended() {
            eprintln!("skipped: the memory load did not start: {}", oslab.stderr());
            return;
        }
        assert!(Instant::now() < deadline, "no cgroup appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    let after = moments.upto(Duration::from_millis(1500));
    std::thread::sleep(after);
    oslab.child.0.kill().expect("SIGKILL oslab");
    oslab.wait();
    oslab.assert_no_process_left();
    drop(turn);
    let left = cgroup::cgroups_of(&hierarchy.parent, pid);
    eprintln!("killed after {after:?}; left: {left:?}");

    let _turn = measuring_turn();
    let mut next = start(
        &lab,
        &["run", "syscall.function_call", "--quick", "--budget", "0.2"],
        tmp.path(),
        false,
    );
    assert!(next.wait().success(), "{}", next.stderr());
    assert_eq!(
        cgroup::cgroups_of(&hierarchy.parent, pid),
        Vec::<std::path::PathBuf>::new(),
        "the killed oslab's cgroup was removed"
    );
    assert_db_intact(&lab);
}

/// Two runs started together on one database (a new one, then one that holds runs): both
/// store their run, with distinct ids, and the database stays whole.
#[test]
fn two_runs_at_once_on_one_database_both_store() {
    let lab = Lab::new();
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "syscall.function_call",
        "syscall.getpid",
        "--param",
        "entry=call",
        "--quick",
        "--budget",
        "0.2",
    ];
    let _turn = measuring_turn();
    for round in 1..=2 {
        let mut first = start(&lab, &args, tmp.path(), false);
        let mut second = start(&lab, &args, tmp.path(), false);
        for oslab in [&mut first, &mut second] {
            let status = oslab.wait();
            let stderr = oslab.stderr();
            // Both measure on the same CPU at once: a result may look suspect, never fail.
            assert!(matches!(status.code(), Some(0 | 4)), "{status:?}: {stderr}");
            assert!(stderr.contains("stored as run"), "{stderr}");
        }
        let runs = listed_runs(&assert_db_intact(&lab));
        assert_eq!(runs, (1..=2 * round).collect::<Vec<i64>>());
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
    }
}

/// `export -o` killed with SIGKILL while it writes leaves its temporary file (nothing can
/// remove it then) but never a file at the user's path; the next write into the same
/// directory removes it.
#[test]
fn a_killed_export_leaves_no_file_the_next_one_keeps() {
    let lab = lab_with_a_run();
    let big = big_export(&lab, 4, 2500);
    let big_lab = Lab::new();
    big_lab
        .oslab(&["import", big.to_str().unwrap()])
        .assert_code(0);
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("run.json");
    let args = ["export", "1", "-o", target.to_str().unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    let mut oslab = start(&big_lab, &args, tmp.path(), false);
    let deadline = Instant::now() + Duration::from_secs(60);
    while named(out.path(), ".oslab-out-").is_empty() && !oslab.ended() {
        assert!(Instant::now() < deadline, "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(1));
    }
    oslab.child.0.kill().expect("SIGKILL oslab");
    oslab.wait();
    assert!(!target.exists(), "a half-written file at the user's path");
    let left = named(out.path(), ".oslab-out-");
    eprintln!("left by the killed export: {left:?}");

    big_lab
        .oslab(&[
            "export",
            "1",
            "--format",
            "csv",
            "-o",
            target.to_str().unwrap(),
        ])
        .assert_code(0);
    assert_eq!(leftovers(out.path()), ["run.json"]);
}

/// A worker whose oslab died before the worker could tie its life to it (the instants
/// between fork and prctl) stops at once instead of running on unwatched.
#[test]
fn a_worker_whose_oslab_is_gone_stops_at_once() {
    let mut worker = std::process::Command::new(env!("CARGO_BIN_EXE_oslab"))
        .arg("worker")
        // pid_max is at most 2^22: no process has this pid, so it is not the parent.
        .env("OSLAB_WORKER_PARENT", (1u32 << 30).to_string())
        // Its job never comes: a worker that waited for it would hang here.
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start a worker");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = worker.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = worker.kill();
            panic!("the orphaned worker did not stop");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(1));
}

//! The fault drill's Ctrl-C: SIGINT at random moments — to oslab alone and to its process
//! group, as a terminal sends it — during `run`, `export -o`, `report -o` and `import`. Each
//! time: exit code 130 with one line saying what was kept, the database whole, the output file
//! whole or absent (never half-written, no `.oslab-out-*` left), the import all or nothing,
//! no worker and no scratch directory left.
//!
//! No timing is asserted: the moments only spread the signal over each command's life.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]
// Its experiments declare Linux only (they use Linux's APIs or counters).
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

/// Ctrl-C (also SIGTERM, SIGHUP) at a random moment of a run — while it starts, stores,
/// measures a file-system experiment in `--dir` or waits on a hanging worker — ends it with
/// 130; the run, if it was stored, is listed as interrupted; nothing of it is left running
/// or on disk.
#[test]
fn ctrl_c_at_any_moment_of_a_run_keeps_it_interrupted_and_leaves_nothing() {
    let lab = Lab::new();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let args = [
        "run",
        "fs.stat",
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
    let _turn = measuring_turn();
    // Ctrl-C to oslab and to its group, and the other signals oslab stops for: `kill`'s
    // SIGTERM, and SIGHUP to the group as when the terminal closes.
    let rounds = [
        (libc::SIGINT, false),
        (libc::SIGINT, true),
        (libc::SIGTERM, false),
        (libc::SIGINT, true),
        (libc::SIGHUP, true),
    ];
    for (round, (signal, group)) in rounds.into_iter().enumerate() {
        let mut oslab = start(&lab, &args, tmp.path(), group);
        let after = moments.upto(Duration::from_millis(1200));
        std::thread::sleep(after);
        oslab.signal(signal, group);
        let status = oslab.wait();
        let stderr = oslab.stderr();
        eprintln!("round {round}: signal {signal} after {after:?} (group: {group}): {status:?}");
        assert_stopped_by(signal, status, &stderr);
        assert_no_journal(&lab);
        oslab.assert_no_process_left();
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "{stderr}");
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{stderr}");
        let list = assert_db_intact(&lab);
        for line in list.lines().skip(1) {
            assert!(line.contains("interrupted"), "{list}");
        }
    }
}

/// Ctrl-C to the process group at a random moment of a run under a memory load (the
/// competitor in oslab's group gets it too): exit 130, no cgroup, no process left.
#[test]
fn ctrl_c_to_the_group_under_a_memory_load_leaves_no_cgroup() {
    let Ok(hierarchy) = oslab::platform::cgroup::hierarchy() else {
        eprintln!("skipped: no memory cgroup oslab may use here");
        return;
    };
    let lab = Lab::new();
    let tmp = tempfile::tempdir().unwrap();
    let args = HANG_UNDER_MEMORY_LOAD;
    let mut moments = Moments::new();
    let _turn = measuring_turn();
    for round in 0..2 {
        let mut oslab = start(&lab, &args, tmp.path(), true);
        let after = moments.upto(Duration::from_millis(2500));
        std::thread::sleep(after);
        oslab.signal(libc::SIGINT, true);
        let status = oslab.wait();
        let stderr = oslab.stderr();
        eprintln!("round {round}: Ctrl-C after {after:?}: {status:?}");
        assert_interrupted(status, &stderr);
        assert_no_journal(&lab);
        oslab.assert_no_process_left();
        let left = oslab::platform::cgroup::cgroups_of(&hierarchy.parent, oslab.pid());
        assert_eq!(left, Vec::<std::path::PathBuf>::new(), "{stderr}");
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "{stderr}");
        assert_db_intact(&lab);
    }
}

/// How Ctrl-C at a random moment of a command writing `target` may end: whole (exit 0, the
/// file complete) or not at all (exit 130, no file) — and never a temporary file left.
fn drill_output(lab: &Lab, args: &[&str], target: &Path, check_whole: &dyn Fn(&str)) {
    let tmp = tempfile::tempdir().unwrap();
    // How long the whole command takes here, so the moments spread over all of it.
    let start_at = Instant::now();
    let mut whole = start(lab, args, tmp.path(), false);
    assert!(whole.wait().success(), "{}", whole.stderr());
    let took = start_at.elapsed();
    check_whole(&std::fs::read_to_string(target).expect("the written file"));
    std::fs::remove_file(target).unwrap();

    let dir = target.parent().unwrap();
    let mut moments = Moments::new();
    let (mut written, mut refused) = (0, 0);
    for round in 0..5 {
        let group = round % 2 == 1;
        let mut oslab = start(lab, args, tmp.path(), group);
        let after = if round == 0 {
            // Once exactly while the temporary file is being written.
            let deadline = Instant::now() + Duration::from_secs(60);
            while named(dir, ".oslab-out-").is_empty() && !oslab.ended() {
                assert!(Instant::now() < deadline, "no temporary file appeared");
                std::thread::sleep(Duration::from_millis(1));
            }
            Duration::ZERO
        } else {
            // Rounds 1 to 4 each in their own quarter of 1.2 × the command's time, so that
            // the moments spread over all of it and the first comes early, whatever the seed.
            let quarter = took.mul_f64(0.3);
            let after = quarter.mul_f64(f64::from(round - 1)) + moments.upto(quarter);
            std::thread::sleep(after);
            after
        };
        if !oslab.ended() {
            oslab.signal(libc::SIGINT, group);
        }
        let status = oslab.wait();
        let stderr = oslab.stderr();
        eprintln!("round {round}: Ctrl-C after {after:?} (group: {group}): {status:?}");
        if status.success() {
            check_whole(&std::fs::read_to_string(target).expect("the written file"));
            std::fs::remove_file(target).unwrap();
            written += 1;
        } else {
            assert_interrupted(status, &stderr);
            assert!(!target.exists(), "a half-written file was left: {stderr}");
            refused += 1;
        }
        assert_eq!(named(dir, ".oslab-out-"), Vec::<String>::new(), "{stderr}");
    }
    eprintln!("{written} written whole, {refused} interrupted with no file");
    assert!(refused > 0, "the drill never interrupted the write");
    assert_db_intact(lab);
}

/// `export -o` and `report -o` of a large run, interrupted at random moments (and once while
/// the file is being written): the file is whole or absent.
#[test]
fn ctrl_c_during_export_or_report_leaves_the_whole_file_or_none() {
    let lab = lab_with_a_run();
    let big = big_export(&lab, 4, 2500);
    let big_lab = Lab::new();
    big_lab
        .oslab(&["import", big.to_str().unwrap()])
        .assert_code(0);
    let out = tempfile::tempdir().unwrap();

    let json = out.path().join("run.json");
    drill_output(
        &big_lab,
        &["export", "1", "-o", json.to_str().unwrap()],
        &json,
        &|text| {
            let doc: serde_json::Value = serde_json::from_str(text).expect("whole JSON");
            assert_eq!(doc["run"]["results"].as_array().map(Vec::len), Some(4));
        },
    );
    let html = out.path().join("report.html");
    drill_output(
        &big_lab,
        &["report", "1", "-o", html.to_str().unwrap()],
        &html,
        &|text| assert!(text.trim_end().ends_with("</html>"), "a whole page"),
    );
}

/// `import` of a large run interrupted at random moments imports the whole run or nothing;
/// the database stays whole (no rollback journal left) and keeps what it held.
#[test]
fn ctrl_c_during_import_imports_all_or_nothing() {
    let lab = lab_with_a_run();
    let big = big_export(&lab, 4, 2500);
    let args = ["import", big.to_str().unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    // How long a whole import takes: the shorter of two (the second reads a cached file).
    let whole_import = |lab: &Lab| {
        let start_at = Instant::now();
        let mut whole = start(lab, &args, tmp.path(), false);
        assert!(whole.wait().success(), "{}", whole.stderr());
        start_at.elapsed()
    };
    let took = whole_import(&lab).min(whole_import(&lab_with_a_run()));

    let mut moments = Moments::new();
    let mut refused = 0;
    // Five rounds at any moment of an import, then, until one was interrupted, up to five more
    // within its first half.
    for round in 0..10 {
        if round >= 5 && refused > 0 {
            break;
        }
        let fresh = lab_with_a_run();
        let group = round % 2 == 1;
        let mut oslab = start(&fresh, &args, tmp.path(), group);
        let latest = if round < 5 { 1.2 } else { 0.5 };
        let after = moments.upto(took.mul_f64(latest));
        std::thread::sleep(after);
        if !oslab.ended() {
            oslab.signal(libc::SIGINT, group);
        }
        let status = oslab.wait();
        let stderr = oslab.stderr();
        eprintln!("round {round}: Ctrl-C after {after:?} (group: {group}): {status:?}");
        assert_no_journal(&fresh);
        let runs = listed_runs(&assert_db_intact(&fresh));
        if status.success() {
            assert_eq!(runs, [1, 2], "the whole run was imported: {stderr}");
            let doc = fresh.oslab(&["export", "2"]).json();
            assert_eq!(doc["run"]["results"].as_array().map(Vec::len), Some(4));
        } else {
            assert_interrupted(status, &stderr);
            assert_eq!(runs, [1], "nothing was imported: {stderr}");
            refused += 1;
        }
    }
    assert!(refused > 0, "the drill never interrupted the import");
}

/// Ctrl-C while the inline path of `syscall.getpid` measures: that configuration is stored
/// failed with the samples it had, and every view says it is partial — the ladder row it
/// shares with the called path, JSON, `compare`, the HTML report (issue 31).
#[test]
fn an_interrupted_configuration_reads_partial_in_every_view() {
    let lab = Lab::new();
    let log = lab.dir().join("stderr.txt");
    let args = [
        "run",
        "syscall.getpid",
        "--repeat",
        "1",
        "--precision",
        "0.001",
        "--budget",
        "4",
        "--timeout",
        "60",
    ];
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let status = {
        let _turn = measuring_turn();
        let file = std::fs::File::create(&log).unwrap();
        let mut oslab = spawn_interruptible(&lab, &args, &unique_marker("partial"), file.into());
        let deadline = Instant::now() + Duration::from_secs(60);
        // The called path is stored ([1/2]); the inline one measures until the signal.
        while !read_log().contains("[1/2]") {
            assert!(Instant::now() < deadline, "no first result: {}", read_log());
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1500));
        oslab.interrupt(deadline)
    };
    assert_eq!(status.code(), Some(130), "{}", read_log());
    assert!(read_log().contains("samples kept)"), "{}", read_log());

    let show = lab.oslab(&["show"]);
    show.assert_code(0);
    let ladder = show.stdout.split("Cost ladder").nth(1).unwrap_or("");
    let row = ladder
        .lines()
        .find(|l| l.trim_start().starts_with("syscall.getpid"))
        .unwrap_or_else(|| panic!("no ladder row: {show}"));
    assert!(row.contains("ok; inline failed (partial)"), "{show}");

    let doc = lab.oslab(&["show", "--json"]).json();
    for key in ["configurations", "results"] {
        let partial: Vec<&serde_json::Value> = doc[key]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["partial"] == true)
            .collect();
        assert_eq!(partial.len(), 1, "{key}: {doc}");
        assert_eq!(partial[0]["params"]["entry"], "inline", "{key}: {doc}");
        assert_eq!(partial[0]["status"], "failed", "{key}: {doc}");
    }

    let cmp = lab.oslab(&["compare", "1", "1"]);
    cmp.assert_code(0);
    let row = cmp
        .stdout
        .lines()
        .find(|l| l.contains("entry=inline"))
        .unwrap_or_else(|| panic!("{cmp}"));
    assert!(row.contains("A, B failed (partial)"), "{cmp}");
    let json = lab.oslab(&["compare", "1", "1", "--json"]).json();
    assert!(
        json.to_string().contains("\"partial\":[true,true]"),
        "{json}"
    );

    let html = lab.dir().join("report.html");
    lab.oslab(&["report", "1", "-o", html.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("ok; inline failed (partial)"), "ladder bar");
    assert!(page.contains(">failed (partial)<"), "results table");
}

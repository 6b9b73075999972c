//! `oslab compare A1,A2,… B1,B2,…`: sets of runs, each run's median one observation, on a
//! database of synthetic runs (`Store::begin_run`). No test asserts a measured timing value.

// The experiments here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use common::{Lab, spread, synthetic_result as result, synthetic_run};
use oslab::store::Store;

/// A lab whose runs 1–6 alternate A (`syscall.getppid` about 100 ns, runs 1, 3, 5) and B
/// (about 105 ns, runs 2, 4, 6), each run's center 1% off its side's in turn.
fn lab_with_sets() -> Lab {
    let lab = Lab::new();
    let mut store = Store::open(lab.db()).expect("create the database");
    let offsets = [0.99, 1.0, 1.01];
    for (i, offset) in offsets.iter().enumerate() {
        for (k, (tag, center)) in [("a", 100.0), ("b", 105.0)].into_iter().enumerate() {
            let id = (2 * i + k + 1) as i64;
            let values = spread(center * offset, 0.002, 30);
            let run = synthetic_run(
                id,
                tag,
                "6.1.0",
                vec![result("syscall.getppid", &[], &values)],
            );
            assert_eq!(store.begin_run(&run).unwrap(), id);
        }
    }
    lab
}

#[test]
fn sets_of_runs_are_compared_by_their_runs_medians() {
    let lab = lab_with_sets();
    let out = lab.oslab(&["compare", "1,3,5", "2,4,6", "--noise", "2"]);
    out.assert_code(0);
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("A = runs 1, 3, 5 (3), B = runs 2, 4, 6 (3):"),
        "{out}"
    );
    assert!(out.stdout.contains("Each side is a set of runs"), "{out}");
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("syscall.getppid"))
        .unwrap_or_default();
    assert!(row.contains("1.050") && row.contains("slower"), "{out}");

    // The runs were measured to ±5% (`--quick`), which widens the band by default: 2% set.
    let out = lab.oslab(&[
        "compare",
        "1,3,5",
        "2,4,6",
        "--json",
        "--noise",
        "2",
        "--fail-on-regression",
    ]);
    out.assert_code(1);
    let doc = out.json();
    assert_eq!(doc["run_sets"]["a"], serde_json::json!([1, 3, 5]));
    assert_eq!(doc["run_sets"]["b"], serde_json::json!([2, 4, 6]));
    let r = &doc["results"][0];
    assert_eq!(r["runs"], serde_json::json!([3, 3]));
    // One worker process a run, counted over each side's runs; no earlier runs floor a set.
    assert_eq!(r["processes"], serde_json::json!([3, 3]), "{r}");
    assert_eq!(r["partial"], serde_json::json!([false, false]), "{r}");
    assert!(r["earlier_runs"].is_null(), "{r}");
    assert_eq!(r["verdict"], "slower");
    assert_eq!(r["p_test"], "interval");
    let (lo, hi) = (r["ratio_ci_low"].as_f64(), r["ratio_ci_high"].as_f64());
    assert!(lo.unwrap() > 1.0 && hi.unwrap() < 1.1, "{r}");

    // The same set on both sides: no change.
    let out = lab.oslab(&["compare", "1,3,5", "1,3,5", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["results"][0]["verdict"], "no_change");
}

#[test]
fn sets_of_runs_refuse_what_they_cannot_do_in_one_line() {
    let lab = lab_with_sets();
    lab.oslab(&["compare", "1,3", "2"])
        .assert_user_error(&["two or more runs on each side"]);
    lab.oslab(&["compare", "1,,3", "2,4"])
        .assert_user_error(&["missing between commas", "1,3,5"]);
    lab.oslab(&["compare", "1,3", "2,4", "--metric", "minflt"])
        .assert_user_error(&["--metric minflt", "time only"]);
    lab.oslab(&["compare", "1,3", "2,4", "--profile", "flames"])
        .assert_user_error(&["--profile", "one run on each side"]);
    lab.oslab(&["compare", "1,3,1", "2,4"])
        .assert_user_error(&["run 1 is named twice"]);
    // A tag names its latest run: `a` is run 5, named again by its id.
    lab.oslab(&["compare", "1,a,5", "2,4"])
        .assert_user_error(&["run 5 is named twice"]);
    lab.oslab(&["compare", "1,3", "2,99"])
        .assert_user_error(&["99", "show --list"]);
}

//! `oslab compare`, `oslab export` and `oslab import`.
//!
//! The compare table and JSON are checked as exact text on synthetic runs built in-process
//! (the bootstrap seed is fixed, so the output is deterministic); the binary is run on
//! databases holding such runs (`Store::begin_run`) and on real quick runs for export and
//! import. No test asserts a measured timing value.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use common::{Lab, spread, synthetic_result as result, synthetic_run};
use oslab::analysis::compare::{DEFAULT_NOISE, Metric, RunComparison, compare_runs};
use oslab::model::{ExperimentResult, Run};
use oslab::report;
use oslab::store::Store;
use serde_json::Value;

/// `compare_runs` as `oslab compare` calls it by default: times, the default noise band, the
/// experiments' cells.
fn compare(a: &Run, b: &Run) -> RunComparison {
    compare_runs(
        a,
        b,
        &Metric::Time,
        DEFAULT_NOISE,
        oslab::experiment::DECLARED,
    )
}

fn run(id: i64, tag: &str, kernel: &str, results: Vec<ExperimentResult>) -> Run {
    let mut run = synthetic_run(id, tag, kernel, results);
    run.settings.argv = vec!["oslab".into(), "run".into(), tag.into()];
    run.environment.cpu_model = None;
    run.environment.cpu_mhz = Some(2000.0 + id as f64);
    run.environment.vulnerabilities =
        [("spectre_v2".to_string(), "Mitigation: IBRS".to_string())].into();
    run
}

/// A baseline of three experiments, and B: identical, 2× slower, 1% slower with a tiny
/// spread; plus one experiment each side lacks.
fn pair() -> (Run, Run) {
    let a = run(
        1,
        "base",
        "6.1.0",
        vec![
            result("syscall.getppid", &[], &spread(100.0, 0.01, 40)),
            result("process.fork", &[], &spread(50_000.0, 0.02, 40)),
            result("syscall.read", &[("size", "1")], &spread(200.0, 0.001, 40)),
            result("ctxswitch.pipe", &[], &spread(3000.0, 0.01, 40)),
        ],
    );
    let mut b = run(
        2,
        "new",
        "6.8.0",
        vec![
            result("syscall.getppid", &[], &spread(100.0, 0.01, 40)),
            result("process.fork", &[], &spread(100_000.0, 0.02, 40)),
            result("syscall.read", &[("size", "1")], &spread(202.0, 0.001, 40)),
            result("ipc.unix_latency", &[], &spread(5000.0, 0.01, 40)),
        ],
    );
    b.settings.load = Some("cpu".into());
    (a, b)
}

#[test]
fn compare_table_snapshot() {
    let (a, b) = pair();
    let cmp = compare(&a, &b);
    let text = report::compare::render(&cmp);
    assert_eq!(text, TABLE);
}

const TABLE: &str = r#"A = run 1, B = run 2: time per operation, median of each, B/A with its 95% bootstrap CI, p at the CI's unit of replication, the smallest change it could see; noise band ±2%

Environment differences:
  field           A      B
  kernel_release  6.1.0  6.8.0

Settings differences:
  field  A  B
  load   –  cpu

experiment                 A       B    B/A  95% CI              p  could see  verdict
syscall.getppid       100 ns  100 ns  1.000  0.995 – 1.005   1.000       2.5%  no change
process.fork         50.0 µs  100 µs  2.000  1.980 – 2.020  <0.001       3.0%  slower        !!
syscall.read size=1   200 ns  202 ns  1.010  1.009 – 1.011  <0.001       2.1%  within noise

Only in A:
  ctxswitch.pipe

Only in B:
  ipc.unix_latency

Each side is one worker process: the CI shows the spread within it, not between runs; runs measured with several processes (`oslab run`'s default of 3) make the comparison robust to run-to-run noise.
could see: the smallest change these runs could have called at the CI's width and the noise band; "no change" says only that any change is smaller.
3 compared: 1 slower, 0 faster, 1 no change, 1 within noise; !! marks 1 change(s) of 1.5× or more
"#;

/// A run measured under qemu-user against a native one: one warning line before the tables,
/// and the emulation among the environment's differences.
#[test]
fn an_emulated_run_against_a_native_one_is_said_first() {
    let (a, mut b) = pair();
    b.environment.emulation = Some(
        "user-mode emulation of aarch64 on an x86_64 kernel: timings are not this CPU's cost"
            .into(),
    );
    let text = report::compare::render(&compare(&a, &b));
    let warning = text.lines().nth(1).expect("a second line");
    assert!(
        warning.starts_with("warning: run 2 ran under user-mode emulation and run 1 natively"),
        "{text}"
    );
    assert!(text.contains("emulation"), "{text}");
    let (a, b) = pair();
    let text = report::compare::render(&compare(&a, &b));
    assert!(!text.contains("emulation"), "{text}");
}

/// Every sample of `run` carries a kernel canary of `ns` per call.
fn with_kernel_canary(mut run: Run, ns: f64) -> Run {
    for s in run.results.iter_mut().flat_map(|r| &mut r.samples) {
        s.counters.insert(
            oslab::model::host::KERNEL_CANARY.into(),
            oslab::model::CounterValue {
                value: Some(ns),
                raw: ns as u64,
                enabled_ns: 0,
                running_ns: 0,
            },
        );
    }
    run
}

/// Runs whose kernel canaries lie 10% apart get a line that says so, and whose doing it is:
/// the host's on one kernel, the host's or the kernels' between two; none when they agree.
#[test]
fn kernel_canaries_apart_are_said_before_the_environment() {
    let (a, b) = pair();
    let (a, b) = (with_kernel_canary(a, 165.0), with_kernel_canary(b, 215.0));
    let cmp = compare(&a, &b);
    // The line is wrapped: its words, one space apart.
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = flat(&report::compare::render(&cmp));
    assert!(
        text.contains("took 165 ns in A and 215 ns in B (B/A 1.303)"),
        "{text}"
    );
    assert!(text.contains("between two kernels"), "{text}");
    let doc = report::compare::document(&cmp);
    let k = &doc["kernel_canaries"];
    assert_eq!(
        (k["a_ns"].as_f64(), k["b_ns"].as_f64()),
        (Some(165.0), Some(215.0))
    );
    // process.fork got 2× slower while its own samples' canaries moved 1.3× the same way: marked
    // † with a note; syscall.getppid, unchanged, is not.
    let fork = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["experiment"] == "process.fork")
        .unwrap();
    assert_eq!(fork["kernel_canaries"]["b_ns"].as_f64(), Some(215.0));
    assert_eq!(fork["host_moved"], true);
    let unchanged = |r: &&Value| r["experiment"] == "syscall.getppid";
    let getppid = doc["results"].as_array().unwrap().iter().find(unchanged);
    assert_eq!(getppid.unwrap()["host_moved"], false);
    assert!(
        text.contains("† process.fork: its kernel canary moved the same way"),
        "{text}"
    );
    assert!(!text.contains("† syscall.getppid"), "{text}");
    // Every sample's canary the same: no slow kernel phase to set aside.
    assert!(!text.contains("slow kernel phase"), "{text}");

    let (a, mut b) = pair();
    b.environment.kernel_release = a.environment.kernel_release.clone();
    let (a, b) = (with_kernel_canary(a, 165.0), with_kernel_canary(b, 215.0));
    let text = report::compare::render(&compare(&a, &b));
    assert!(
        text.contains("on the same kernel, that is the host's doing"),
        "{text}"
    );

    let (a, b) = pair();
    let (a, b) = (with_kernel_canary(a, 165.0), with_kernel_canary(b, 170.0));
    let text = report::compare::render(&compare(&a, &b));
    assert!(!text.contains("kernel canary"), "{text}");
}

#[test]
fn compare_json_snapshot() {
    let (a, b) = pair();
    let cmp = compare(&a, &b);
    let doc = report::compare::document(&cmp);
    let expected: Value = serde_json::from_str(JSON).unwrap();
    assert_eq!(doc, expected);
}

const JSON: &str = r#"{
  "a_run_id": 1,
  "any_slower": true,
  "b_run_id": 2,
  "run_sets": null,
  "environment_diff": [
    {
      "a": "6.1.0",
      "b": "6.8.0",
      "field": "kernel_release"
    }
  ],
  "kernel_canaries": null,
  "metric": "time",
  "noise": 0.02,
  "noise_reason": null,
  "systems": null,
  "only_in_a": [
    {
      "experiment": "ctxswitch.pipe",
      "other_status": null,
      "params": {}
    }
  ],
  "only_in_b": [
    {
      "experiment": "ipc.unix_latency",
      "other_status": null,
      "params": {}
    }
  ],
  "results": [
    {
      "a": 100.0,
      "b": 100.0,
      "experiment": "syscall.getppid",
      "highlight": false,
      "host_moved": false,
      "apart_process_medians": [null, null],
      "earlier_range": [null, null],
      "ci_from_earlier_runs": false,
      "runs": null,
      "kernel_slower_than_earlier": [null, null],
      "kernel_canaries": null,
      "p_value": 1.0,
      "p_test": "mann_whitney",
      "detectable_change": 0.02511705685618737,
      "params": {},
      "processes": [1, 1],
      "partial": [false, false],
      "earlier_runs": [0, 0],
      "ratio": 1.0,
      "ratio_ci_high": 1.0050083472454092,
      "ratio_ci_low": 0.9950083194675541,
      "unit": "ns/call",
      "verdict": "no_change"
    },
    {
      "a": 50000.0,
      "b": 100000.0,
      "experiment": "process.fork",
      "highlight": true,
      "host_moved": false,
      "apart_process_medians": [null, null],
      "earlier_range": [null, null],
      "ci_from_earlier_runs": false,
      "runs": null,
      "kernel_slower_than_earlier": [null, null],
      "kernel_canaries": null,
      "p_value": 1.3775088545298564e-14,
      "p_test": "mann_whitney",
      "detectable_change": 0.03026845637583908,
      "params": {},
      "processes": [1, 1],
      "partial": [false, false],
      "earlier_runs": [0, 0],
      "ratio": 2.0,
      "ratio_ci_high": 2.0200668896321066,
      "ratio_ci_low": 1.980066445182724,
      "unit": "ns/call",
      "verdict": "slower"
    },
    {
      "a": 200.0,
      "b": 202.0,
      "experiment": "syscall.read",
      "highlight": false,
      "host_moved": false,
      "apart_process_medians": [null, null],
      "earlier_range": [null, null],
      "ci_from_earlier_runs": false,
      "runs": null,
      "kernel_slower_than_earlier": [null, null],
      "kernel_canaries": null,
      "p_value": 1.3775088545298564e-14,
      "p_test": "mann_whitney",
      "detectable_change": 0.02051017005668543,
      "params": {
        "size": "1"
      },
      "processes": [1, 1],
      "partial": [false, false],
      "earlier_runs": [0, 0],
      "ratio": 1.01,
      "ratio_ci_high": 1.0105050841806966,
      "ratio_ci_low": 1.0094950841526413,
      "unit": "ns/call",
      "verdict": "within_noise"
    }
  ],
  "settings_diff": [
    {
      "a": null,
      "b": "cpu",
      "field": "load"
    }
  ]
}"#;

/// A lab whose database holds the synthetic pair as runs 1 (`base`) and 2 (`new`).
fn lab_with_pair() -> Lab {
    let lab = Lab::new();
    let (a, b) = pair();
    let mut store = Store::open(lab.db()).expect("create the database");
    assert_eq!(store.begin_run(&a).unwrap(), 1);
    assert_eq!(store.begin_run(&b).unwrap(), 2);
    lab
}

#[test]
fn compare_command_by_tag_json_and_exit_codes() {
    let lab = lab_with_pair();
    // Both runs were measured to ±5% (`--quick`): by default the band widens to that.
    let out = lab.oslab(&["compare", "base", "new"]);
    out.assert_code(0);
    assert!(
        out.stdout
            .starts_with(&TABLE.lines().next().unwrap().replace(
                "noise band ±2%",
                "noise band ±5% (the runs' precision target; --noise sets the band)"
            )),
        "{out}"
    );
    let out = lab.oslab(&["compare", "base", "new", "--noise", "2"]);
    out.assert_code(0);
    assert_eq!(out.stdout, TABLE, "{out}");
    // By id, the same.
    assert_eq!(
        lab.oslab(&["compare", "1", "2", "--noise", "2"]).stdout,
        TABLE
    );

    let out = lab.oslab(&["compare", "base", "new", "--json", "--noise", "2"]);
    out.assert_code(0);
    let expected: Value = serde_json::from_str(JSON).unwrap();
    assert_eq!(out.json(), expected);

    // Something got slower: exit 1 only when asked.
    let out = lab.oslab(&[
        "compare",
        "base",
        "new",
        "--fail-on-regression",
        "--noise",
        "2",
    ]);
    out.assert_code(1);
    assert_eq!(out.stdout, TABLE);
    // B against itself: nothing changed.
    let out = lab.oslab(&["compare", "new", "new", "--fail-on-regression", "--json"]);
    out.assert_code(0);
    for r in out.json()["results"].as_array().unwrap() {
        assert_eq!(r["verdict"], "no_change", "{r}");
    }
    // A wider noise band turns the 1% change into... still within noise; 0% makes it slower.
    let out = lab.oslab(&["compare", "base", "new", "--noise", "0", "--json"]);
    let doc = out.json();
    let read = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["experiment"] == "syscall.read")
        .unwrap();
    assert_eq!(read["verdict"], "slower");
    assert_eq!(read["highlight"], false);

    // Another metric: per-sample minflt per op (0 and 0.001 alternating on both sides).
    let out = lab.oslab(&["compare", "base", "new", "--metric", "minflt", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["metric"], "minflt");

    lab.oslab(&["compare", "base", "nosuch"])
        .assert_user_error(&["nosuch", "show --list"]);
    lab.oslab(&["compare", "base", "new", "--metric", "bogus"])
        .assert_user_error(&["--metric bogus", "minflt"]);
    lab.oslab(&["compare", "base", "new", "--noise", "200"])
        .assert_user_error(&["--noise 200"]);
}

fn without_run_id(mut doc: Value) -> Value {
    doc.as_object_mut().unwrap().remove("run_id");
    doc
}

#[test]
fn export_import_round_trip_of_a_real_run() {
    let lab = Lab::new();
    lab.oslab(&[
        "run",
        "syscall.getppid",
        "synthetic.spin",
        "--quick",
        "--budget",
        "0.2",
        "--tag",
        "here",
    ])
    .assert_code(0);
    let file = lab.dir().join("run.json");
    let file_arg = file.to_str().unwrap();
    let out = lab.oslab(&["export", "here", "--format", "json", "-o", file_arg]);
    out.assert_code(0);
    assert!(out.stdout.is_empty(), "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["format"], "oslab-run");
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["run"]["id"], 1);
    // Without -o, the same document on stdout.
    let stdout: Value = lab.oslab(&["export", "1"]).json();
    assert_eq!(stdout, doc);

    // Into a fresh database: the same run, under the id that database gives it.
    let other = lab.dir().join("other.db");
    let out = lab.oslab_with(&other, &["import", file_arg], &[]);
    out.assert_code(0);
    assert!(out.stderr.contains("as run 1"), "{out}");
    let here = lab.oslab(&["show", "here", "--json"]).json();
    let there = lab
        .oslab_with(&other, &["show", "here", "--json"], &[])
        .json();
    assert_eq!(without_run_id(here.clone()), without_run_id(there));

    // Twice: found, nothing stored.
    let before = std::fs::read(&other).unwrap();
    let out = lab.oslab_with(&other, &["import", file_arg], &[]);
    out.assert_code(0);
    assert!(out.stderr.contains("already imported as run 1"), "{out}");
    assert_eq!(std::fs::read(&other).unwrap(), before);
    // Back into the database it came from: recognised as the local run.
    let out = lab.oslab(&["import", file_arg]);
    out.assert_code(0);
    assert!(out.stderr.contains("already there"), "{out}");
    let list = lab.oslab(&["show", "--list"]);
    assert_eq!(
        list.stdout.lines().filter(|l| l.contains("here")).count(),
        1,
        "{list}"
    );

    // CSV: a header, then one row per sample.
    let out = lab.oslab(&["export", "here", "--format", "csv"]);
    out.assert_code(0);
    let mut lines = out.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header[..18],
        [
            "run_id",
            "experiment",
            "params",
            "label",
            "process",
            "sample",
            "ops",
            "elapsed_ns",
            "ns_per_op",
            "utime_us",
            "stime_us",
            "maxrss_kb",
            "minflt",
            "majflt",
            "inblock",
            "oublock",
            "nvcsw",
            "nivcsw"
        ]
    );
    let samples: u64 = here["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["samples"].as_u64().unwrap())
        .sum();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len() as u64, samples);
    assert!(rows.iter().all(|r| r.split(',').count() == header.len()));
    assert!(
        rows.iter()
            .any(|r| r.starts_with("1,synthetic.spin,") && r.contains("ns=")),
        "{out}"
    );
}

#[test]
fn bad_imports_fail_cleanly_and_change_nothing() {
    let lab = lab_with_pair();
    let good = lab.oslab(&["export", "base"]);
    good.assert_code(0);
    let dir = lab.dir();
    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, &good.stdout[..good.stdout.len() / 2]).unwrap();
    let future = dir.join("future.json");
    std::fs::write(
        &future,
        good.stdout
            .replacen("\"format_version\": 1", "\"format_version\": 2", 1),
    )
    .unwrap();
    let foreign = dir.join("foreign.json");
    std::fs::write(&foreign, "{\"format\": \"hyperfine\", \"results\": []}").unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not json at all\n").unwrap();
    let missing = dir.join("missing.json");

    let before = std::fs::read(lab.db()).unwrap();
    for (file, needles) in [
        (&truncated, vec!["is not JSON", "oslab export"]),
        (&future, vec!["format_version 2", "upgrade oslab"]),
        (&foreign, vec!["not an oslab run export", "hyperfine"]),
        (&text, vec!["is not JSON"]),
        (&missing, vec!["cannot read"]),
    ] {
        let name = file.to_str().unwrap();
        let mut needles = needles;
        needles.push(name);
        lab.oslab(&["import", name]).assert_user_error(&needles);
        assert_eq!(
            std::fs::read(lab.db()).unwrap(),
            before,
            "importing {name} left the database as it was"
        );
    }
    // The good file: imported once (it is run 1 of this very database: already there).
    let good_file = dir.join("good.json");
    std::fs::write(&good_file, &good.stdout).unwrap();
    let out = lab.oslab(&["import", good_file.to_str().unwrap()]);
    out.assert_code(0);
    assert!(out.stderr.contains("holds run 1"), "{out}");
}

/// With repeats, the processes are the unit: B's median is 6% above A's, which the samples of
/// one process each would call a change, but A's own two processes already disagree by 12%,
/// so the two-stage CI straddles 1 and its own test finds nothing: "no change", where a
/// Mann-Whitney test over the samples (pseudoreplication) would have said p < 0.05. A 2×
/// change stands out all the same, and suite labels keep configurations with equal
/// parameters apart.
#[test]
fn repeats_make_the_spread_between_processes_count() {
    let one = |center: f64| result("syscall.getppid", &[], &spread(center, 0.005, 30));
    let a = run(1, "a", "6.1.0", vec![one(94.0), one(106.0)]);
    let b = run(2, "b", "6.1.0", vec![one(100.0), one(112.0)]);
    let flat = |r: &Run| {
        run(
            r.id,
            "x",
            "6.1.0",
            vec![one(r.results[0].samples[0].ns_per_op)],
        )
    };
    let single = compare(&flat(&a), &flat(&b));
    let c = single.pairs[0].comparison.as_ref().unwrap();
    assert_eq!(c.verdict.as_str(), "slower", "one process a side: {c:?}");

    let grouped = compare(&a, &b);
    let pair = &grouped.pairs[0];
    assert_eq!(pair.processes, (2, 2));
    let c = pair.comparison.as_ref().unwrap();
    assert!((c.ratio - 1.06).abs() < 0.03, "{c:?}");
    assert_eq!(c.verdict.as_str(), "no change", "{c:?}");
    assert_eq!(
        c.test,
        Some(oslab::analysis::compare::Test::Interval),
        "{c:?}"
    );
    let (lo, hi) = c.ci.unwrap();
    assert!(lo < 1.0 && hi > 1.0 && c.p.unwrap() >= 0.05, "{c:?}");

    let twice = run(2, "b", "6.1.0", vec![one(200.0), one(224.0)]);
    let c = compare(&a, &twice).pairs[0].comparison.clone().unwrap();
    assert_eq!(c.verdict.as_str(), "slower", "{c:?}");

    let labelled = |label: &str| ExperimentResult {
        label: Some(label.into()),
        ..one(100.0)
    };
    let a = run(1, "a", "6.1.0", vec![labelled("quiet"), labelled("loaded")]);
    let cmp = compare(&a, &a);
    assert_eq!(cmp.pairs.len(), 2);
    assert!(cmp.pairs.iter().all(|p| p.processes == (1, 1)));
}

//! Earlier runs on the same machine: a run stores, with each configuration, the medians this
//! database's earlier runs with the same settings gave for it, and from the third run on their
//! spread floors the interval (docs/measurement.md, "Where a rerun falls"). Real runs of
//! `syscall.getppid`, small budgets, one process each (the tests' default); no timing is
//! asserted.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use common::{Lab, num};
use serde_json::Value;

const QUICK: [&str; 4] = ["syscall.getppid", "--quick", "--budget", "0.3"];

/// The `configurations` of `doc`, by their `entry` parameter.
fn by_entry<'a>(doc: &'a Value, entry: &str) -> &'a Value {
    doc["configurations"]
        .as_array()
        .expect("configurations")
        .iter()
        .find(|c| c["params"]["entry"] == entry)
        .unwrap_or_else(|| panic!("no entry={entry} in {doc:#}"))
}

fn earlier(c: &Value) -> Vec<f64> {
    list(c, "earlier_medians")
}

fn list(c: &Value, key: &str) -> Vec<f64> {
    c[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is a list"))
        .iter()
        .map(|m| num(m, key))
        .collect()
}

/// That the interval of configuration `c` holds its median · e^(±half), to rounding.
fn assert_floored(c: &Value, half: f64) {
    let (lo, hi, median) = (
        num(&c["ci_low"], "ci_low"),
        num(&c["ci_high"], "ci_high"),
        num(&c["median"], "median"),
    );
    assert!(
        lo <= median * (-half).exp() * 1.000_001 && hi >= median * half.exp() * 0.999_999,
        "{lo} – {hi} around {median}, floor ±{half}"
    );
}

#[test]
fn earlier_runs_with_the_same_settings_floor_the_interval() {
    let lab = Lab::new();
    let first: Vec<Value> = (0..2).map(|_| lab.run_json(&QUICK, 0)).collect();
    for entry in ["call", "inline"] {
        assert_eq!(earlier(by_entry(&first[0], entry)), Vec::<f64>::new());
        assert_eq!(
            by_entry(&first[1], entry)["between_runs"],
            Value::Null,
            "one is too few"
        );
    }
    // Other settings: measured unlike the others, so none of them counts, nor it for them.
    let mut repeat2 = QUICK.to_vec();
    repeat2.extend(["--repeat", "2"]);
    let other = lab.run_json(&repeat2, 0);
    assert_eq!(earlier(by_entry(&other, "call")), Vec::<f64>::new());

    let third = lab.run_json(&QUICK, 0);
    history_follows_one_configuration(&lab, &first, &other, &third);
    for entry in ["call", "inline"] {
        let c = by_entry(&third, entry);
        let medians: Vec<f64> = first
            .iter()
            .map(|doc| num(&by_entry(doc, entry)["median"], "median"))
            .collect();
        // An earlier run that sat wholly in a slow kernel phase of the host is set apart
        // (docs/measurement.md §5): the two runs are then split between the lists.
        let slow = list(c, "earlier_slow_medians");
        if !slow.is_empty() {
            let mut both = [earlier(c), slow].concat();
            let mut expected = medians.clone();
            both.sort_by(f64::total_cmp);
            expected.sort_by(f64::total_cmp);
            assert_eq!(both, expected, "the two earlier runs, split\n{c:#}");
            eprintln!(
                "history: an earlier run of entry={entry} sat in a slow kernel phase and floors \
                 nothing; the floor of two is not checked this time"
            );
            continue;
        }
        assert_eq!(earlier(c), medians, "the two earlier runs, oldest first");
        let spread = num(&c["between_runs"], "between_runs");
        assert!(spread.is_finite() && spread >= 0.0, "{c:#}");
        // The floor: t(2) · √2 · the spread of the three medians, on a log scale.
        assert_floored(c, 4.303 * std::f64::consts::SQRT_2 * spread);
    }

    // Stored with the run: `show` and an export imported elsewhere give the same interval.
    let id = third["run_id"].to_string();
    let shown = lab.oslab(&["show", &id, "--json"]);
    shown.assert_code(0);
    assert_eq!(
        shown.json()["configurations"],
        third["configurations"],
        "show reproduces the run"
    );
    let file = lab.dir().join("third.json");
    let file_arg = file.to_str().unwrap();
    lab.oslab(&["export", &id, "--format", "json", "-o", file_arg])
        .assert_code(0);
    let elsewhere = lab.dir().join("elsewhere.db");
    lab.oslab_with(&elsewhere, &["import", file_arg], &[])
        .assert_code(0);
    let imported = lab.oslab_with(&elsewhere, &["show", "1", "--json"], &[]);
    imported.assert_code(0);
    let imported = imported.json();
    for entry in ["call", "inline"] {
        let (here, there) = (by_entry(&third, entry), by_entry(&imported, entry));
        for field in [
            "median",
            "ci_low",
            "ci_high",
            "between_runs",
            "earlier_medians",
        ] {
            assert_eq!(here[field], there[field], "{entry} {field}");
        }
    }
}

#[test]
fn one_earlier_run_floors_a_sweep_by_the_machines_spread() {
    let lab = Lab::new();
    let sweep = [
        "synthetic.spin",
        "--param",
        "ns=1000,1500,2000,2500,3000,3500",
        "--quick",
        "--budget",
        "0.3",
    ];
    let first = lab.run_json(&sweep, 0);
    let second = lab.run_json(&sweep, 0);
    let configurations = |doc: &Value| doc["configurations"].as_array().unwrap().clone();
    for c in configurations(&first) {
        assert_eq!(c["machine_floor"], Value::Null, "nothing earlier: {c:#}");
    }
    for c in configurations(&second) {
        assert_eq!(
            c["between_runs"],
            Value::Null,
            "one earlier run is too few of its own"
        );
        let floor = &c["machine_floor"];
        assert_eq!(floor["configurations"], 6, "{c:#}");
        let half = num(&floor["half"], "half");
        assert!(half >= 0.0, "{c:#}");
        assert_floored(&c, half);
    }
    let id = second["run_id"].to_string();
    let shown = lab.oslab(&["show", &id, "--json"]);
    shown.assert_code(0);
    assert_eq!(shown.json()["configurations"], second["configurations"]);
}

/// `oslab history`: the configuration's pooled median in every run, oldest first, as each run
/// stored it; the run measured with other settings says what changed, and so does the run
/// after it; a name that fits several configurations, or none, is a one-line user error.
fn history_follows_one_configuration(lab: &Lab, first: &[Value], other: &Value, third: &Value) {
    let out = lab.oslab(&[
        "history",
        "syscall.getppid",
        "--param",
        "entry=call",
        "--json",
    ]);
    out.assert_code(0);
    let doc = out.json();
    let runs = doc["runs"].as_array().expect("runs");
    let expected: Vec<&Value> = first.iter().chain([other, third]).collect();
    assert_eq!(runs.len(), expected.len(), "{doc:#}");
    for (point, run) in runs.iter().zip(&expected) {
        assert_eq!(point["run_id"], run["run_id"], "oldest first");
        assert!(
            point["host"]["canary_median_ns"]
                .as_f64()
                .is_some_and(|c| c > 0.0),
            "each run's canary: {point:#}"
        );
        assert!(
            point["host"]["kernel_canary_median_ns"]
                .as_f64()
                .is_some_and(|c| c > 0.0),
            "each run's kernel canary: {point:#}"
        );
        // Its kernel phases: a fast level, and slow samples among those read.
        let phase = &point["host"]["kernel_phase"];
        assert!(
            phase["fast_ns"].as_f64().is_some_and(|f| f > 0.0),
            "{point:#}"
        );
        let read = phase["samples"].as_u64().expect("kernel_phase.samples");
        let slow = phase["slow_samples"]
            .as_u64()
            .expect("kernel_phase.slow_samples");
        assert!(slow <= read, "{point:#}");
        assert_eq!(
            point["median"],
            by_entry(run, "call")["median"],
            "{point:#}"
        );
    }
    assert_eq!(doc["params"]["entry"], "call");
    assert_eq!(
        runs[0]["changed"],
        Value::Array(Vec::new()),
        "nothing before the first"
    );
    for changed in [&runs[2]["changed"], &runs[3]["changed"]] {
        assert!(
            changed.as_array().is_some_and(|c| !c.is_empty()),
            "the --repeat 2 run and the one after it changed a setting: {doc:#}"
        );
    }

    // Between the first two, same settings: nothing but the command line differed, and
    // that is not a change (nor the CPU choice's interrupt counts, which always grow).
    for point in &runs[1..2] {
        assert_eq!(point["changed"], Value::Array(Vec::new()), "{point:#}");
    }
    let page = lab.dir().join("history.html");
    let text = lab.oslab(&[
        "history",
        "syscall.getppid",
        "-p",
        "entry=call",
        "--html",
        page.to_str().unwrap(),
    ]);
    text.assert_code(0);
    assert!(
        text.stdout
            .starts_with("syscall.getppid entry=call: 4 run(s), oldest first"),
        "{text}"
    );
    assert!(text.stdout.contains("slow phases"), "{text}");
    // The page: a chart with a point per run, each run's id on the axis, the table.
    let html = std::fs::read_to_string(&page).expect("the history page");
    assert!(html.contains("data-chart=\"history\""), "the chart");
    assert_eq!(html.matches("<circle class=\"point\"").count(), 4);
    for point in runs {
        assert!(
            html.contains(&format!(">run {}<", point["run_id"])),
            "{point}"
        );
    }
    lab.oslab(&["history", "syscall.getppid"])
        .assert_user_error(&["entry=call", "entry=inline", "--param"]);
    lab.oslab(&["history", "nosuch.thing"])
        .assert_user_error(&["no stored run measured nosuch.thing"]);
    // A value no stored run has: the error lists the configurations there are.
    lab.oslab(&["history", "syscall.getppid", "-p", "entry=libc"])
        .assert_user_error(&[
            "with those parameters",
            "2 configuration(s)",
            "entry=call",
            "entry=inline",
        ]);
    lab.oslab(&["history", "syscall.getppid", "-p", "entry"])
        .assert_user_error(&["NAME=VALUE"]);
}

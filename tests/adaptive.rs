//! Processes added as a run goes (`run --max-processes`, `analysis::adaptive`): a configuration
//! whose processes differ by a known amount (synthetic.spin's `spread`: process k spins
//! k × spread ns more) gets processes up to the most and says so; one whose interval is within
//! the precision target at once gets none; one whose processes took its time budget gets none
//! either; the default run allows six; and each mistake in the option is one line. No timing is
//! asserted: the spread is made, not measured.

// The synthetic experiments run on every system; the process drills are Unix's.
#![cfg(unix)]

mod common;

use common::{Lab, num, results};
use serde_json::Value;

fn configurations(doc: &Value) -> &Vec<Value> {
    doc["configurations"].as_array().expect("configurations")
}

/// A quick run of processes that differ by design (process k spins k × 2 µs more), up to five
/// of them, within `budget` seconds.
fn made_spread(lab: &Lab, budget: &str) -> Value {
    lab.oslab_as_given(&[
        "run",
        "synthetic.spin",
        "--param",
        "ns=20000",
        "--param",
        "spread=2000",
        "--quick",
        "--max-processes",
        "5",
        "--budget",
        budget,
        "--json",
    ])
    .assert_code(0)
    .json()
}

#[test]
fn processes_that_differ_by_design_get_processes_up_to_the_most() {
    let lab = Lab::new();
    // Room for five processes' setup and samples: the budget bounds them too.
    let doc = made_spread(&lab, "30");
    assert_eq!(doc["settings"]["processes"], 3);
    assert_eq!(doc["settings"]["max_processes"], 5);
    let c = &configurations(&doc)[0];
    // Under a user-mode emulator (qemu-user) a process's own samples can spread wider than
    // the made 10% between processes (±58% within against ±10% between in one CI run): then
    // the rule's answer is "within", and the levels must say why.
    let emulated = results(&doc)[0]["emulation"].is_string();
    if emulated && c["stopped_adding"] == "within" {
        let within = num(&c["within_process"], "within_process");
        let between = num(&c["between_processes"], "between_processes");
        assert!(
            within >= between,
            "stopped at 'within' with it narrower: {c}"
        );
        eprintln!(
            "adaptive: under emulation the within-process level was the widest ({within:.3} against {between:.3}); the rest is not checked this time"
        );
        return;
    }
    // 20, 22, 24 µs… apart by 10% a process: the spread between processes is the widest level
    // and far wider than --quick's ±5% until the last.
    assert_eq!(c["processes"], 5, "{c}");
    assert_eq!(c["stopped_adding"], "most", "{c}");
    assert_eq!(results(&doc).len(), 5);
    // Each process's own median, as stored (a process taken wholly in a slow kernel phase of
    // the host is left out of the pooled figures, not of the run's results).
    let medians: Vec<f64> = results(&doc)
        .iter()
        .map(|r| num(&r["median"], "median"))
        .collect();
    // Neighbours are 10% apart by design, which a noisy host can swap; the first and the last
    // are 40% apart, which it does not.
    assert!(
        medians[4] > medians[0] * 1.15,
        "each added process spun 2 µs more: {medians:?}"
    );
    let shown = lab.oslab(&["show"]);
    shown.assert_code(0);
    for needle in [
        "pools the 5 worker processes",
        "--max-processes",
        "stopped adding",
        "5: at the most processes",
    ] {
        assert!(shown.stdout.contains(needle), "{needle}\n{shown}");
    }
}

#[test]
fn a_configuration_whose_processes_took_its_budget_gets_no_more() {
    // The same made spread, but a budget of 0.18 s. Each process gets the budget over
    // --max-processes 5 (0.036 s) and --quick's least time likewise (0.04 s): as the budget is
    // below the least time (0.2 s), no process stops early for precision, and three of them,
    // each warmed up (0.02 s) and sampled for its share, take more than three quarters of the
    // budget in wall time together: a fourth would overrun it. A share still holds some 30
    // samples of 1 ms, so a sample or two the host preempted stay outside the process's own
    // interval of its median. (At 0.05 s a share held about five, whose interval is their
    // whole range: on a loaded CI machine one preempted sample in each of two processes made
    // the within-process level ±164% and the widest, and the plan rightly stopped for that
    // three times running.) Up to three runs, should the within-process level still be the
    // widest.
    let mut tries = 0;
    let (lab, c) = loop {
        tries += 1;
        let lab = Lab::new();
        let c = configurations(&made_spread(&lab, "0.18"))[0].clone();
        if c["stopped_adding"] != "within" || tries == 3 {
            break (lab, c);
        }
        assert!(
            num(&c["within_process"], "within") >= num(&c["between_processes"], "between"),
            "stopped for the within-process level, which is not the widest: {c}"
        );
        eprintln!("within-process level widest (a preempted sample), run again: {c}");
    };
    assert_eq!(c["processes"], 3, "{c}");
    assert_eq!(c["stopped_adding"], "budget", "{c}");
    let shown = lab.oslab(&["show"]);
    shown.assert_code(0);
    assert!(
        shown
            .stdout
            .contains("3: another process would overrun the time budget"),
        "{shown}"
    );
}

#[test]
fn an_interval_within_the_target_gets_no_more_processes() {
    let lab = Lab::new();
    // A ±50% target: three processes of one spin meet it unless they are 2× apart.
    let doc = lab
        .oslab_as_given(&[
            "run",
            "synthetic.spin",
            "--param",
            "ns=20000",
            "--quick",
            "--precision",
            "50",
            "--max-processes",
            "6",
            // Room for six processes, should they be unstable (below).
            "--budget",
            "30",
            "--json",
        ])
        .assert_code(0)
        .json();
    let c = &configurations(&doc)[0];
    if c["unstable"] == true {
        // A slow phase of an emulator (qemu-user) can make one process 2× another: then
        // more processes are what could tell, up to the most.
        assert_eq!(c["processes"], 6, "{c}");
        return;
    }
    assert_eq!(c["processes"], 3, "{c}");
    // Met (`target`), or wider within each process than between them (`within`: more
    // processes would not narrow it; qemu-user's noise once gave 20.4, 21.0 and 20.5 µs
    // with a within-process spread of 1.6): either way no process is added.
    let stopped = c["stopped_adding"].as_str().unwrap_or("");
    assert!(["target", "within"].contains(&stopped), "{c}");
}

#[test]
fn a_standard_run_may_add_up_to_six_processes_and_a_quick_one_none() {
    let lab = Lab::new();
    let standard = lab
        .oslab_as_given(&[
            "run",
            "synthetic.spin",
            "--param",
            "ns=20000",
            "--budget",
            "0.6",
            "--precision",
            "50",
            "--json",
        ])
        .assert_code(0)
        .json();
    assert_eq!(standard["settings"]["max_processes"], 6, "{standard:#}");
    let c = &configurations(&standard)[0];
    let n = num(&c["processes"], "processes");
    assert!((3.0..=6.0).contains(&n), "{c}");
    assert!(c["stopped_adding"].is_string(), "{c}");
    let quick = lab
        .oslab_as_given(&["run", "synthetic.spin", "--quick", "--json"])
        .assert_code(0)
        .json();
    assert!(quick["settings"]["max_processes"].is_null(), "{quick:#}");
    let c = &configurations(&quick)[0];
    assert_eq!(c["processes"], 3, "{c}");
    assert!(c["stopped_adding"].is_null(), "{c}");
}

#[test]
fn each_mistake_in_max_processes_is_one_line() {
    let lab = Lab::new();
    for (args, needles) in [
        (
            vec!["--repeat", "4", "--max-processes", "3"],
            vec!["--max-processes 3", "(4, --repeat) to 1000"],
        ),
        (
            vec!["--max-processes", "1001"],
            vec!["--max-processes 1001", "to 1000"],
        ),
        (
            vec!["--repeat", "1", "--max-processes", "4"],
            vec!["--max-processes 4", "--repeat 2 or more"],
        ),
        (
            vec!["--max-processes", "4", "--cpu-turns", "0,1"],
            vec!["--max-processes", "cannot be used with", "--cpu-turns"],
        ),
        (vec!["--max-processes", "x"], vec!["--max-processes", "'x'"]),
    ] {
        let mut full = vec!["run", "synthetic.spin", "--quick"];
        full.extend(args);
        lab.oslab_as_given(&full).assert_user_error(&needles);
    }
    assert!(!lab.db().exists(), "nothing was stored");
}

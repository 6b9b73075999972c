//! Configurations of one run that differ in one compared parameter (the system call's path,
//! THP, the partner's CPU) are paired round by round: `show` has the section and the JSON
//! document the `paired` list, with the ratio's interval from the rounds and the unpaired one
//! beside it. No timing is asserted: only that the pairs are found and their figures hang
//! together.

#![cfg(unix)]

mod common;

use common::{Lab, num};

#[test]
fn the_two_paths_of_a_system_call_are_paired_round_by_round() {
    let lab = Lab::new();
    let doc = lab
        .oslab_as_given(&["run", "syscall.getppid", "--quick", "--duet", "--json"])
        .assert_code(0)
        .json();
    let paired = doc["paired"].as_array().expect("paired");
    assert_eq!(paired.len(), 1, "{doc:#}");
    let p = &paired[0];
    assert_eq!(p["configuration"], "syscall.getppid", "{p}");
    assert_eq!(
        (p["parameter"].as_str(), p["a"].as_str(), p["b"].as_str()),
        (Some("entry"), Some("inline"), Some("call"))
    );
    // Three rounds of three processes each: none is left out as a cold first one, but a
    // process taken wholly in a slow kernel phase of the host is, and its round with it. Each
    // round measured both in one worker, their samples in turn (a duet).
    let configurations = doc["configurations"].as_array().expect("configurations");
    let rounds = p["rounds"].as_u64().expect("rounds");
    assert!(
        (3 - left_out_whole(configurations)..=3).contains(&rounds),
        "{p}"
    );
    assert_eq!(p["in_one_process"], rounds, "{p}");
    for c in configurations {
        let duet = c["facts"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["name"] == "duet_pairs"))
            .unwrap_or_else(|| panic!("a duet's fact: {c:#}"));
        assert!(num(&duet["value"], "pairs") >= 1.0, "{duet}");
        let other = if c["params"]["entry"] == "call" {
            "inline"
        } else {
            "call"
        };
        let note = duet["note"].as_str().unwrap_or_default();
        assert!(note.contains(&format!("entry={other}")), "{note}");
    }
    let median = |entry: &str| {
        let c = configurations
            .iter()
            .find(|c| c["params"]["entry"] == entry)
            .expect("both paths measured");
        num(&c["median"], "median")
    };
    let ratio = num(&p["ratio"], "ratio");
    assert!(
        (ratio - median("call") / median("inline")).abs() < 1e-9 * ratio,
        "{p}"
    );
    let interval = p["paired"]
        .as_array()
        .expect("a paired interval from three rounds");
    let (lo, hi) = (num(&interval[0], "low"), num(&interval[1], "high"));
    assert!(0.0 < lo && lo <= hi, "{p}");
    let shown = lab.oslab(&["show"]);
    shown.assert_code(0);
    assert!(shown.stdout.contains("Paired within the run"), "{shown}");
    assert!(shown.stdout.contains("entry=call / inline"), "{shown}");
    // The HTML report has the same pairs, one table per run.
    let page = lab.dir().join("r.html");
    lab.oslab(&["report", "-o", page.to_str().expect("utf-8 path")])
        .assert_code(0);
    let html = std::fs::read_to_string(&page).expect("report written");
    assert!(html.contains("data-table=\"paired-run1\""), "{html}");
    assert_eq!(html.matches("data-pair-row").count(), 1);
    assert!(html.contains("entry=call / inline"));
}

#[test]
fn without_duet_each_configuration_has_workers_of_its_own() {
    let lab = Lab::new();
    let doc = lab
        .oslab_as_given(&["run", "syscall.getppid", "--quick", "--json"])
        .assert_code(0)
        .json();
    let paired = doc["paired"].as_array().expect("paired");
    assert_eq!(paired.len(), 1, "{doc:#}");
    let configurations = doc["configurations"].as_array().expect("configurations");
    let rounds = paired[0]["rounds"].as_u64().expect("rounds");
    assert!(
        (3 - left_out_whole(configurations)..=3).contains(&rounds),
        "{doc:#}"
    );
    assert_eq!(paired[0]["in_one_process"], 0, "{doc:#}");
    assert!(
        configurations
            .iter()
            .all(|c| !c["facts"].to_string().contains("duet_pairs")),
        "{doc:#}"
    );
}

#[test]
fn a_run_of_one_process_has_no_pairs_to_show() {
    let lab = Lab::new();
    // Lab::oslab runs one process unless told otherwise: no rounds to pair.
    let doc = lab.run_json(&["syscall.getppid", "--quick"], 0);
    let paired = doc["paired"].as_array().expect("paired");
    assert!(paired.iter().all(|p| p["paired"].is_null()), "{doc:#}");
    let shown = lab.oslab(&["show"]);
    assert!(!shown.stdout.contains("Paired within the run"), "{shown}");
    let page = lab.dir().join("r.html");
    lab.oslab(&["report", "-o", page.to_str().expect("utf-8 path")])
        .assert_code(0);
    let html = std::fs::read_to_string(&page).expect("report written");
    assert!(!html.contains("data-pair-row"));
}

/// How many processes the configurations left out whole, taken wholly in a slow kernel phase
/// of the host (each costs its round a pair), at most 3.
fn left_out_whole(configurations: &[serde_json::Value]) -> u64 {
    let n: usize = configurations
        .iter()
        .filter_map(|c| c["left_out_process_medians"].as_array())
        .map(Vec::len)
        .sum();
    (n as u64).min(3)
}

//! Pooling with the experiments' expectations, its figures and its notes, on hand-made
//! results.

use super::*;
use crate::model::{Fact, Status};

fn result(experiment: &str, values: &[f64], status: Status) -> ExperimentResult {
    ExperimentResult {
        status,
        reason: (status != Status::Ok).then(|| "broke".to_string()),
        facts: vec![Fact::new(
            "f",
            values.first().copied().unwrap_or(f64::NAN),
            "x",
            "n",
        )],
        other_cpus_busy: Some(0.5),
        duration_s: 1.0,
        ..ExperimentResult::from_values(experiment, &[], values, 100)
    }
}

/// Twenty samples from `c` to `c + 0.4`: a precise process centred near `c`.
fn around(c: f64) -> Vec<f64> {
    (0..20).map(|i| c + (i % 5) as f64 * 0.1).collect()
}

#[test]
fn repeats_of_a_configuration_become_one() {
    let results = vec![
        result("syscall.getpid", &[1.0, 2.0], Status::Ok),
        result("syscall.getppid", &[5.0], Status::Ok),
        result("syscall.getpid", &[3.0], Status::Ok),
        result("syscall.getpid", &[7.0, 8.0], Status::Ok),
    ];
    let pooled = pool(&results);
    assert_eq!(pooled.len(), 2);
    assert_eq!(pooled[0].processes, 3);
    assert_eq!(pooled[0].result.samples.len(), 5);
    assert_eq!(pooled[0].result.facts[0].value, 3.0, "median of 1, 3, 7");
    assert_eq!(pooled[0].result.duration_s, 3.0);
    assert_eq!(pooled[0].process_medians(), vec![1.5, 3.0, 7.5]);
    assert_eq!(pooled[0].figures().stats.unwrap().median, 3.0);
    assert!(pooled[0].is_of(&results[2]) && !pooled[0].is_of(&results[1]));
    assert_eq!(pooled[1].processes, 1);
    assert_eq!(
        process_numbers(&results),
        vec![(1, 3), (1, 1), (2, 3), (3, 3)]
    );
    assert_eq!(pooled[1].result, results[1]);
    // Processes at 1–2, 3 and 7–8 ns, 5× apart: unstable here, shown with the processes'
    // medians instead of an interval.
    let f = pooled[0].figures();
    assert_eq!(f.ci, None);
    assert_eq!(f.unstable, Some(vec![1.5, 3.0, 7.5]));
}

#[test]
fn a_failed_process_is_said() {
    let results = vec![
        result("syscall.getpid", &[1.0], Status::Ok),
        result("syscall.getpid", &[], Status::Failed),
    ];
    let pooled = pool(&results);
    assert_eq!(pooled[0].result.status, Status::Failed);
    assert_eq!(
        pooled[0].result.reason.as_deref(),
        Some("process 2 of 2: broke")
    );
    assert_eq!(
        pooled[0].result.samples.len(),
        1,
        "what was measured is kept"
    );
}

#[test]
fn a_cold_first_process_is_left_out_and_said() {
    let mut results = vec![
        result("syscall.stat", &around(130.0), Status::Ok),
        result("syscall.stat", &around(100.0), Status::Ok),
        result("syscall.stat", &around(100.3), Status::Ok),
        result("syscall.stat", &around(100.1), Status::Ok),
    ];
    let pooled = &pool(&results)[0];
    assert_eq!(pooled.processes, 4);
    assert_eq!(
        pooled.result.samples.len(),
        60,
        "the cold process's samples are out"
    );
    let f = pooled.figures();
    assert!(f.stats.unwrap().median < 101.0);
    let notes = process_notes(pooled);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("first-run effect"), "{notes:?}");
    assert!(notes[0].ends_with("is left out"), "{notes:?}");
    assert_eq!(pooled.process_medians().len(), 4, "its dot is still shown");

    // With three processes two would remain: it is said, and kept.
    results.pop();
    let pooled = &pool(&results)[0];
    assert_eq!(pooled.result.samples.len(), 60);
    let notes = process_notes(pooled);
    assert!(notes[0].contains("stays in"), "{notes:?}");
}

#[test]
fn earlier_runs_widen_the_interval_and_are_said() {
    let mut results = vec![
        result("syscall.stat", &around(100.0), Status::Ok),
        result("syscall.stat", &around(100.1), Status::Ok),
        result("syscall.stat", &around(100.2), Status::Ok),
    ];
    let alone = pool(&results)[0].figures().ci.unwrap();
    assert!(alone.0 > 99.0 && alone.1 < 101.0, "{alone:?}");
    assert_eq!(pool(&results)[0].between_runs(), None);
    for r in &mut results {
        r.earlier_medians = vec![90.0, 110.0, 95.0, 105.0, 100.0];
    }
    let pooled = &pool(&results)[0];
    let (spread, earlier) = pooled.between_runs().unwrap();
    assert_eq!(earlier, 5);
    assert!((0.06..0.08).contains(&spread), "{spread}");
    let (lo, hi) = pooled.figures().ci.unwrap();
    assert!(lo < 85.0 && hi > 115.0, "{lo} – {hi}");
    let notes = process_notes(pooled);
    assert!(
        notes.iter().any(|n| n.starts_with("run-sensitive: ±7.")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("5 earlier runs")),
        "{notes:?}"
    );
}

#[test]
fn earlier_runs_left_out_for_a_slow_phase_are_said_and_floor_nothing() {
    let steady = [99.0, 101.0, 100.0, 100.5];
    let with = |slow: &[f64]| {
        let results: Vec<ExperimentResult> = [100.0, 100.1, 100.2]
            .iter()
            .map(|&c| ExperimentResult {
                earlier_medians: steady.to_vec(),
                earlier_slow_medians: slow.to_vec(),
                ..result("syscall.stat", &around(c), Status::Ok)
            })
            .collect();
        let pooled = &pool(&results)[0];
        (pooled.figures().ci.unwrap(), process_notes(pooled))
    };
    let (ci, notes) = with(&[]);
    assert!(
        !notes.iter().any(|n| n.contains("slow phases")),
        "{notes:?}"
    );
    let (ci_with, notes) = with(&[135.0]);
    // The run left out moves no interval: the floor is the steady runs' alone.
    assert_eq!(ci, ci_with);
    let note = notes.iter().find(|n| n.contains("slow phases")).unwrap();
    assert!(
        note.contains("1 of this machine's 5 earlier runs")
            && note.contains("its median 135 ns")
            && note.contains("does not floor the interval"),
        "{note}"
    );
    let (_, notes) = with(&[135.0, 128.0]);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2 of this machine's 6") && n.contains("135 ns, 128 ns")),
        "{notes:?}"
    );
}

/// Three processes near `c` of each of `n` configurations, each with `earlier` as its
/// earlier runs' medians.
fn configurations(n: usize, c: f64, earlier: &[f64]) -> Vec<ExperimentResult> {
    (0..n)
        .flat_map(|i| {
            (0..3).map(move |k| ExperimentResult {
                params: [("n".to_string(), i.to_string())].into(),
                earlier_medians: earlier.to_vec(),
                ..result("syscall.stat", &around(c + k as f64 * 0.1), Status::Ok)
            })
        })
        .collect()
}

#[test]
fn one_earlier_run_floors_by_the_machines_spread_over_the_configurations() {
    // Eight configurations at 100.2 where the last run gave 105: d = ln(100.2 / 105) each.
    let pooled = pool(&configurations(8, 100.0, &[105.0]));
    assert_eq!(pooled.len(), 8);
    let machine = pooled[0].machine.expect("a machine floor");
    assert_eq!(machine.configurations, 8);
    let (lo, hi) = pooled[0].figures().ci.unwrap();
    assert!(
        lo < 92.0 && hi > 109.0,
        "covers a rerun as far off as the last: {lo} – {hi}"
    );
    let (own_lo, own_hi) = pooled[0].own_figures().ci.unwrap();
    assert!(own_lo > 99.0 && own_hi < 101.5, "{own_lo} – {own_hi}");
    let levels = crate::report::levels::Levels::of(&pooled[0]).unwrap();
    assert_eq!(
        levels.runs.map(|(_, from)| from.describe()).as_deref(),
        Some("the machine's, 8 configurations")
    );
    // The adaptive plan weighs the configuration's own levels only.
    assert_eq!(
        crate::report::levels::widths(&pooled[0]).unwrap().runs,
        None
    );
}

#[test]
fn the_machines_floor_needs_configurations_and_yields_to_their_own_runs() {
    assert!(
        pool(&configurations(5, 100.0, &[105.0]))[0]
            .machine
            .is_none()
    );
    assert!(pool(&configurations(8, 100.0, &[]))[0].machine.is_none());
    // Two earlier runs each: their own spread floors them.
    let pooled = pool(&configurations(8, 100.0, &[105.0, 95.0]));
    assert!(pooled[0].machine.is_none());
    assert!(pooled[0].between_runs().is_some());
}

#[test]
fn processes_far_apart_are_said_and_widen_the_interval() {
    let results = vec![
        result("syscall.stat", &around(100.0), Status::Ok),
        result("syscall.stat", &around(108.0), Status::Ok),
        result("syscall.stat", &around(95.0), Status::Ok),
    ];
    let pooled = &pool(&results)[0];
    let notes = process_notes(pooled);
    assert!(
        notes.iter().any(|n| n.starts_with("layout-sensitive")),
        "{notes:?}"
    );
    // Student's t over three medians 6.6 apart (sd): ±16 around the pooled median.
    let (lo, hi) = pooled.figures().ci.unwrap();
    assert!(lo < 90.0 && hi > 110.0, "{lo} – {hi}");
}

#[test]
fn a_process_apart_is_said_and_left_out_of_the_interval_only() {
    // Six processes, the second at a level of its own 24% above the others.
    let results: Vec<ExperimentResult> = [160.0, 199.0, 160.5, 161.0, 160.2, 159.8]
        .iter()
        .map(|&c| result("syscall.read", &around(c), Status::Ok))
        .collect();
    let pooled = &pool(&results)[0];
    let notes = process_notes(pooled);
    let note = notes
        .iter()
        .find(|n| n.starts_with("a process apart"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert!(
        note.contains("process 2 of 6 at 199 ns, +24% from the others' 160 ns – 161 ns")
            && note.contains("counts it (+0.1% against the others' samples alone)")
            && note.contains("spread between processes is the other 5's"),
        "{note}"
    );
    assert!(
        !notes.iter().any(|n| n.starts_with("layout-sensitive")),
        "{notes:?}"
    );
    // The median counts its samples. Below it the interval is the five's (Student's t over
    // all six would reach 141 ns); above it the bootstrap over the processes still reaches
    // toward the process apart: a rerun that drew three processes of six there would move
    // its median half way (with equal samples a process, as here, one time in 16).
    let f = pooled.figures();
    let median = f.stats.unwrap().median;
    assert!((160.0..161.5).contains(&median), "{median}");
    let (lo, hi) = f.ci.unwrap();
    assert!(lo > 158.0 && (175.0..199.0).contains(&hi), "{lo} – {hi}");
}

#[test]
fn processes_left_out_whole_for_a_slow_phase_are_said() {
    // Two of five processes of a null call wholly in a slow kernel phase.
    let whole: Vec<usize> = (0..40).collect();
    let results: Vec<ExperimentResult> = [vec![], whole.clone(), vec![], whole, vec![]]
        .iter()
        .map(|slow| ExperimentResult {
            samples: crate::analysis::host::phased_samples(40, slow),
            ..result("syscall.getppid", &[1.0], Status::Ok)
        })
        .collect();
    let pooled = pool(&results);
    let notes = process_notes(&pooled[0]).join("\n");
    assert!(
        notes.contains("80 are left out (with 2 processes taken wholly in them, left out whole)"),
        "{notes}"
    );
}

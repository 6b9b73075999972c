//! The ladder's own figures: derived rungs over processes.

use super::*;

pub(super) fn result(
    experiment: &str,
    params: &[(&str, &str)],
    values: &[f64],
) -> ExperimentResult {
    ExperimentResult {
        duration_s: 1.0,
        ..ExperimentResult::from_values(experiment, params, values, 100)
    }
}

/// The ladder of `results`, pooled as every view pools them.
pub(super) fn ladder_of_results(results: &[ExperimentResult]) -> Ladder {
    let pooled = pool(results);
    ladder_of(&pooled, &figures_of(&pooled))
}

/// A configuration measured by one process per center: 100 precise samples around each
/// (±0.1%), so that the samples alone say the figure is known to a fraction of a percent.
fn processes(experiment: &str, centers: &[f64]) -> Vec<ExperimentResult> {
    centers
        .iter()
        .map(|c| {
            let values: Vec<f64> = (0..100)
                .map(|i| c * (1.0 + (i % 5) as f64 * 2e-4))
                .collect();
            result(experiment, &[], &values)
        })
        .collect()
}

#[test]
fn a_derived_rung_covers_the_spread_between_processes() {
    // Each process is precise (samples within ±0.1%), the processes of ctxswitch.pipe differ
    // by ±10%: the difference must not claim the precision of the samples.
    let mut results = processes("ctxswitch.pipe", &[4500.0, 5000.0, 5500.0]);
    results.extend(processes(
        "ctxswitch.pipe_noswitch",
        &[1400.0, 1380.0, 1420.0],
    ));
    let ladder = ladder_of_results(&results);
    let rung = ladder
        .rungs
        .iter()
        .find(|r| r.status.starts_with("derived"))
        .expect("the derived rung");
    let (lo, hi) = rung.ci.unwrap();
    assert!(lo <= rung.median && rung.median <= hi);
    // Welch over the medians: se = sqrt(500²/3 + 20²/3) ≈ 289, t(2) = 4.303, ÷ 2 ≈ ±622.
    assert!(hi - lo > 1000.0, "{lo} – {hi}");
    // One process each: the samples' bootstrap alone, narrow.
    let single = [
        result("ctxswitch.pipe", &[], &[5000.0, 5001.0, 4999.0, 5000.5]),
        result(
            "ctxswitch.pipe_noswitch",
            &[],
            &[1400.0, 1401.0, 1399.0, 1400.5],
        ),
    ];
    let ladder = ladder_of_results(&single);
    let (lo, hi) = ladder
        .rungs
        .iter()
        .find(|r| r.status == "derived")
        .unwrap()
        .ci
        .unwrap();
    assert!(hi - lo < 5.0, "{lo} – {hi}");
}

#[test]
fn pinning_names_the_kind_of_core_on_a_heterogeneous_cpu() {
    use crate::model::env::{CoreKind, Environment};
    let kind = |name: &str, cpus: &[usize]| CoreKind {
        name: name.into(),
        cpus: cpus.to_vec(),
        ..CoreKind::default()
    };
    let env = Environment {
        core_kinds: vec![
            kind("ARM Cortex-A53 r0p4", &[0, 1, 2, 3]),
            kind("ARM Cortex-A72 r0p2", &[4, 5]),
        ],
        ..Environment::default()
    };
    let mut settings = crate::model::RunSettings {
        cpus: vec![5],
        ..Default::default()
    };
    assert_eq!(
        pinning(&settings, &env),
        "pinned to CPU 5 (ARM Cortex-A72 r0p2 cores)"
    );
    settings.cpu_turns = vec![5, 4];
    assert_eq!(
        pinning(&settings, &env),
        "processes pinned to CPUs 5, 4 in turn (ARM Cortex-A72 r0p2 cores)"
    );
    settings.cpu_turns = vec![3, 5];
    assert!(pinning(&settings, &env).contains("MIXED kinds of core"));
    // One kind of core: nothing to say.
    settings.cpu_turns.clear();
    assert_eq!(
        pinning(&settings, &Environment::default()),
        "pinned to CPU 5"
    );
    settings.cpu_choice = Some("the fewest device interrupts since boot (3; CPU 4: 9)".into());
    assert_eq!(
        crate::report::env_table::where_pinned(&settings),
        "pinned to CPU 5, the fewest device interrupts since boot (3; CPU 4: 9)"
    );
}

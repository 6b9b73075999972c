//! Pooling on hand-made results, with expectations given by the test.

use super::*;
use crate::analysis::validate::{Bound, Metric};

fn result(values: &[f64]) -> ExperimentResult {
    ExperimentResult::from_values("syscall.getpid", &[], values, 100)
}

/// Every experiment's figures move with the kernel phases alone (`PhaseBound`).
fn phase_bound(_: &str) -> bool {
    true
}

/// No experiment known: the checks stay as stored.
fn none(_: &ExperimentResult) -> Option<Vec<Expectation>> {
    None
}

#[test]
fn a_configuration_s_processes_become_one_result() {
    let results = vec![result(&[1.0, 2.0]), result(&[3.0]), result(&[2.0, 2.5])];
    let pooled = pool(&results, &none, phase_bound);
    assert_eq!(pooled.len(), 1);
    assert_eq!(pooled[0].processes, 3);
    assert_eq!(pooled[0].result.samples.len(), 5);
    assert_eq!(pooled[0].process_medians(), vec![1.5, 3.0, 2.25]);
    assert_eq!(pooled[0].rounds.len(), 3);
    assert_eq!(pooled[0].duet, vec![false; 3]);
}

#[test]
fn the_given_expectations_are_checked_over_the_pooled_counts() {
    let results = vec![result(&[1.0, 2.0]), result(&[3.0])];
    // An expectation no result meets: a page fault per operation, which none counted.
    let faults = |_: &ExperimentResult| {
        Some(vec![Expectation::new(
            Metric::Rusage("minflt"),
            Bound::AtLeast(1.0),
            "a fault per operation",
        )])
    };
    let checked = &pool(&results, &faults, phase_bound)[0].result;
    assert!(!checked.validation.is_empty(), "checked again");
    let kept = &pool(&results, &none, phase_bound)[0].result;
    assert_eq!(kept.validation, results[0].validation, "kept as stored");
}

/// Processes of 40 samples each at 165 ns, those at each one's `slow` indices at 210 ns in a
/// slow kernel phase (`analysis::host::phased_samples`).
fn phased_processes(slow: &[Vec<usize>]) -> Vec<ExperimentResult> {
    slow.iter()
        .map(|slow| ExperimentResult {
            samples: crate::analysis::host::phased_samples(40, slow),
            ..result(&[1.0])
        })
        .collect()
}

#[test]
fn samples_of_a_slow_kernel_phase_are_left_out_of_every_figure() {
    // The second process's samples 5..25 taken in a slow phase (210 ns against 165).
    let phased: Vec<usize> = (5..25).collect();
    let results = phased_processes(&[vec![], phased, vec![]]);
    let pooled = &pool(&results, &none, phase_bound)[0];
    assert_eq!(pooled.result.samples.len(), 100);
    assert_eq!(pooled.process_medians(), vec![165.0; 3]);
    assert_eq!(pooled.median(), Some(165.0));
    // The host's figures still count every sample, and say the phase was left out.
    let phase = pooled.host().unwrap().kernel_phase.unwrap();
    assert_eq!((phase.samples, phase.slow_samples), (120, 20));
    assert!(phase.in_phases && phase.left_out);
    assert_eq!(phase.left_out_samples, 20);
    // An experiment that leaves work in the kernel behind it keeps every sample.
    let kept = &pool(&results, &none, |_| false)[0];
    assert_eq!(kept.median(), Some(165.0));
    assert_eq!(kept.process_medians()[1], 187.5);
    assert!(!kept.host().unwrap().kernel_phase.unwrap().left_out);
}

#[test]
fn a_process_taken_wholly_in_a_slow_phase_is_left_out_whole() {
    // Two processes of five wholly in a slow phase (210 ns against 165), as long as each:
    // the three steady ones stand for the configuration, and the run says it ran five.
    let whole: Vec<usize> = (0..40).collect();
    let results = phased_processes(&[vec![], whole.clone(), vec![], whole, vec![]]);
    let pooled = &pool(&results, &none, phase_bound)[0];
    assert_eq!(pooled.processes, 5);
    assert_eq!(pooled.process_medians(), vec![165.0; 3]);
    assert_eq!(pooled.median(), Some(165.0));
    let phase = pooled.host().unwrap().kernel_phase.unwrap();
    assert_eq!((phase.slow_samples, phase.left_out_samples), (80, 80));
    assert_eq!(phase.left_out_processes, 2);
    assert_eq!(pooled.left_out_medians, vec![210.0; 2]);
    // With them the median was 165 too (120 of 200 samples): the figure did not move.
    assert_eq!(phase.median_shift, Some(0.0));
}

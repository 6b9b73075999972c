//! Pooling on hand-made results, with expectations given by the test.

use super::*;
use crate::analysis::validate::{Bound, Metric};

fn result(values: &[f64]) -> ExperimentResult {
    ExperimentResult::from_values("syscall.getpid", &[], values, 100)
}

/// No experiment known: the checks stay as stored.
fn none(_: &ExperimentResult) -> Option<Vec<Expectation>> {
    None
}

#[test]
fn a_configuration_s_processes_become_one_result() {
    let results = vec![result(&[1.0, 2.0]), result(&[3.0]), result(&[2.0, 2.5])];
    let pooled = pool(&results, &none);
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
    let checked = &pool(&results, &faults)[0].result;
    assert!(!checked.validation.is_empty(), "checked again");
    let kept = &pool(&results, &none)[0].result;
    assert_eq!(kept.validation, results[0].validation, "kept as stored");
}

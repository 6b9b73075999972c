use super::*;
use crate::model::Fact;
use crate::store::tests::{run, syscall_result};

/// A result of `copies` copies whose every sample took `ns` per operation.
fn copy_result(copies: Copies, ns: f64) -> ExperimentResult {
    let mut r = syscall_result();
    copies.record(&mut r.params);
    for s in &mut r.samples {
        s.ns_per_op = ns;
        s.ops = 1000;
        s.elapsed_ns = ns * 1000.0;
    }
    r
}

fn processes(count: u32) -> Copies {
    Copies {
        count,
        mode: Mode::Processes,
    }
}

#[test]
fn processes_sum_their_copies_and_efficiency_is_against_one_copy() {
    let one = copy_result(processes(1), 100.0);
    // Two copies, each half as fast: the same total, 50% efficiency.
    let two = vec![copy_result(processes(2), 200.0); 2];
    // Four copies on a two-CPU machine: oversubscribed.
    let four = vec![copy_result(processes(4), 400.0); 4];
    let mut results = vec![one];
    results.extend(two);
    results.extend(four);
    results.push(syscall_result()); // no copies: no curve
    let mut run = run(None, 1.0, results);
    run.environment.logical_cpus = Some(2);
    let curves = curves(&run);
    assert_eq!(curves.len(), 1);
    let c = &curves[0];
    assert_eq!(c.mode, Mode::Processes);
    assert!(!c.name.contains('×'), "{}", c.name);
    let totals: Vec<(u32, f64)> = c.points.iter().map(|p| (p.copies, p.total)).collect();
    assert_eq!(totals.len(), 3);
    for (copies, total) in totals {
        assert!((total - 1e7).abs() < 1.0, "{copies}: {total}");
    }
    let eff: Vec<f64> = c.points.iter().filter_map(|p| p.efficiency).collect();
    assert!((eff[0] - 1.0).abs() < 1e-9 && (eff[1] - 0.5).abs() < 1e-9);
    assert_eq!(eff.len(), 2, "none where oversubscribed");
    assert!(c.points[2].oversubscribed && !c.points[1].oversubscribed);
    let text = section(&run);
    assert!(
        text.contains("4*") && text.contains("oversubscribed"),
        "{text}"
    );
    assert!(text.contains("50%") && text.contains("10.0 M/s"), "{text}");
    let doc = document(&run);
    assert_eq!(doc[0]["points"][1]["efficiency"], json!(0.5));
}

#[test]
fn threads_add_their_companions_facts() {
    let threads = |count| Copies {
        count,
        mode: Mode::Threads,
    };
    let one = copy_result(threads(1), 100.0);
    let mut three = copy_result(threads(3), 100.0);
    for copy in [2, 3] {
        three.facts.push(Fact {
            name: copy_fact_name(copy),
            value: 200.0,
            unit: "ns/op".into(),
            note: String::new(),
        });
    }
    let run = run(None, 1.0, vec![one, three]);
    let c = &curves(&run)[0];
    assert_eq!(c.mode, Mode::Threads);
    let p = &c.points[1];
    // 10 M/s measured, 5 M/s each companion.
    assert!((p.total - 2e7).abs() < 1.0, "{}", p.total);
    assert!((p.efficiency.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert!(section(&run).contains("copies as threads"));
}

#[test]
fn a_curve_without_one_copy_has_no_efficiency() {
    let run = run(None, 1.0, vec![copy_result(processes(2), 10.0); 2]);
    let c = &curves(&run)[0];
    assert_eq!(c.points[0].efficiency, None);
    assert!(section(&run).contains('–'));
}

#[test]
fn compare_pairs_the_curves_both_runs_measured() {
    let a = run(
        None,
        1.0,
        vec![
            copy_result(processes(1), 100.0),
            copy_result(processes(2), 100.0),
        ],
    );
    let b = run(
        None,
        2.0,
        vec![
            copy_result(processes(1), 100.0),
            copy_result(processes(2), 200.0),
        ],
    );
    let text = compare_section(&a, &b);
    assert!(text.contains("B/A") && text.contains("0.50"), "{text}");
    assert!(text.contains("100%") && text.contains("50%"), "{text}");
    let doc = compare_document(&a, &b);
    assert_eq!(doc[0]["b"][1]["efficiency"], json!(0.5));
    let plain = run(None, 3.0, vec![syscall_result()]);
    assert!(compare_section(&a, &plain).is_empty());
}

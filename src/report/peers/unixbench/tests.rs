use proptest::prelude::*;

use super::*;
use crate::model::ExperimentResult;
use crate::report::pool::pool;

/// A result of `test` at `ns` per loop (a few samples around it), with `copies` copies.
fn result(test: &Test, ns: f64, copies: Option<u32>) -> ExperimentResult {
    let mut params: Vec<(&str, String)> = test
        .config
        .params
        .iter()
        .map(|(k, v)| (*k, v.to_string()))
        .collect();
    if let Some(n) = copies {
        params.push((COPIES_PARAM, n.to_string()));
    }
    let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let values: Vec<f64> = (0..20)
        .map(|i| ns * (1.0 + (i % 5) as f64 * 1e-4))
        .collect();
    ExperimentResult {
        label: Some(test.label().to_string()),
        duration_s: 1.0,
        ..ExperimentResult::from_values(test.experiment(), &pairs, &values, 100)
    }
}

fn every_test(copies: Option<u32>) -> Vec<ExperimentResult> {
    TESTS.iter().map(|t| result(t, 1000.0, copies)).collect()
}

#[test]
fn the_table_holds_unixbenchs_twelve_index_tests_and_baselines() {
    assert_eq!(TESTS.len(), 12);
    let base: Vec<(&str, f64)> = TESTS.iter().map(|t| (t.program, t.baseline)).collect();
    assert!(base.contains(&("dhry2reg", 116_700.0)));
    assert!(base.contains(&("whetstone-double", 55.0)));
    assert!(base.contains(&("shell8", 6.0)));
    assert!(base.contains(&("syscall", 15_000.0)));
    // Every suite configuration is a test of the table, once, in the suite's order.
    let suite = crate::experiment::selection::find_suite("unixbench").unwrap();
    assert_eq!(suite.configs.len(), TESTS.len());
    for (c, t) in suite.configs.iter().zip(TESTS) {
        assert_eq!(
            (c.label, c.experiment, c.params),
            (t.label(), t.experiment(), t.config.params)
        );
    }
}

#[test]
fn units_convert_from_the_time_per_loop() {
    assert!((Unit::Lps.of(1000.0, 0.0) - 1e6).abs() < 1e-6);
    assert!((Unit::Lpm.of(1e9, 0.0) - 60.0).abs() < 1e-9);
    assert!((Unit::Mwips.of(2e6, 0.0) - 5000.0).abs() < 1e-9);
    // 1024 bytes per loop, a loop per microsecond: 1e6 KB per second.
    assert!((Unit::KBps.of(1000.0, 1024.0) - 1e6).abs() < 1e-6);
}

#[test]
fn an_index_is_ten_times_the_ratio_to_the_baseline() {
    let pooled = pool(&[result(&TESTS[11], 1000.0, None)]);
    let e = entry(&pooled[0]).unwrap();
    assert_eq!(e.test.program, "syscall");
    assert!((e.value() - 1e6).abs() < 1e3);
    assert!((e.index() - 1e6 / 15_000.0 * 10.0).abs() < 1.0);
    let (lo, hi) = e.value_range().unwrap();
    assert!(lo <= e.value() && e.value() <= hi);
}

#[test]
fn the_score_needs_every_test_and_names_the_missing() {
    let mut results = every_test(None);
    let all = of(&pool(&results));
    assert_eq!(all.len(), 1);
    assert!(all[0].missing.is_empty());
    let indexes: Vec<f64> = all[0].entries.iter().map(Entry::index).collect();
    assert!((all[0].score().unwrap() - geometric_mean(&indexes).unwrap()).abs() < 1e-9);
    let text = section(&pool(&results));
    assert!(
        text.contains("System Benchmarks Index Score (1 copy): "),
        "{text}"
    );
    assert!(text.contains("MWIPS") && text.contains("KBps") && text.contains("lpm"));

    results.retain(|r| r.experiment != "unixbench.execl");
    let g = &of(&pool(&results))[0];
    assert_eq!(g.missing, vec!["Execl Throughput"]);
    assert_eq!(g.score(), None);
    assert!(section(&pool(&results)).contains("1 of 12 tests missing: Execl Throughput"));
}

#[test]
fn copies_make_groups_of_their_own_whose_values_are_totals() {
    let mut results = every_test(None);
    results.extend(every_test(Some(2)));
    // Two worker processes of the 2-copies syscall test pool as one configuration.
    results.push(result(&TESTS[11], 1000.0, Some(2)));
    let groups = of(&pool(&results));
    assert_eq!(groups.iter().map(|g| g.copies).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(groups[1].title(), "2 copies");
    for (one, two) in groups[0].entries.iter().zip(&groups[1].entries) {
        assert!(
            (two.value() / one.value() - 2.0).abs() < 1e-3,
            "{}",
            one.test.label()
        );
    }
    let ratio = groups[1].score().unwrap() / groups[0].score().unwrap();
    assert!((ratio - 2.0).abs() < 1e-3);
    let doc = document(&pool(&results));
    assert_eq!(doc.as_array().unwrap().len(), 2);
    assert_eq!(doc[1]["copies"], 2);
    assert_eq!(doc[0]["tests"].as_array().unwrap().len(), 12);
}

#[test]
fn other_results_make_no_section() {
    let r = ExperimentResult::from_values("syscall.getpid", &[], &[50.0, 51.0], 100);
    assert!(section(&pool(std::slice::from_ref(&r))).is_empty());
    assert_eq!(document(&pool(&[r])), Value::Null);
    // A file copy at other sizes is not an index test.
    let other = ExperimentResult::from_values(
        "unixbench.file_copy",
        &[("bufsize", "512"), ("maxblocks", "10")],
        &[50.0],
        100,
    );
    assert!(test_of(&other).is_none());
}

proptest! {
    #[test]
    fn the_geometric_mean_lies_between_the_extremes(values in prop::collection::vec(1e-3f64..1e6, 1..20)) {
        let g = geometric_mean(&values).unwrap();
        let min = values.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = values.iter().cloned().fold(0.0, f64::max);
        prop_assert!(g >= min * (1.0 - 1e-9) && g <= max * (1.0 + 1e-9));
    }

    #[test]
    fn scaling_every_index_scales_the_mean(values in prop::collection::vec(1e-3f64..1e6, 1..20), k in 1e-3f64..1e3) {
        let scaled: Vec<f64> = values.iter().map(|v| v * k).collect();
        let ratio = geometric_mean(&scaled).unwrap() / geometric_mean(&values).unwrap();
        prop_assert!((ratio / k - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_faster_loop_is_a_higher_value(ns in 1.0f64..1e9, faster in 1.01f64..100.0) {
        for unit in [Unit::Lps, Unit::Lpm, Unit::KBps, Unit::Mwips] {
            prop_assert!(unit.of(ns / faster, 1024.0) > unit.of(ns, 1024.0));
        }
    }
}

#[test]
fn no_mean_of_nothing_or_of_a_zero() {
    assert_eq!(geometric_mean(&[]), None);
    assert_eq!(geometric_mean(&[1.0, 0.0]), None);
    assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
}

#[test]
fn unixbench_statistic_drops_the_lowest_third_and_sums_the_copies() {
    // One copy, ten passes: 1e9/ns loops a second; the three slowest passes are dropped.
    let slow_three = [2000.0, 2000.0, 2000.0];
    let copy: Vec<f64> = slow_three.iter().copied().chain([1000.0; 7]).collect();
    let (ns, kept) = unixbench_statistic(std::slice::from_ref(&copy)).unwrap();
    assert_eq!(kept, 7);
    assert!((ns - 1000.0).abs() < 1e-9, "{ns}");
    // The kept rates' geometric mean: passes at 1e6 and 4e6 loops/s give 2e6 (500 ns).
    let (ns, kept) = unixbench_statistic(&[vec![1000.0, 250.0]]).unwrap();
    assert_eq!(kept, 2);
    assert!((ns - 500.0).abs() < 1e-9, "{ns}");
    // Two copies: each pass's rate is the sum; the result is per copy.
    let (ns, kept) = unixbench_statistic(&[copy.clone(), copy]).unwrap();
    assert_eq!(kept, 7);
    assert!((ns - 1000.0).abs() < 1e-9, "{ns}");
    // Three passes keep two; no pass, no statistic.
    assert_eq!(unixbench_statistic(&[vec![1.0, 2.0, 3.0]]).unwrap().1, 2);
    assert!(unixbench_statistic(&[vec![]]).is_none());
    assert!(unixbench_statistic(&[]).is_none());
}

use super::*;
use crate::model::equivalence::Cell;
use proptest::prelude::*;
use serde_json::json;

fn close(x: f64, y: f64, tol: f64) -> bool {
    (x - y).abs() <= tol
}

#[test]
fn erfc_known_values() {
    // Abramowitz & Stegun, table 7.1.
    assert!(close(erfc(0.0), 1.0, 1e-7));
    assert!(close(erfc(0.5), 0.479_500_122, 1e-7));
    assert!(close(erfc(1.0), 0.157_299_207, 1e-7));
    assert!(close(erfc(2.0), 0.004_677_735, 1e-8));
    assert!(close(erfc(-1.0), 1.842_700_793, 1e-7));
}

/// Known answers, computed independently from the textbook formulas (ranks with average
/// ties, tie-corrected variance, continuity correction ½), as scipy.stats.mannwhitneyu
/// with method="asymptotic" gives them.
#[test]
fn mann_whitney_known_values() {
    // Complete separation, n = 5 + 5: U = 25 for b, z = 2.50672, p = 0.012186.
    let t = mann_whitney_u(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
    assert_eq!(t.u, 25.0);
    assert!(close(t.z, 2.506_718, 1e-5), "{t:?}");
    assert!(close(t.p, 0.012_186, 1e-5), "{t:?}");

    // With ties: a = 1 2 2 3 3, b = 2 3 3 4 5. Ranks: 1→1, 2→3 (×3), 3→6.5 (×4), 4→9,
    // 5→10. R_b = 3 + 6.5 + 6.5 + 9 + 10 = 35, U_b = 20; tie term 24 + 60 = 84;
    // var = 25/12 · (11 − 84/90) = 20.9722; z = (20 − 12.5 − 0.5)/4.5795 = 1.52854;
    // p = 0.126380.
    let t = mann_whitney_u(&[1.0, 2.0, 2.0, 3.0, 3.0], &[2.0, 3.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!(t.u, 20.0);
    assert!(close(t.z, 1.528_537, 1e-5), "{t:?}");
    assert!(close(t.p, 0.126_380, 1e-5), "{t:?}");

    // Identical samples: U at its mean, p = 1.
    let t = mann_whitney_u(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(t.u, 4.5);
    assert_eq!(t.p, 1.0);
    // Every value tied: no variance, no evidence.
    assert_eq!(mann_whitney_u(&[7.0; 4], &[7.0; 6]).unwrap().p, 1.0);
    assert!(mann_whitney_u(&[], &[1.0]).is_none());
    assert!(mann_whitney_u(&[f64::NAN], &[1.0]).is_none());
}

#[test]
fn two_gate_verdicts() {
    let n = DEFAULT_NOISE;
    assert_eq!(
        verdict(Some(0.2), 2.0, Some((1.9, 2.1)), n),
        Verdict::NoChange
    );
    assert_eq!(
        verdict(Some(0.01), 2.0, Some((1.9, 2.1)), n),
        Verdict::Slower
    );
    assert_eq!(
        verdict(Some(0.01), 0.5, Some((0.4, 0.6)), n),
        Verdict::Faster
    );
    assert_eq!(
        verdict(Some(0.01), 1.03, Some((1.01, 1.05)), n),
        Verdict::WithinNoise
    );
    assert_eq!(
        verdict(Some(0.01), 1.0, Some((0.99, 1.01)), n),
        Verdict::WithinNoise
    );
    // Ratio only (no per-sample values).
    assert_eq!(verdict(None, 1.01, None, n), Verdict::WithinNoise);
    assert_eq!(verdict(None, 1.5, None, n), Verdict::Slower);
    assert_eq!(verdict(None, 0.9, None, n), Verdict::Faster);
}

fn spread(center: f64, rel: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| center * (1.0 + rel * (((i * 7) % 13) as f64 / 6.0 - 1.0)))
        .collect()
}

#[test]
fn sample_comparisons() {
    let a = spread(100.0, 0.01, 40);
    let same = compare_samples(&a, &a, DEFAULT_NOISE).unwrap();
    assert!(!same.verdict.is_change(), "{same:?}");
    let slow = compare_samples(&a, &spread(200.0, 0.01, 40), DEFAULT_NOISE).unwrap();
    assert_eq!(slow.verdict, Verdict::Slower);
    assert!(slow.highlight);
    let near = compare_samples(&a, &spread(101.0, 0.001, 40), DEFAULT_NOISE).unwrap();
    assert_eq!(near.verdict, Verdict::WithinNoise, "{near:?}");
    assert!(!near.highlight);
    // Counts that are zero on both sides are "the same".
    let zero = compare_samples(&[0.0; 10], &[0.0; 10], DEFAULT_NOISE).unwrap();
    assert_eq!((zero.ratio, zero.verdict), (1.0, Verdict::NoChange));
}

#[test]
fn flatten_and_diff() {
    let a = json!({"kernel": "6.1", "vuln": {"spectre_v2": "Mitigation", "mds": "Not"},
                       "caches": [{"level": 1}], "flags": ["avx", "sse"], "x": null,
                       "cpu_mhz": 2000.0});
    let b = json!({"kernel": "6.8", "vuln": {"spectre_v2": "Mitigation"},
                       "caches": [{"level": 2}], "flags": ["avx", "sse"], "x": 3,
                       "cpu_mhz": 2100.0});
    let flat = flatten(&a);
    assert_eq!(flat["vuln.mds"], "Not");
    assert_eq!(flat["caches.0.level"], "1");
    assert_eq!(flat["flags"], "avx,sse");
    assert!(!flat.contains_key("x"));
    let d = diff_values(&a, &b, &["cpu_mhz"]);
    let fields: Vec<&str> = d.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["caches.0.level", "kernel", "vuln.mds", "x"]);
    assert_eq!(d[2].b, None);
    assert!(diff_values(&a, &a, &[]).is_empty());
}

proptest! {
    /// U of b plus U of a is na·nb, and swapping the samples mirrors z and keeps p.
    #[test]
    fn mann_whitney_symmetry(
        a in prop::collection::vec(0u8..20, 1..30),
        b in prop::collection::vec(0u8..20, 1..30),
    ) {
        let a: Vec<f64> = a.into_iter().map(f64::from).collect();
        let b: Vec<f64> = b.into_iter().map(f64::from).collect();
        let ab = mann_whitney_u(&a, &b).unwrap();
        let ba = mann_whitney_u(&b, &a).unwrap();
        prop_assert!((ab.u + ba.u - (a.len() * b.len()) as f64).abs() < 1e-9);
        prop_assert!((ab.p - ba.p).abs() < 1e-9);
        prop_assert!((ab.z + ba.z).abs() < 1e-9);
        prop_assert!((0.0..=1.0).contains(&ab.p));
    }

    /// U counts the pairs with b > a (ties one half), by brute force.
    #[test]
    fn mann_whitney_u_counts_pairs(
        a in prop::collection::vec(0u8..10, 1..20),
        b in prop::collection::vec(0u8..10, 1..20),
    ) {
        let brute: f64 = a.iter().flat_map(|x| b.iter().map(move |y| {
            if y > x { 1.0 } else if y == x { 0.5 } else { 0.0 }
        })).sum();
        let a: Vec<f64> = a.into_iter().map(f64::from).collect();
        let b: Vec<f64> = b.into_iter().map(f64::from).collect();
        prop_assert_eq!(mann_whitney_u(&a, &b).unwrap().u, brute);
    }

    /// Shifting every value of b far above a always gives a small p for decent n.
    #[test]
    fn separated_samples_are_significant(
        a in prop::collection::vec(0.0f64..1.0, 10..40),
        b in prop::collection::vec(2.0f64..3.0, 10..40),
    ) {
        prop_assert!(mann_whitney_u(&a, &b).unwrap().p < 0.01);
    }
}

/// A run of `syscall.stat` in three processes, each around `center` (±0.1%), whose results
/// carry `earlier` as the earlier runs' medians. The report's tests take it too.
pub(crate) fn stat_run(center: f64, earlier: &[f64]) -> Run {
    let process = |k: f64| {
        let values: Vec<f64> = (0..30)
            .map(|i| center * (1.0 + 0.001 * ((i % 7) as f64 / 7.0 + k / 10.0)))
            .collect();
        ExperimentResult {
            earlier_medians: earlier.to_vec(),
            ..ExperimentResult::from_values("syscall.stat", &[], &values, 100)
        }
    };
    crate::store::tests::run(None, 1.0, vec![process(0.0), process(1.0), process(2.0)])
}

#[test]
fn a_change_within_what_reruns_give_is_no_change() {
    // Processes that agree within 0.1%, B 5% slower than A.
    let (a, b) = (stat_run(1000.0, &[]), stat_run(1050.0, &[]));
    let alone = compare_runs(&a, &b, &Metric::Time, 0.02, DECLARED);
    assert_eq!(
        alone.pairs[0].comparison.as_ref().unwrap().verdict,
        Verdict::Slower
    );
    assert_eq!(alone.pairs[0].earlier_range, (None, None));
    assert!(!alone.pairs[0].ci_from_earlier_runs);
    // This machine's earlier runs of it moved ±5% from run to run: so may a rerun.
    let earlier = [950.0, 1050.0, 1000.0, 1060.0, 980.0];
    let (a, b) = (stat_run(1000.0, &earlier), stat_run(1050.0, &earlier));
    let pair = compare_runs(&a, &b, &Metric::Time, 0.02, DECLARED).pairs[0].clone();
    let c = pair.comparison.clone().unwrap();
    assert!(!c.verdict.is_change(), "{c:?}");
    let (lo, hi) = c.ci.unwrap();
    assert!(lo < 1.0 && hi > 1.1, "{lo} – {hi}");
    // Their spread, not the processes' (0.1%), set the width; each side's runs are named.
    assert!(pair.ci_from_earlier_runs);
    let range = EarlierRange {
        runs: 5,
        lowest: 950.0,
        highest: 1060.0,
    };
    assert_eq!(pair.earlier_range, (Some(range), Some(range)));
    // A change far beyond it still shows.
    let b = stat_run(2000.0, &earlier);
    let c = compare_runs(&a, &b, &Metric::Time, 0.02, DECLARED).pairs[0]
        .comparison
        .clone()
        .unwrap();
    assert_eq!(c.verdict, Verdict::Slower);
    // Three earlier runs are too few to floor a ratio: no range, nothing set by them.
    let few = [950.0, 1050.0, 1000.0];
    let (a, b) = (stat_run(1000.0, &few), stat_run(1050.0, &few));
    let pair = &compare_runs(&a, &b, &Metric::Time, 0.02, DECLARED).pairs[0];
    assert_eq!(pair.earlier_range, (None, None));
    assert!(!pair.ci_from_earlier_runs);
}

#[test]
fn the_ratio_floor_takes_each_side_or_the_one_that_has_runs() {
    let earlier = [95.0, 105.0, 100.0, 102.0];
    let one = ratio_between_runs(&earlier, &[]).unwrap();
    let both = ratio_between_runs(&earlier, &earlier).unwrap();
    assert_eq!(ratio_between_runs(&[1.0, 2.0, 3.0], &[]), None);
    let sd = |medians: &[f64]| {
        let logs: Vec<f64> = medians.iter().map(|m| m.ln()).collect();
        crate::analysis::stats::summarize(&logs).unwrap().stddev
    };
    let s = sd(&earlier);
    // The missing side takes the other's spread, one estimate of four runs: 3 degrees of
    // freedom. Two sides alike, four runs each: Welch–Satterthwaite's 6.
    assert!((one - 3.182 * s * 2f64.sqrt()).abs() < 1e-9, "{one}");
    assert!((both - 2.447 * s * 2f64.sqrt()).abs() < 1e-9, "{both}");
    // One side's spread all of it: back to that side's 3, whatever the other's count.
    let steady = [100.0, 100.1, 99.9, 100.0, 100.05, 99.95, 100.0, 100.0];
    let lopsided = ratio_between_runs(&steady, &earlier).unwrap();
    let v = sd(&steady).powi(2) + s * s;
    assert!((lopsided - 3.182 * v.sqrt()).abs() < 1e-9, "{lopsided}");
}

/// A run of `experiments`, one process each, around 1000 ns, on system `os`.
fn run_on(os: &str, experiments: &[&str]) -> Run {
    let values: Vec<f64> = (0..30).map(|i| 1000.0 + f64::from(i % 5)).collect();
    let results = experiments
        .iter()
        .map(|e| ExperimentResult::from_values(e, &[], &values, 100))
        .collect();
    let mut run = crate::store::tests::run(None, 1.0, results);
    run.environment.os = os.to_string();
    run
}

/// The cells of the experiments below, as their declarations give them.
/// The declarations of `cell`, no experiment leaving work in the kernel behind it.
const DECLARED: Declared = Declared {
    cell,
    phase_bound: |_| true,
};

fn cell(experiment: &str, os: &str) -> Option<Cell> {
    let how = match (experiment, os) {
        ("ctxswitch.futex", "linux") => "futex FUTEX_WAIT / FUTEX_WAKE",
        ("ctxswitch.futex", "freebsd") => "_umtx_op UMTX_OP_WAIT_UINT / UMTX_OP_WAKE",
        ("syscall.getppid_libc", "linux" | "freebsd" | "macos") => "libc getppid()",
        ("syscall.open_close", "linux" | "freebsd") => "raw system call (called or inline) or libc",
        ("syscall.open_close", "macos") => "libc",
        _ => return None,
    };
    Some(Cell::Runs { how, note: "" })
}

#[test]
fn runs_of_two_systems_say_how_each_performs_every_experiment() {
    let names = [
        "ctxswitch.futex",
        "syscall.getppid_libc",
        "syscall.open_close",
    ];
    let linux = run_on("linux", &names);
    // One system: nothing to say about implementations, and none is marked.
    let same = compare_runs(
        &linux,
        &run_on("linux", &names),
        &Metric::Time,
        0.02,
        DECLARED,
    );
    assert!(same.systems.is_none());
    assert!(same.pairs.iter().all(|p| p.implementations.is_none()));

    let bsd = compare_runs(
        &linux,
        &run_on("freebsd", &names),
        &Metric::Time,
        0.02,
        DECLARED,
    );
    let systems = bsd.systems.as_ref().unwrap();
    assert_eq!(
        (systems.a.as_str(), systems.b.as_str()),
        ("linux", "freebsd")
    );
    assert_eq!(
        bsd.environment_diff[0].field, "os",
        "the system leads the diff"
    );
    let how = |c: &RunComparison, e: &str| {
        c.pairs
            .iter()
            .find(|p| p.experiment == e)
            .and_then(|p| p.implementations.clone())
            .unwrap()
    };
    let futex = how(&bsd, "ctxswitch.futex");
    assert!(futex.differs && futex.b.contains("_umtx_op"), "{futex:?}");
    assert!(!how(&bsd, "syscall.getppid_libc").differs);
    // The same raw calls with other numbers: the same mechanism.
    assert!(!how(&bsd, "syscall.open_close").differs);

    // macOS opens through libc only: that differs from Linux's raw call.
    let mac = compare_runs(
        &linux,
        &run_on("macos", &names),
        &Metric::Time,
        0.02,
        DECLARED,
    );
    assert!(how(&mac, "syscall.open_close").differs);
    // A system the table does not know differs from every one it knows.
    let plan9 = compare_runs(
        &linux,
        &run_on("plan9", &names),
        &Metric::Time,
        0.02,
        DECLARED,
    );
    let unknown = how(&plan9, "syscall.getppid_libc");
    assert!(unknown.differs && unknown.b.contains("not in oslab's equivalence table"));
}

/// The interval's own test: p < 0.05 exactly when the interval excludes 1, on either side,
/// and the example (B/A 0.999, CI 0.798–1.250) is nowhere near significant.
#[test]
fn the_interval_test_agrees_with_its_interval() {
    assert!(interval_p(1.1, (1.01, 1.2)).unwrap() < ALPHA);
    assert!(interval_p(1.1, (0.99, 1.2)).unwrap() > ALPHA);
    assert!(close(interval_p(1.1, (1.0, 1.3)).unwrap(), 0.05, 1e-4));
    assert!(interval_p(0.9, (0.8, 0.99)).unwrap() < ALPHA);
    assert!(interval_p(0.9, (0.8, 1.01)).unwrap() > ALPHA);
    assert!(interval_p(0.999, (0.798, 1.250)).unwrap() > 0.9);
    assert_eq!(
        interval_p(1.2, (0.0, 1.5)),
        Some(1.0),
        "an interval down to 0"
    );
    assert_eq!(interval_p(0.0, (0.0, 1.0)), None);
}

#[test]
fn the_detectable_change_follows_the_width_and_the_band() {
    // ±5% around 1 with a ±2% band: a slowdown needs B/A ≥ 1.02 / 0.95.
    let d = detectable(1.0, (0.95, 1.05), 0.02).unwrap();
    assert!(close(d, 1.02 / 0.95 - 1.0, 1e-12), "{d}");
    // Never below the band itself; nothing with an interval that reaches 0.
    assert!(close(
        detectable(1.0, (1.0, 1.0), 0.02).unwrap(),
        0.02,
        1e-12
    ));
    assert_eq!(detectable(1.0, (0.0, 2.0), 0.02), None);
    assert_eq!(compare_figures(1.0, 1.0, 0.03).detectable, Some(0.03));
}

proptest! {
    /// With several processes a side, "significant" and "the CI excludes 1" are one statement.
    #[test]
    fn processes_p_and_interval_never_disagree(
        a in proptest::collection::vec(proptest::collection::vec(1.0f64..2.0, 5..12), 3),
        b in proptest::collection::vec(proptest::collection::vec(1.0f64..2.2, 5..12), 3),
    ) {
        let ga: Vec<&[f64]> = a.iter().map(Vec::as_slice).collect();
        let gb: Vec<&[f64]> = b.iter().map(Vec::as_slice).collect();
        if let Some(c) = compare_groups(&ga, &gb, 0.0) {
            let (lo, hi) = c.ci.unwrap();
            let p = c.p.unwrap();
            prop_assert_eq!(c.test, Some(Test::Interval));
            if (p - ALPHA).abs() > 1e-9 {
                prop_assert_eq!(p < ALPHA, lo > 1.0 || hi < 1.0, "p {} CI {}–{}", p, lo, hi);
            }
        }
    }
}

#[test]
fn a_slow_kernel_phase_in_one_run_is_no_change() {
    // A's second process took half its samples in a slow kernel phase (210 ns against 165);
    // B's took none. Counted as `show` counts them, the two runs agree.
    let phased: Vec<usize> = (0..20).collect();
    let processes = |slow: &[usize]| {
        let results = [vec![], slow.to_vec(), vec![]].map(|s| ExperimentResult {
            samples: crate::analysis::host::phased_samples(40, &s),
            ..ExperimentResult::from_values("syscall.getppid", &[], &[1.0], 100)
        });
        crate::store::tests::run(None, 1.0, results.to_vec())
    };
    let (a, b) = (processes(&phased), processes(&[]));
    let c = compare_runs(&a, &b, &Metric::Time, 0.02, DECLARED).pairs[0]
        .comparison
        .clone()
        .unwrap();
    assert_eq!(c.verdict, Verdict::NoChange, "{c:?}");
    assert!((c.ratio - 1.0).abs() < 1e-9, "{c:?}");
}

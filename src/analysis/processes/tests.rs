use super::*;
use proptest::prelude::*;

fn around(center: f64, n: usize, wiggle: f64) -> Vec<f64> {
    (0..n)
        .map(|i| center + wiggle * ((i * 7919) % 13) as f64 / 13.0)
        .collect()
}

#[test]
fn equal_processes_have_no_between_part() {
    let a = around(100.0, 50, 0.5);
    let s = Spread::of(&[&a, &a, &a], 1).unwrap();
    assert_eq!(s.between, 0.0);
    assert!(s.within > 0.0 && s.within < 0.01, "{s:?}");
    assert!(!s.layout_sensitive());
    assert_eq!(s.first_run, None);
    assert_eq!(s.kept().len(), 3);
}

#[test]
fn processes_far_apart_are_layout_sensitive() {
    let (a, b, c) = (
        around(100.0, 50, 0.2),
        around(110.0, 50, 0.2),
        around(95.0, 50, 0.2),
    );
    let s = Spread::of(&[&a, &b, &c], 1).unwrap();
    assert!(s.between > 0.05, "{s:?}");
    assert!(s.layout_sensitive());
    // The first is not the slowest: no first-run effect.
    assert_eq!(s.first_run, None);
}

#[test]
fn a_cold_first_process_is_found_and_left_out() {
    let (a, b, c, d) = (
        around(130.0, 40, 0.2),
        around(100.0, 40, 0.2),
        around(100.5, 40, 0.2),
        around(99.8, 40, 0.2),
    );
    let s = Spread::of(&[&a, &b, &c, &d], 1).unwrap();
    let excess = s.first_run.expect("cold first process");
    assert!((excess - 0.295).abs() < 0.01, "{excess}");
    assert_eq!(s.kept().len(), 3);
    // Two processes are too few to tell a cold one from noise.
    assert_eq!(Spread::of(&[&a, &b], 1).unwrap().first_run, None);
    // A first process within the others' spread is not cold.
    let (e, f, g) = (
        around(101.0, 40, 0.2),
        around(98.0, 40, 0.2),
        around(100.5, 40, 0.2),
    );
    assert_eq!(Spread::of(&[&e, &f, &g], 1).unwrap().first_run, None);
}

/// Against published quantiles of Student's t (qt(0.975, df) in R): the table exactly, past it
/// within 0.002.
#[test]
fn t_quantiles_match_reference_values() {
    for (df, reference) in [
        (1, 12.706),
        (5, 2.571),
        (10, 2.228),
        (20, 2.086),
        (30, 2.042),
    ] {
        assert_eq!(t975(df), reference, "df {df}");
    }
    for (df, reference) in [(40, 2.021), (60, 2.000), (120, 1.980), (10_000, 1.960)] {
        assert!(
            (t975(df) - reference).abs() < 0.002,
            "df {df}: {}",
            t975(df)
        );
    }
}

#[test]
fn t_quantiles() {
    assert_eq!(t975(2), 4.303);
    assert!(t975(0).is_infinite());
    assert!((t975(1000) - 1.962).abs() < 0.001);
    let (lo, hi) = between_interval(100.0, &[99.0, 100.0, 101.0]).unwrap();
    // On a log scale: s = sd(ln 99, ln 100, ln 101) = 0.0100, n = 3: t(2) / √3 · s = 0.02484.
    assert!(((hi / 100.0).ln() - 0.02484).abs() < 1e-4, "{hi}");
    assert!(((100.0 / lo).ln() - 0.02484).abs() < 1e-4, "{lo}");
    assert_eq!(between_interval(100.0, &[99.0]), None);
    assert_eq!(between_interval(100.0, &[99.0, -1.0]), None);
    assert_eq!(hull((1.0, 2.0), Some((0.5, 1.5))), (0.5, 2.0));
    assert_eq!(hull((1.0, 2.0), None), (1.0, 2.0));
}

#[test]
fn kept_groups_drop_only_a_cold_first_process_with_three_others() {
    let (cold, b, c, d) = (
        around(130.0, 20, 0.2),
        around(100.0, 20, 0.2),
        around(100.4, 20, 0.2),
        around(99.9, 20, 0.2),
    );
    assert_eq!(kept_groups(&[&cold, &b, &c, &d]).len(), 3);
    assert_eq!(kept_groups(&[&b, &cold, &c, &d]).len(), 4);
    // With two others it is said (`first_run`) but kept.
    assert_eq!(kept_groups(&[&cold, &b, &c]).len(), 3);
    let s = Spread::of(&[&cold, &b, &c], 1).unwrap();
    assert!(s.first_run.is_some() && !s.drops_first());
    assert_eq!(s.kept().len(), 3);
}

#[test]
fn ratio_intervals_from_process_medians() {
    let (lo, hi) =
        ratio_between_interval(1.0, &[100.0, 101.0, 99.0], &[100.0, 102.0, 98.0]).unwrap();
    assert!(lo < 1.0 && hi > 1.0 && lo > 0.9 && hi < 1.1, "{lo} {hi}");
    // Identical processes on both sides: no width from between them.
    assert_eq!(
        ratio_between_interval(2.0, &[1.0, 1.0], &[2.0, 2.0]),
        Some((2.0, 2.0))
    );
    assert_eq!(ratio_between_interval(1.0, &[1.0], &[1.0, 1.0]), None);
    assert_eq!(ratio_between_interval(1.0, &[1.0, -1.0], &[1.0, 1.0]), None);
}

#[test]
fn difference_intervals_from_process_medians() {
    // (a − b) / 2 with a's processes at 5000 ± 500 and b's at 1400 ± 50: the spread of a
    // alone makes the interval hundreds of ns wide, whatever the samples within say.
    let a = [4500.0, 5000.0, 5500.0];
    let b = [1350.0, 1400.0, 1450.0];
    let (lo, hi) = difference_between_interval(1800.0, &a, &b, 2.0).unwrap();
    // Welch: se = sqrt(500²/3 + 50²/3) = 290.1, df = 2 (rounded), t = 4.303; ÷ 2.
    let half = 4.303 * (500f64.powi(2) / 3.0 + 50f64.powi(2) / 3.0).sqrt() / 2.0;
    assert!((hi - 1800.0 - half).abs() < 1e-6 && (1800.0 - lo - half).abs() < 1e-6);
    assert_eq!(
        difference_between_interval(1.0, &[3.0, 3.0], &[1.0, 1.0], 2.0),
        Some((1.0, 1.0))
    );
    assert_eq!(
        difference_between_interval(1.0, &[3.0], &[1.0, 1.0], 2.0),
        None
    );
    assert_eq!(
        difference_between_interval(1.0, &[3.0, 3.0], &[1.0, 1.0], 0.0),
        None
    );
}

#[test]
fn empty_input_has_no_spread() {
    assert_eq!(Spread::of(&[], 1), None);
    assert_eq!(Spread::of(&[&[1.0], &[]], 1), None);
}

proptest! {
    #[test]
    fn the_between_interval_contains_the_center_and_grows_with_spread(
        medians in prop::collection::vec(1.0f64..1e6, 2..12),
        stretch in 1.0f64..10.0,
    ) {
        let center = crate::analysis::median(&medians).unwrap();
        let (lo, hi) = between_interval(center, &medians).unwrap();
        prop_assert!(lo <= center && center <= hi);
        // Spread by `stretch` on a log scale: the interval's log half-width grows as much.
        let wider: Vec<f64> = medians.iter().map(|m| center * (m / center).powf(stretch)).collect();
        let (wlo, whi) = between_interval(center, &wider).unwrap();
        prop_assert!((whi / center).ln() >= (hi / center).ln() * stretch * (1.0 - 1e-9));
        prop_assert!((center / wlo).ln() >= (center / lo).ln() * stretch * (1.0 - 1e-9));
        prop_assert!(lo > 0.0 && wlo > 0.0, "a positive figure's interval never reaches zero");
    }

    #[test]
    fn spread_is_scale_free(
        groups in prop::collection::vec(prop::collection::vec(1.0f64..1000.0, 5..30), 1..6),
        scale in 0.001f64..1000.0,
    ) {
        let refs: Vec<&[f64]> = groups.iter().map(|g| g.as_slice()).collect();
        let scaled: Vec<Vec<f64>> = groups.iter().map(|g| g.iter().map(|x| x * scale).collect()).collect();
        let srefs: Vec<&[f64]> = scaled.iter().map(|g| g.as_slice()).collect();
        let a = Spread::of(&refs, 3).unwrap();
        let b = Spread::of(&srefs, 3).unwrap();
        prop_assert!((a.between - b.between).abs() <= 1e-9 * (1.0 + a.between));
        prop_assert_eq!(a.first_run.is_some(), b.first_run.is_some());
        prop_assert_eq!(a.medians.len(), groups.len());
    }
}

/// A normal deviate (Box–Muller) from `rng`.
fn normal(rng: &mut crate::analysis::rng::Rng) -> f64 {
    let u = rng.next_f64().max(f64::MIN_POSITIVE);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.next_f64()).cos()
}

/// `runs` simulated runs of three processes: a run sits `run_sd` off (relative) as a whole,
/// each of its processes `process_sd` off that. Per run: its center (the median of its
/// process medians) and the medians.
fn simulated_runs(runs: usize, run_sd: f64, process_sd: f64, seed: u64) -> Vec<(f64, Vec<f64>)> {
    let mut rng = crate::analysis::rng::Rng::new(seed);
    (0..runs)
        .map(|_| {
            let run = 100.0 * (1.0 + run_sd * normal(&mut rng));
            let medians: Vec<f64> = (0..3)
                .map(|_| run * (1.0 + process_sd * normal(&mut rng)))
                .collect();
            (crate::analysis::median(&medians).unwrap(), medians)
        })
        .collect()
}

/// How often run i's interval (from `interval(i)`) holds run j's center, over the ordered
/// pairs of distinct runs.
fn coverage(runs: &[(f64, Vec<f64>)], interval: impl Fn(usize) -> (f64, f64)) -> f64 {
    let (mut covered, mut pairs) = (0, 0);
    for i in 0..runs.len() {
        let (lo, hi) = interval(i);
        for (j, (center, _)) in runs.iter().enumerate() {
            if i != j {
                pairs += 1;
                covered += usize::from(lo <= *center && *center <= hi);
            }
        }
    }
    covered as f64 / pairs as f64
}

#[test]
fn the_rerun_interval_covers_a_rerun_where_the_confidence_interval_does_not() {
    // Processes that differ by 3% and runs that do not differ as a whole.
    let runs = simulated_runs(200, 0.0, 0.03, 7);
    let ci = |i: usize| between_interval(runs[i].0, &runs[i].1).unwrap();
    let rerun = |i: usize| rerun_interval(runs[i].0, ci(i), 3, &[]);
    let (plain, widened) = (coverage(&runs, ci), coverage(&runs, rerun));
    // Theory for the mean of three processes: 90.7% and 95%; a median of three moves a little
    // more than their mean.
    assert!((0.8..0.92).contains(&plain), "confidence interval: {plain}");
    assert!(
        widened >= 0.9 && widened > plain + 0.03,
        "rerun interval: {widened} against {plain}"
    );
}

#[test]
fn earlier_runs_cover_a_run_shifted_as_a_whole() {
    // Runs 4% apart as a whole, their processes within 0.5% of each other: the spread inside a
    // run cannot see how far the next run sits.
    let runs = simulated_runs(120, 0.04, 0.005, 11);
    let inside = |i: usize| {
        let ci = between_interval(runs[i].0, &runs[i].1).unwrap();
        rerun_interval(runs[i].0, ci, 3, &[])
    };
    let with_history = |i: usize| {
        let earlier: Vec<f64> = runs[i.saturating_sub(MAX_EARLIER_RUNS)..i]
            .iter()
            .map(|r| r.0)
            .collect();
        let ci = between_interval(runs[i].0, &runs[i].1).unwrap();
        rerun_interval(runs[i].0, ci, 3, &earlier)
    };
    let (blind, seen) = (coverage(&runs, inside), coverage(&runs, with_history));
    assert!(blind < 0.5, "without history: {blind}");
    // The first two runs have too few earlier ones; the rest are covered.
    assert!(seen >= 0.9, "with history: {seen}");
}

#[test]
fn earlier_runs_count_from_two_and_only_the_last_nine() {
    let ci = (99.0, 101.0);
    let few = [90.0];
    assert_eq!(between_runs(100.0, &few), None);
    assert_eq!(
        rerun_interval(100.0, ci, 1, &few),
        ci,
        "one process: kept as it is"
    );
    let widened = rerun_interval(100.0, ci, 3, &few);
    assert!(
        (widened.0 - 100.0 * 0.99f64.powf(2f64.sqrt())).abs() < 1e-9,
        "{widened:?}"
    );
    let enough = [90.0, 110.0];
    let (lo, hi) = rerun_interval(100.0, ci, 3, &enough);
    assert!(lo < 80.0 && hi > 120.0, "{lo} – {hi}");
    // t(0.975, 2) · √2 times the spread of the three medians, on a log scale.
    let s = crate::analysis::stats::summarize(&[90f64.ln(), 110f64.ln(), 100f64.ln()])
        .unwrap()
        .stddev;
    assert!(
        (hi - 100.0 * (4.303 * s * 2f64.sqrt()).exp()).abs() < 1e-6 * hi,
        "{hi}"
    );
    // Far-off runs older than the last nine do not count.
    let mut old = vec![10.0; 5];
    old.extend([100.0; MAX_EARLIER_RUNS]);
    assert_eq!(between_runs(100.0, &old), Some(0.0));
    assert_eq!(rerun_interval(100.0, ci, 1, &old), ci);
    // A median that is not positive cannot be taken on a log scale.
    assert_eq!(between_runs(100.0, &[1.0, 2.0, 0.0, 3.0]), None);
    assert_eq!(between_runs(f64::NAN, &enough), None);
}

proptest! {
    #[test]
    fn the_rerun_interval_holds_the_confidence_interval(
        center in 1.0f64..1e6,
        below in 0.0f64..0.5,
        above in 0.0f64..0.5,
        processes in 1usize..6,
        earlier in prop::collection::vec(0.5f64..2.0, 0..12),
    ) {
        let ci = (center * (1.0 - below), center * (1.0 + above));
        let earlier: Vec<f64> = earlier.iter().map(|e| e * center).collect();
        let (lo, hi) = rerun_interval(center, ci, processes, &earlier);
        prop_assert!(lo <= ci.0 * (1.0 + 1e-12) && hi >= ci.1 * (1.0 - 1e-12));
        prop_assert!(lo >= 0.0 && hi.is_finite());
    }
}

/// Process medians more than 2× apart are unstable; within 2×, or one alone, are not.
#[test]
fn medians_more_than_twice_apart_are_unstable() {
    assert!(unstable(&[24.9, 3.1, 50.0]));
    assert!(unstable(&[1.0, 2.01]));
    assert!(!unstable(&[1.0, 2.0]));
    assert!(!unstable(&[1.0, 1.5, 1.9]));
    assert!(!unstable(&[7.0]));
    assert!(!unstable(&[]));
}

/// The rerun interval widens on a log scale: never to zero, however wide the interval.
#[test]
fn the_rerun_interval_never_reaches_zero() {
    let (lo, hi) = rerun_interval(24.9, (1.0, 400.0), 3, &[]);
    assert!(lo > 0.0 && lo < 1.0 && hi > 400.0, "{lo}–{hi}");
    let (lo, hi) = rerun_interval(100.0, (90.0, 110.0), 3, &[]);
    assert!(
        (lo - 100.0 * 0.9f64.powf(std::f64::consts::SQRT_2)).abs() < 1e-9,
        "{lo}"
    );
    assert!(
        (hi - 100.0 * 1.1f64.powf(std::f64::consts::SQRT_2)).abs() < 1e-9,
        "{hi}"
    );
}

#[test]
fn paired_rounds_cancel_what_a_round_did_to_both() {
    // Round 2 was 30% slow for both: the ratio 1.1 holds in every round.
    let a = [Some(100.0), Some(130.0), Some(101.0), Some(99.0)];
    let b = [Some(110.0), Some(143.0), Some(111.1), Some(108.9)];
    let (lo, hi) = paired_ratio_interval(&a, &b).unwrap();
    assert!(lo > 1.09 && hi < 1.11, "{lo} {hi}");
    // Unpaired, the same medians could not tell 1.1 from 1.0.
    let flat = |xs: &[Option<f64>]| xs.iter().flatten().copied().collect::<Vec<f64>>();
    let (ulo, _) = ratio_between_interval(1.1, &flat(&a), &flat(&b)).unwrap();
    assert!(ulo < 1.0, "{ulo}");
    // Rounds one side lacks do not pair; one pair is not enough.
    let (lo2, hi2) = paired_ratio_interval(
        &[None, Some(100.0), Some(100.0)],
        &[Some(5.0), Some(110.0), Some(110.0)],
    )
    .unwrap();
    assert!((lo2 - 1.1).abs() < 1e-9 && (hi2 - 1.1).abs() < 1e-9);
    assert_eq!(paired_ratio_interval(&[Some(1.0)], &[Some(2.0)]), None);
    assert_eq!(
        paired_ratio_interval(&[Some(1.0), Some(-1.0)], &[Some(2.0), Some(2.0)]),
        None
    );
}

#[test]
fn a_round_whose_process_sat_apart_does_not_widen_the_paired_interval() {
    // Round 3's `a` process sat at a level of its own (20% fast): its ratio is apart.
    let a = [100.0, 100.5, 80.0, 99.5, 100.2, 99.8].map(Some);
    let b = [110.0, 110.4, 110.2, 109.6, 110.1, 109.9].map(Some);
    let (lo, hi) = paired_ratio_interval(&a, &b).unwrap();
    assert!(lo > 1.095 && hi < 1.105, "{lo} {hi}");
}

#[test]
fn a_process_at_a_level_of_its_own_is_apart() {
    // syscall.read entry=inline, 2026-12-07: one process of six at the other level.
    let medians = [160.7, 199.4, 159.9, 161.9, 162.2, 159.6];
    assert_eq!(apart(&medians), Some(1));
    assert_eq!(steady(&medians), [160.7, 159.9, 161.9, 162.2, 159.6]);
    // The interval rests on the five: as narrow as theirs alone.
    let with = between_interval(160.5, &medians).unwrap();
    let five = between_interval(160.5, &steady(&medians)).unwrap();
    assert_eq!(with, five);
    assert!(with.1 / 160.5 - 1.0 < 0.01, "{with:?}");
    // The spread between processes is the five's, and the process is named.
    let groups: Vec<Vec<f64>> = medians.iter().map(|&m| around(m, 30, 0.2)).collect();
    let refs: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
    let s = Spread::of(&refs, 1).unwrap();
    assert_eq!(s.apart, Some(1));
    assert_eq!(s.kept().len(), 6);
    assert!(s.between < 0.01, "{s:?}");
    // Each side of a ratio and of a difference leaves its own out likewise.
    let b = [200.0, 201.0, 199.0, 200.5, 199.5, 200.2];
    assert_eq!(
        ratio_between_interval(1.25, &medians, &b),
        ratio_between_interval(1.25, &steady(&medians), &b)
    );
    assert_eq!(
        difference_between_interval(40.0, &b, &medians, 1.0),
        difference_between_interval(40.0, &b, &steady(&medians), 1.0)
    );
}

#[test]
fn no_process_is_apart_among_few_near_or_two_alike() {
    // Four processes are too few to call one apart.
    assert_eq!(apart(&[160.0, 200.0, 161.0, 160.5]), None);
    // Two at the other level are not one apart: the others' spread takes them in.
    assert_eq!(apart(&[160.0, 200.0, 161.0, 199.0, 160.5, 161.5]), None);
    // Within 5% of the others, however tight they are, is not a level of its own.
    assert_eq!(apart(&[160.0, 167.0, 160.1, 160.0, 159.9, 160.05]), None);
    // Far, but within five times the others' spread: the tail of one spread.
    assert_eq!(apart(&[100.0, 120.0, 104.0, 96.0, 108.0, 92.0]), None);
    // A median that is not a positive time.
    assert_eq!(apart(&[160.0, 0.0, 161.0, 160.5, 160.2]), None);
    let plain = [100.0, 101.0, 99.0, 100.5, 99.5];
    assert_eq!(steady(&plain), plain);
}

/// `runs` simulated runs of six processes, each at a level 25% above the others with
/// probability `p`, else within `process_sd` of 100; per run, the median of the medians.
fn simulated_levels(runs: usize, p: f64, process_sd: f64, seed: u64) -> Vec<(f64, Vec<f64>)> {
    let mut rng = crate::analysis::rng::Rng::new(seed);
    (0..runs)
        .map(|_| {
            let medians: Vec<f64> = (0..6)
                .map(|_| {
                    let level = if rng.next_f64() < p { 125.0 } else { 100.0 };
                    level * (1.0 + process_sd * normal(&mut rng))
                })
                .collect();
            (crate::analysis::median(&medians).unwrap(), medians)
        })
        .collect()
}

#[test]
fn intervals_that_set_a_process_apart_still_cover_reruns() {
    // One process in seven at a level of its own, as the inline read's were (§8): a run with
    // one such process rests on the other five, and its interval still holds where a rerun's
    // median falls, whose processes may fall there too.
    let runs = simulated_levels(300, 0.15, 0.005, 11);
    let rerun = |i: usize| {
        let (center, medians) = &runs[i];
        rerun_interval(*center, between_interval(*center, medians).unwrap(), 6, &[])
    };
    let covered = coverage(&runs, rerun);
    assert!(covered >= 0.9, "coverage {covered}");
    let apart_runs = runs.iter().filter(|(_, m)| apart(m).is_some()).count();
    assert!(apart_runs > 60, "{apart_runs} runs with a process apart");
}

proptest! {
    #[test]
    fn at_most_one_process_is_apart_and_only_among_five_or_more(
        medians in proptest::collection::vec(1.0f64..1e6, 1..12),
    ) {
        let steady = steady(&medians);
        match apart(&medians) {
            Some(i) => {
                prop_assert!(medians.len() >= 5 && i < medians.len());
                prop_assert_eq!(steady.len(), medians.len() - 1);
            }
            None => prop_assert_eq!(steady, medians),
        }
    }
}

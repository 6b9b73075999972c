//! What reclaim did over one result's timed samples (`model::reclaim`): each counter's total,
//! and the headline figures — scanned, stolen, activated, deactivated, refaulted, swapped,
//! major faults, OOM kills, stall — from the cgroup's counters where it counts them, else the
//! machine's. Pure: computed from the stored samples and counter statuses.

use std::collections::BTreeMap;

use serde::Serialize;

use super::compare::{ALPHA, group, mann_whitney_u};
use crate::model::reclaim::{HEADLINE, is_reclaim};
use crate::model::{ExperimentResult, Run};

/// One headline figure of a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// `scanned`, `stolen`, …
    pub name: &'static str,
    /// The counters summed for it, e.g. `vm.pgscan_kswapd+vm.pgscan_direct`.
    pub from: &'static str,
    /// Over all timed samples.
    pub total: f64,
    /// The mean over one sample (one batch of operations: one pass of `mmap.access`).
    pub per_sample: f64,
}

/// The reclaim figures of one result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReclaimFigures {
    pub samples: usize,
    pub ops: u64,
    pub headline: Vec<Headline>,
    /// Every counted reclaim counter's total over the samples.
    pub totals: BTreeMap<String, f64>,
    /// Counters not counted here, grouped by the reason.
    pub not_counted: Vec<(Vec<String>, String)>,
}

/// The reclaim figures of `result`; `None` when it counted none (it ran in no memory cgroup).
pub fn figures(result: &ExperimentResult) -> Option<ReclaimFigures> {
    let statuses: Vec<_> = result
        .counters
        .iter()
        .filter(|c| is_reclaim(&c.name))
        .collect();
    if statuses.is_empty() {
        return None;
    }
    let mut totals = BTreeMap::new();
    for c in statuses.iter().filter(|c| c.supported) {
        let sum: Option<f64> = result
            .samples
            .iter()
            .map(|s| s.counters.get(&c.name).and_then(|v| v.value))
            .sum();
        if let Some(sum) = sum {
            totals.insert(c.name.clone(), sum);
        }
    }
    let samples = result.samples.len();
    let headline = HEADLINE
        .iter()
        .filter_map(|(name, sources)| {
            let from = sources
                .iter()
                .find(|s| s.split('+').all(|n| totals.contains_key(n)))?;
            let total: f64 = from.split('+').map(|n| totals[n]).sum();
            Some(Headline {
                name,
                from,
                total,
                per_sample: if samples > 0 {
                    total / samples as f64
                } else {
                    f64::NAN
                },
            })
        })
        .collect();
    let mut not_counted: Vec<(Vec<String>, String)> = Vec::new();
    for c in statuses.iter().filter(|c| !c.supported) {
        let why = c.reason.clone().unwrap_or_default();
        match not_counted.iter_mut().find(|(_, w)| *w == why) {
            Some((names, _)) => names.push(c.name.clone()),
            None => not_counted.push((vec![c.name.clone()], why)),
        }
    }
    Some(ReclaimFigures {
        samples,
        ops: result.samples.iter().map(|s| s.ops).sum(),
        headline,
        totals,
        not_counted,
    })
}

/// One reclaim counter of one configuration in two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The configuration's name (`report::names::label` of A's result).
    pub configuration: String,
    pub counter: String,
    /// The mean count per sample in each run.
    pub a: f64,
    pub b: f64,
    /// `b / a`; `None` when `a` is 0.
    pub ratio: Option<f64>,
    /// Mann-Whitney over the per-operation counts of the samples.
    pub p: Option<f64>,
    /// `more`, `fewer` or `no change`: `p` under 0.05 and the means apart by more than
    /// the noise band, or not.
    pub verdict: &'static str,
}

/// The reclaim counters of every configuration both runs measured in a memory cgroup: the
/// counters that make the headline figures, counted in both and not zero in both, B against A.
/// `label` names a configuration; `noise` is the band a ratio must leave to count.
pub fn compare(
    a: &Run,
    b: &Run,
    noise: f64,
    label: &dyn Fn(&ExperimentResult) -> String,
) -> Vec<Change> {
    let groups_b = group(b);
    let mut changes = Vec::new();
    for (key, sa) in group(a) {
        let Some((_, sb)) = groups_b.iter().find(|(k, _)| *k == key) else {
            continue;
        };
        let (Some(fa), Some(fb)) = (figures(sa[0]), figures(sb[0])) else {
            continue;
        };
        for name in shared_sources(&fa, &fb) {
            if let Some(change) = compare_counter(name, &sa, sb, noise) {
                changes.push(Change {
                    configuration: label(sa[0]),
                    ..change
                });
            }
        }
    }
    changes
}

/// The counters of each headline figure from the first source both sides counted (the
/// cgroup's, the tracepoints', the machine's: `HEADLINE`'s order), in order, once each.
fn shared_sources(a: &ReclaimFigures, b: &ReclaimFigures) -> Vec<&'static str> {
    let both = |name: &str| a.totals.contains_key(name) && b.totals.contains_key(name);
    let mut names: Vec<&'static str> = Vec::new();
    for (_, sources) in HEADLINE {
        let Some(from) = sources.iter().find(|s| s.split('+').all(both)) else {
            continue;
        };
        for name in from.split('+') {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// One counter over the samples of each side's processes; `None` when a side did not count it
/// or both counted nothing.
fn compare_counter(
    name: &str,
    a: &[&ExperimentResult],
    b: &[&ExperimentResult],
    noise: f64,
) -> Option<Change> {
    let values = |side: &[&ExperimentResult]| -> Option<(Vec<f64>, Vec<f64>)> {
        let samples: Vec<_> = side.iter().flat_map(|r| &r.samples).collect();
        let counts: Vec<f64> = samples
            .iter()
            .map(|s| s.counters.get(name).and_then(|c| c.value))
            .collect::<Option<_>>()?;
        let per_op = samples
            .iter()
            .zip(&counts)
            .map(|(s, c)| c / s.ops.max(1) as f64)
            .collect();
        (!counts.is_empty()).then_some((counts, per_op))
    };
    let ((ca, pa), (cb, pb)) = (values(a)?, values(b)?);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let (ma, mb) = (mean(&ca), mean(&cb));
    if ma == 0.0 && mb == 0.0 {
        return None;
    }
    let p = mann_whitney_u(&pa, &pb).map(|m| m.p);
    let ratio = (ma > 0.0).then(|| mb / ma);
    let apart = ratio.is_none_or(|r| (r - 1.0).abs() > noise);
    let verdict = match p {
        Some(p) if p < ALPHA && apart && mb > ma => "more",
        Some(p) if p < ALPHA && apart && mb < ma => "fewer",
        _ => "no change",
    };
    Some(Change {
        configuration: String::new(),
        counter: name.to_string(),
        a: ma,
        b: mb,
        ratio,
        p,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CounterStatus, CounterValue};

    fn status(name: &str, supported: bool) -> CounterStatus {
        CounterStatus {
            name: name.into(),
            supported,
            reason: (!supported).then(|| "cgroup v1".into()),
        }
    }

    #[test]
    fn the_cgroup_is_preferred_and_the_machine_stands_in() {
        let mut r = ExperimentResult::from_values("mmap.access", &[], &[10.0, 12.0], 10);
        r.counters = vec![
            status("cg.pgscan", false),
            status("cg.pgsteal", false),
            status("vm.pgscan_kswapd", true),
            status("vm.pgscan_direct", true),
            status("cg.pgmajfault", true),
            status("vm.pgmajfault", true),
            status("cycles", true),
        ];
        for (k, s) in r.samples.iter_mut().enumerate() {
            let v = |x: f64| CounterValue {
                value: Some(x),
                raw: x as u64,
                enabled_ns: 0,
                running_ns: 0,
            };
            s.counters
                .insert("vm.pgscan_kswapd".into(), v(100.0 * (k + 1) as f64));
            s.counters.insert("vm.pgscan_direct".into(), v(1.0));
            s.counters.insert("cg.pgmajfault".into(), v(5.0));
            s.counters.insert("vm.pgmajfault".into(), v(50.0));
        }
        let f = figures(&r).unwrap();
        let scanned = f.headline.iter().find(|h| h.name == "scanned").unwrap();
        assert_eq!(scanned.from, "vm.pgscan_kswapd+vm.pgscan_direct");
        assert_eq!(scanned.total, 302.0);
        assert_eq!(scanned.per_sample, 151.0);
        let major = f
            .headline
            .iter()
            .find(|h| h.name == "major faults")
            .unwrap();
        assert_eq!((major.from, major.total), ("cg.pgmajfault", 10.0));
        assert!(f.headline.iter().all(|h| h.name != "stolen"));
        assert_eq!(
            f.not_counted,
            vec![(
                vec!["cg.pgscan".to_string(), "cg.pgsteal".to_string()],
                "cgroup v1".to_string()
            )]
        );
        assert!(!f.totals.contains_key("cycles"));
    }

    fn run_with(counts: &[f64], label: &str) -> Run {
        let mut r = ExperimentResult::from_values("mmap.access", &[], &vec![2.0; counts.len()], 10);
        r.label = Some(label.into());
        r.counters = vec![status("cg.pgsteal", true), status("vm.pswpout", true)];
        for (s, &c) in r.samples.iter_mut().zip(counts) {
            let v = |x: f64| CounterValue {
                value: Some(x),
                raw: x as u64,
                enabled_ns: 0,
                running_ns: 0,
            };
            s.counters.insert("cg.pgsteal".into(), v(c));
            s.counters.insert("vm.pswpout".into(), v(0.0));
        }
        Run {
            id: 1,
            uuid: String::new(),
            started_at: 0.0,
            finished_at: None,
            tag: None,
            oslab_version: String::new(),
            settings: Default::default(),
            clock: crate::model::ClockInfo {
                source: "tsc".into(),
                reason: String::new(),
                tsc_hz: None,
                overhead_ns: 20.0,
                resolution_ns: 1.0,
            },
            environment: Default::default(),
            results: vec![r],
        }
    }

    #[test]
    fn a_patched_kernel_that_steals_more_shows_as_more() {
        let a = run_with(
            &[100.0, 110.0, 90.0, 105.0, 95.0, 100.0, 102.0, 98.0],
            "anonymous",
        );
        let b = run_with(
            &[300.0, 310.0, 290.0, 305.0, 295.0, 300.0, 302.0, 298.0],
            "anonymous",
        );
        let changes = compare(&a, &b, 0.02, &|r| r.label.clone().unwrap_or_default());
        // The all-zero swap-outs are left out; the steals tripled.
        assert_eq!(changes.len(), 1, "{changes:#?}");
        let c = &changes[0];
        assert_eq!((c.counter.as_str(), c.verdict), ("cg.pgsteal", "more"));
        assert!((c.ratio.unwrap() - 3.0).abs() < 0.01);
        assert!(c.p.unwrap() < 0.01);
        let same = compare(&a, &a, 0.02, &|_| String::new());
        assert_eq!(same[0].verdict, "no change");
        let other = run_with(&[1.0; 8], "file shared");
        assert!(compare(&a, &other, 0.02, &|_| String::new()).is_empty());
    }

    #[test]
    fn a_result_without_reclaim_counters_has_no_figures() {
        let r = ExperimentResult::from_values("mmap.access", &[], &[1.0], 10);
        assert!(figures(&r).is_none());
    }
}

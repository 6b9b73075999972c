//! What reclaim did over one result's timed samples (`model::reclaim`): each counter's total,
//! and the headline figures — scanned, stolen, activated, deactivated, refaulted, swapped,
//! major faults, OOM kills, stall — from the cgroup's counters where it counts them, else the
//! machine's. Pure: computed from the stored samples and counter statuses.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::ExperimentResult;
use crate::model::reclaim::{HEADLINE, is_reclaim};

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
    let counted = |name: &str| statuses.iter().any(|c| c.name == name && c.supported);
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
                .find(|s| s.split('+').all(|n| counted(n) && totals.contains_key(n)))?;
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

    #[test]
    fn a_result_without_reclaim_counters_has_no_figures() {
        let r = ExperimentResult::from_values("mmap.access", &[], &[1.0], 10);
        assert!(figures(&r).is_none());
    }
}

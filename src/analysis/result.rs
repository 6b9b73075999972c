//! The figures shown for one stored result: statistics of its samples, counters and rusage
//! per operation, and contamination signs. Pure: computed from the stored samples every time,
//! so any past run is shown exactly as it would have been when it was measured.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Outliers, Summary, classify, median_ci, summarize};
use crate::model::{ExperimentResult, ProbeCount, Rusage, Sample};

/// Resamples for the reported confidence interval, and its fixed seed (reproducible output).
pub const CI_RESAMPLES: usize = 2000;
pub const CI_SEED: u64 = 0x05_1ab;

/// One counter of a result, per operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterFigure {
    pub per_op: Option<f64>,
    /// `ok`, `unsupported` (could not be opened here) or `not_counted` (opened, never ran).
    pub status: &'static str,
    pub reason: Option<String>,
}

/// Signs that something else disturbed the measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Contamination {
    /// Samples with at least one involuntary context switch (preemption).
    pub samples_preempted: usize,
    pub involuntary_switches: i64,
    /// CPU migrations counted during samples, where the counter works.
    pub migrations: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultFigures {
    pub stats: Option<Summary>,
    pub ci: Option<(f64, f64)>,
    pub outliers: Outliers,
    pub ops: u64,
    pub counters: BTreeMap<String, CounterFigure>,
    /// getrusage fields per operation; `maxrss_kb` is the largest value seen instead.
    pub rusage: BTreeMap<String, f64>,
    /// The same for the partner process of a two-process experiment, when there is one.
    pub partner: Option<BTreeMap<String, f64>>,
    /// The same for children reaped during the samples, when there were any.
    pub children: Option<BTreeMap<String, f64>>,
    pub contamination: Contamination,
    /// The process medians when they differ by more than 2× (`analysis::processes::unstable`):
    /// the configuration is unstable here and `ci` is `None` — no interval over so few
    /// disagreeing processes says anything.
    pub unstable: Option<Vec<f64>>,
    /// Each round's process median in round order when several processes measured (`None`:
    /// that round's process does not count — it failed, or was a cold first one left out);
    /// empty for one process. Set by the pooling (`report::pool`), which knows the rounds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Option<f64>>,
}

/// A counter per operation: from the untimed probe batches when it was counted there, else
/// over all samples. `None` when it was not counted, or not in every sample (a sample in which
/// the event never ran says nothing about it).
pub fn counter_per_op(name: &str, samples: &[Sample], probes: &[ProbeCount]) -> Option<f64> {
    if let Some(probe) = probes.iter().find(|p| p.name == name) {
        return probe
            .count
            .value
            .filter(|_| probe.ops > 0)
            .map(|v| v / probe.ops as f64);
    }
    let ops: u64 = samples.iter().map(|s| s.ops).sum();
    if ops == 0 {
        return None;
    }
    let mut total = 0.0;
    for s in samples {
        total += s.counters.get(name)?.value?;
    }
    Some(total / ops as f64)
}

/// The probe counts of several worker processes of one configuration, summed per counter
/// (operations and counts): what a pooled figure, and `compare`, read a probe counter from.
pub fn sum_probes(results: &[&ExperimentResult]) -> Vec<ProbeCount> {
    let mut total: Vec<ProbeCount> = Vec::new();
    for p in results.iter().flat_map(|r| &r.probes) {
        match total.iter_mut().find(|t| t.name == p.name) {
            Some(t) => {
                t.ops += p.ops;
                t.count.value = t.count.value.zip(p.count.value).map(|(a, b)| a + b);
                t.count.raw += p.count.raw;
                t.count.enabled_ns += p.count.enabled_ns;
                t.count.running_ns += p.count.running_ns;
            }
            None => total.push(p.clone()),
        }
    }
    total
}

/// Rusage fields per operation over the samples that have them (`maxrss_kb`: the largest);
/// `None` when no sample has them.
fn per_op_rusage(
    samples: &[Sample],
    ops: u64,
    pick: impl Fn(&Sample) -> Option<Rusage>,
) -> Option<BTreeMap<String, f64>> {
    let picked: Vec<Rusage> = samples.iter().filter_map(&pick).collect();
    if picked.is_empty() || ops == 0 {
        return None;
    }
    let figures = Rusage::FIELDS
        .iter()
        .map(|&field| {
            let value = if field == "maxrss_kb" {
                picked.iter().map(|r| r.maxrss_kb).max().unwrap_or(0) as f64
            } else {
                picked
                    .iter()
                    .map(|r| r.get(field).unwrap_or(0))
                    .sum::<i64>() as f64
                    / ops as f64
            };
            (field.to_string(), value)
        })
        .collect();
    Some(figures)
}

pub fn figures(result: &ExperimentResult) -> ResultFigures {
    let values: Vec<f64> = result.samples.iter().map(|s| s.ns_per_op).collect();
    let stats = summarize(&values);
    let ci = median_ci(&values, 0.95, CI_RESAMPLES, CI_SEED);
    let (_, outliers) = classify(&values);
    let ops: u64 = result.samples.iter().map(|s| s.ops).sum();

    let mut counters = BTreeMap::new();
    for status in &result.counters {
        let figure = if !status.supported {
            CounterFigure {
                per_op: None,
                status: "unsupported",
                reason: status.reason.clone(),
            }
        } else {
            let per_op = counter_per_op(&status.name, &result.samples, &result.probes);
            if per_op.is_some() {
                CounterFigure {
                    per_op,
                    status: "ok",
                    reason: status.reason.clone(),
                }
            } else {
                CounterFigure {
                    per_op: None,
                    status: "not_counted",
                    reason: Some("the event was never scheduled on the PMU during a sample".into()),
                }
            }
        };
        counters.insert(status.name.clone(), figure);
    }

    let rusage = per_op_rusage(&result.samples, ops, |s| Some(s.rusage)).unwrap_or_default();
    let partner = per_op_rusage(&result.samples, ops, |s| s.partner);
    let children = per_op_rusage(&result.samples, ops, |s| s.children);

    let contamination = Contamination {
        samples_preempted: result
            .samples
            .iter()
            .filter(|s| s.rusage.nivcsw > 0)
            .count(),
        involuntary_switches: result.samples.iter().map(|s| s.rusage.nivcsw).sum(),
        migrations: counters
            .get("cpu-migrations")
            .and_then(|c| c.per_op)
            .map(|p| p * ops as f64),
    };

    ResultFigures {
        stats,
        ci,
        outliers,
        ops,
        counters,
        rusage,
        partner,
        children,
        contamination,
        unstable: None,
        rounds: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CounterStatus, CounterValue};

    fn result(values: &[f64]) -> ExperimentResult {
        let mut r = ExperimentResult::from_values("x.y", &[], values, 10);
        for s in &mut r.samples {
            s.rusage = Rusage {
                minflt: 1,
                nivcsw: 1,
                maxrss_kb: 7,
                ..Rusage::default()
            };
            s.counters = [(
                "syscalls".to_string(),
                CounterValue {
                    value: Some(10.0),
                    raw: 10,
                    enabled_ns: 5,
                    running_ns: 5,
                },
            )]
            .into();
        }
        r.counters = vec![
            CounterStatus {
                name: "syscalls".into(),
                supported: true,
                reason: None,
            },
            CounterStatus {
                name: "cycles".into(),
                supported: false,
                reason: Some("no PMU".into()),
            },
        ];
        r
    }

    #[test]
    fn per_op_figures() {
        let f = figures(&result(&[1.0, 2.0, 3.0, 100.0]));
        assert_eq!(f.ops, 40);
        assert_eq!(f.stats.unwrap().median, 2.5);
        assert_eq!(f.counters["syscalls"].per_op, Some(1.0));
        assert_eq!(f.counters["cycles"].status, "unsupported");
        assert_eq!(f.rusage["minflt"], 0.1);
        assert_eq!(f.rusage["maxrss_kb"], 7.0);
        assert_eq!(f.contamination.samples_preempted, 4);
        assert_eq!(f.outliers.total(), 1, "100 is flagged, not dropped");
        let (lo, hi) = f.ci.unwrap();
        assert!(lo <= 2.5 && 2.5 <= hi);
    }

    #[test]
    fn probes_of_several_processes_are_summed() {
        let probe = |ops: u64, v: f64| ProbeCount {
            name: "syscalls".into(),
            ops,
            count: CounterValue {
                value: Some(v),
                raw: v as u64,
                enabled_ns: 1,
                running_ns: 1,
            },
        };
        let mut a = result(&[1.0]);
        a.probes = vec![probe(100, 100.0)];
        let mut b = result(&[2.0]);
        b.probes = vec![probe(300, 900.0)];
        let total = sum_probes(&[&a, &b]);
        assert_eq!(total.len(), 1);
        assert_eq!((total[0].ops, total[0].count.value), (400, Some(1000.0)));
        // 1000 / 400, not the first process's 1.0 per op.
        assert_eq!(counter_per_op("syscalls", &[], &total), Some(2.5));
    }

    #[test]
    fn empty_result_has_no_figures() {
        let f = figures(&result(&[]));
        assert!(f.stats.is_none() && f.ci.is_none());
        assert_eq!(f.counters["syscalls"].status, "not_counted");
        assert!(f.rusage.is_empty());
    }
}

//! Did the experiment measure what it claims? Each experiment declares what its counters must
//! show per operation; every run checks those expectations and marks a result `suspect`, with
//! the measured rate in the reason, when one fails. A metric that could not be counted here is
//! not checked (its counter's status says why).

use crate::model::{Calibration, Check, CounterStatus, Fact, ProbeCount, Sample};

/// A quantity per operation, over all samples of a result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A perf counter by name (`syscalls`, `page-faults`, `context-switches`…).
    Counter(&'static str),
    /// A getrusage field (`minflt`, `nvcsw`…), see [`crate::model::Rusage::FIELDS`].
    Rusage(&'static str),
    /// A getrusage field per op in the typical sample: the median over the samples of each
    /// one's own rate. For a claim a passing event outside the experiment may break in a few
    /// samples (another program's writes pushing dirty memory over the flusher's threshold),
    /// while a wrong claim breaks it in most.
    TypicalRusage(&'static str),
    /// Minor plus major faults from getrusage: exact, and available without perf.
    Faults,
    /// Minor plus major faults per op in the typical sample (the median of the samples' own
    /// rates), for a claim of none per op: a process's first sample may take the few faults
    /// of its first touches (3–4 in unixbench.context1's first of three 128-loop samples in
    /// an emulated FreeBSD guest, 2026-12-04, and none after), a count per process that a
    /// short run would otherwise divide by too few operations to stay below the bound.
    TypicalFaults,
    /// A getrusage field summed over both sides of a two-process experiment: the worker and
    /// its partner process (a partner thread is already in the worker's figures).
    BothSides(&'static str),
    /// A getrusage field of the children reaped during the samples (RUSAGE_CHILDREN).
    Children(&'static str),
    /// The share of CPU time spent in the kernel, `stime / (utime + stime)` (not per op).
    SystemShare,
    /// Context switches of both sides, voluntary plus involuntary (`nvcsw + nivcsw` of the
    /// worker and its partner process). The proof that a switch happened: a task woken on its
    /// own CPU often preempts the waker before the waker blocks, and then the waker's switch
    /// is counted as involuntary (measured on Linux 6.18: ~43% of the switches of a pinned
    /// pipe ping-pong), and a `sched_yield` that switches always is (the task stays runnable).
    BothSidesSwitches,
    /// A figure the experiment measured besides its timed operation, by name (see
    /// `Routine::facts`): the value itself, not per op. Not checked when absent or NaN.
    Fact(&'static str),
}

impl Metric {
    pub fn label(&self) -> String {
        match self {
            Metric::Counter(name) => format!("{name} per op"),
            Metric::Rusage(field) => format!("{field} per op"),
            Metric::TypicalRusage(field) => format!("{field} per op in the median sample"),
            Metric::Faults => "page faults (minflt+majflt) per op".to_string(),
            Metric::TypicalFaults => {
                "page faults (minflt+majflt) per op in the median sample".to_string()
            }
            Metric::BothSides(field) => format!("{field} of both sides per op"),
            Metric::Children(field) => format!("{field} of the children per op"),
            Metric::SystemShare => "system-time share".to_string(),
            Metric::BothSidesSwitches => "switches (nvcsw+nivcsw) of both sides per op".to_string(),
            Metric::Fact(name) => name.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// Strictly below.
    Below(f64),
    /// At least.
    AtLeast(f64),
    /// Within `tolerance` (absolute) of `value`.
    Near { value: f64, tolerance: f64 },
}

impl Bound {
    pub fn holds(&self, x: f64) -> bool {
        match *self {
            Bound::Below(limit) => x < limit,
            Bound::AtLeast(limit) => x >= limit,
            Bound::Near { value, tolerance } => (x - value).abs() <= tolerance,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            Bound::Below(limit) => format!("< {}", fmt_num(limit)),
            Bound::AtLeast(limit) => format!(">= {}", fmt_num(limit)),
            Bound::Near { value, tolerance } => {
                format!("{} ± {}", fmt_num(value), fmt_num(tolerance))
            }
        }
    }
}

/// What a counter must show for the result to be trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    pub metric: Metric,
    pub bound: Bound,
    /// Why this must hold, in the words of the experiment.
    pub why: &'static str,
}

impl Expectation {
    pub fn new(metric: Metric, bound: Bound, why: &'static str) -> Expectation {
        Expectation { metric, bound, why }
    }
}

/// CPU time needed before the system share is trusted (see `Metric::SystemShare`).
pub const MIN_CPU_US_FOR_SHARE: i64 = 400_000;

/// The measured value of `metric` over `samples`, or `None` when it was not counted.
pub fn measure(
    metric: Metric,
    samples: &[Sample],
    probes: &[ProbeCount],
    counters: &[CounterStatus],
) -> Option<f64> {
    let ops: u64 = samples.iter().map(|s| s.ops).sum();
    if samples.is_empty() || ops == 0 {
        return None;
    }
    let ops = ops as f64;
    match metric {
        Metric::Counter(name) => {
            if !counters.iter().any(|c| c.name == name && c.supported) {
                return None;
            }
            crate::analysis::result::counter_per_op(name, samples, probes)
        }
        Metric::Rusage(field) => {
            let total: i64 = samples
                .iter()
                .map(|s| s.rusage.get(field).unwrap_or(0))
                .sum();
            Some(total as f64 / ops)
        }
        Metric::TypicalRusage(field) => typical(samples, |s| s.rusage.get(field).unwrap_or(0)),
        Metric::TypicalFaults => typical(samples, |s| s.rusage.minflt + s.rusage.majflt),
        Metric::BothSides(field) => {
            let total: i64 = samples
                .iter()
                .map(|s| {
                    s.rusage.get(field).unwrap_or(0)
                        + s.partner.and_then(|p| p.get(field)).unwrap_or(0)
                })
                .sum();
            Some(total as f64 / ops)
        }
        Metric::BothSidesSwitches => {
            let switches = |r: &crate::model::Rusage| r.nvcsw + r.nivcsw;
            let total: i64 = samples
                .iter()
                .map(|s| switches(&s.rusage) + s.partner.as_ref().map_or(0, switches))
                .sum();
            Some(total as f64 / ops)
        }
        Metric::Children(field) => {
            let total: i64 = samples
                .iter()
                .map(|s| s.children.and_then(|c| c.get(field)).unwrap_or(0))
                .sum();
            Some(total as f64 / ops)
        }
        Metric::Faults => {
            let total: i64 = samples
                .iter()
                .map(|s| s.rusage.minflt + s.rusage.majflt)
                .sum();
            Some(total as f64 / ops)
        }
        Metric::SystemShare => {
            let user: i64 = samples.iter().map(|s| s.rusage.utime_us).sum();
            let system: i64 = samples.iter().map(|s| s.rusage.stime_us).sum();
            // The kernel splits CPU time between user and system by sampling at each tick
            // (tick-based accounting, HZ 100–1000), so a share over a few ticks is a coarse
            // fraction: measured 0.25 and 0.5 for a share near 0.85 over 40 ms. Only judge it
            // over enough CPU time for ~100 ticks even at HZ=250.
            if user + system < MIN_CPU_US_FOR_SHARE {
                return None;
            }
            Some(system as f64 / (user + system) as f64)
        }
        Metric::Fact(_) => None,
    }
}

/// `count` per op in the typical sample: the median over the samples of each one's own rate.
fn typical(samples: &[Sample], count: impl Fn(&Sample) -> i64) -> Option<f64> {
    let rates: Vec<f64> = samples
        .iter()
        .filter(|s| s.ops > 0)
        .map(|s| count(s) as f64 / s.ops as f64)
        .collect();
    crate::analysis::median(&rates)
}

/// Why no expectation is checked under emulation: what the counters count there is the
/// emulator's work too, or nothing (measured with qemu-user 7.2 running aarch64 on x86-64:
/// it ignores MAP_POPULATE and MADV_POPULATE_*, runs vfork as fork and shows its own /proc
/// views; with Wine 8.0 running Windows code on Linux: it counts no context switches and no
/// page faults).
pub const UNDER_EMULATION: &str = "unsupported under emulation: the emulator's own page \
     faults, context switches and system calls are in the counts or are not counted at all, \
     and its calls are not the system's; not checked";

/// Check every expectation that can be checked here. Under user-mode emulation (`emulation`:
/// the emulator, see `Environment::emulation`) each is measured but not judged: its check
/// holds, and its detail says why it was not checked ([`UNDER_EMULATION`]).
pub fn check(
    expectations: &[Expectation],
    samples: &[Sample],
    probes: &[ProbeCount],
    counters: &[CounterStatus],
    facts: &[Fact],
    emulation: Option<&str>,
) -> Vec<Check> {
    expectations
        .iter()
        .filter_map(|e| {
            let value = match e.metric {
                Metric::Fact(name) => facts
                    .iter()
                    .find(|f| f.name == name)
                    .map(|f| f.value)
                    .filter(|v| v.is_finite())?,
                metric => measure(metric, samples, probes, counters)?,
            };
            let check = format!("{} {}", e.metric.label(), e.bound.describe());
            if emulation.is_some() {
                return Some(Check {
                    check,
                    ok: true,
                    detail: format!("measured {}; {UNDER_EMULATION}", fmt_num(value)),
                });
            }
            let ok = e.bound.holds(value);
            Some(Check {
                check,
                ok,
                detail: format!(
                    "measured {}{}: {}",
                    fmt_num(value),
                    if ok { "" } else { " (failed)" },
                    e.why
                ),
            })
        })
        .collect()
}

/// Why a result's time per operation is no measurement: its median is zero or below (or not a
/// number), which only a subtraction can make (the empty loop, the routine's baseline), so
/// the subtracted cost was larger than, or as large as, the measured one. `None`: positive.
pub fn non_positive_reason(samples: &[Sample], calibration: &Calibration) -> Option<String> {
    if samples.is_empty() {
        return None;
    }
    let times: Vec<f64> = samples.iter().map(|s| s.ns_per_op).collect();
    // No finite time at all reads as NaN, which is not above 0 either.
    let median = crate::analysis::median(&times).unwrap_or(f64::NAN);
    if median > 0.0 {
        return None;
    }
    let mut taken = Vec::new();
    if let Some(ns) = calibration.baseline_ns {
        taken.push(format!("the baseline's {} ns", fmt_num(ns)));
    }
    if let Some(ns) = calibration.loop_overhead_ns {
        taken.push(format!("the empty loop's {} ns", fmt_num(ns)));
    }
    let taken = if taken.is_empty() {
        "the timer's overhead".to_string()
    } else {
        taken.join(" and ")
    };
    Some(format!(
        "the median time per operation came out at {} ns, not above 0: {taken} per operation, \
         taken off every sample, was as large as what was measured (the operation is lost in \
         the noise of what is subtracted); not a measurement",
        fmt_num(median)
    ))
}

/// The reason a result is suspect: every failed check, or `None` when all held.
pub fn suspect_reason(checks: &[Check]) -> Option<String> {
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| format!("expected {}, {}", c.check, c.detail))
        .collect();
    (!failed.is_empty()).then(|| failed.join("; "))
}

fn fmt_num(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 0.01 {
        format!("{:.3}", x)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{x:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CounterValue, Rusage};

    fn sample(ops: u64, minflt: i64, syscalls: Option<f64>) -> Sample {
        let mut s = Sample {
            ops,
            elapsed_ns: 1000.0,
            ns_per_op: 1.0,
            rusage: Rusage {
                minflt,
                utime_us: 100_000,
                stime_us: 300_000,
                ..Rusage::default()
            },
            partner: None,
            children: None,
            counters: Default::default(),
        };
        if let Some(v) = syscalls {
            s.counters.insert(
                "syscalls".into(),
                CounterValue {
                    value: Some(v),
                    raw: v as u64,
                    enabled_ns: 1,
                    running_ns: 1,
                },
            );
        }
        s
    }

    fn supported(name: &str) -> Vec<CounterStatus> {
        vec![CounterStatus {
            name: name.into(),
            supported: true,
            reason: None,
        }]
    }

    #[test]
    fn per_op_rates_over_all_samples() {
        let samples = vec![sample(1000, 1, Some(1000.0)), sample(1000, 3, Some(1002.0))];
        let c = supported("syscalls");
        assert_eq!(measure(Metric::Faults, &samples, &[], &c), Some(0.002));
        assert_eq!(
            measure(Metric::Counter("syscalls"), &samples, &[], &c),
            Some(1.001)
        );
        assert_eq!(measure(Metric::SystemShare, &samples, &[], &c), Some(0.75));
        assert_eq!(
            measure(Metric::Counter("syscalls"), &samples, &[], &[]),
            None,
            "unsupported"
        );
        let mut short = sample(1000, 0, None);
        short.rusage.stime_us = 1000;
        assert_eq!(
            measure(Metric::SystemShare, &[short], &[], &c),
            None,
            "too few ticks to judge"
        );
    }

    #[test]
    fn both_sides_and_children() {
        let mut a = sample(10, 0, None);
        a.rusage.nvcsw = 10;
        a.partner = Some(Rusage {
            nvcsw: 10,
            ..Rusage::default()
        });
        a.children = Some(Rusage {
            minflt: 30,
            ..Rusage::default()
        });
        let b = sample(10, 0, None);
        let c = supported("x");
        assert_eq!(
            measure(Metric::BothSides("nvcsw"), &[a.clone(), b], &[], &c),
            Some(1.0)
        );
        assert_eq!(
            measure(Metric::Rusage("nvcsw"), &[a.clone()], &[], &c),
            Some(1.0)
        );
        assert_eq!(
            measure(Metric::Children("minflt"), &[a], &[], &c),
            Some(3.0)
        );
    }

    #[test]
    fn both_sides_switches_add_both_kinds_of_both_sides() {
        let mut a = sample(10, 0, None);
        a.rusage.nvcsw = 6;
        a.rusage.nivcsw = 4;
        a.partner = Some(Rusage {
            nvcsw: 7,
            nivcsw: 3,
            ..Rusage::default()
        });
        // A partner thread: no partner figures, the worker's rusage covers both threads.
        let mut b = sample(10, 0, None);
        b.rusage.nvcsw = 12;
        b.rusage.nivcsw = 8;
        let c = supported("x");
        assert_eq!(
            measure(Metric::BothSidesSwitches, &[a.clone()], &[], &c),
            Some(2.0)
        );
        assert_eq!(
            measure(Metric::BothSidesSwitches, &[a.clone(), b], &[], &c),
            Some(2.0)
        );
        assert_eq!(
            measure(Metric::BothSides("nvcsw"), &[a], &[], &c),
            Some(1.3),
            "voluntary alone undercounts"
        );
        assert_eq!(
            Metric::BothSidesSwitches.label(),
            "switches (nvcsw+nivcsw) of both sides per op"
        );
    }

    #[test]
    fn a_probe_count_stands_for_the_counter() {
        let samples = vec![sample(1000, 0, None)];
        let probes = vec![ProbeCount {
            name: "syscalls".into(),
            ops: 3000,
            count: CounterValue {
                value: Some(3003.0),
                raw: 3003,
                enabled_ns: 9,
                running_ns: 9,
            },
        }];
        let c = supported("syscalls");
        assert_eq!(
            measure(Metric::Counter("syscalls"), &samples, &probes, &c),
            Some(1.001)
        );
    }

    #[test]
    fn failed_check_names_the_rate() {
        let samples = vec![sample(100, 100, None)];
        let exp = [
            Expectation::new(Metric::Faults, Bound::Below(0.01), "no memory is touched"),
            Expectation::new(
                Metric::Counter("syscalls"),
                Bound::Near {
                    value: 1.0,
                    tolerance: 0.05,
                },
                "x",
            ),
        ];
        let checks = check(&exp, &samples, &[], &[], &[], None);
        assert_eq!(checks.len(), 1, "the unsupported counter is not checked");
        assert!(!checks[0].ok);
        let reason = suspect_reason(&checks).unwrap();
        assert!(reason.contains("measured 1"), "{reason}");
        assert!(reason.contains("no memory is touched"), "{reason}");

        // Under emulation the same figure is measured, said, and not judged.
        let emulated = check(&exp, &samples, &[], &[], &[], Some("qemu-aarch64"));
        assert_eq!(emulated.len(), 1);
        assert!(emulated[0].ok, "{:?}", emulated[0]);
        assert!(
            emulated[0]
                .detail
                .starts_with("measured 1; unsupported under emulation"),
            "{}",
            emulated[0].detail
        );
        assert_eq!(suspect_reason(&emulated), None);
    }

    #[test]
    fn bounds() {
        assert!(Bound::Below(0.01).holds(0.0099));
        assert!(!Bound::Below(0.01).holds(0.01));
        assert!(Bound::AtLeast(0.5).holds(0.5));
        assert!(
            Bound::Near {
                value: 2.0,
                tolerance: 0.1
            }
            .holds(1.95)
        );
        assert!(
            !Bound::Near {
                value: 2.0,
                tolerance: 0.1
            }
            .holds(2.2)
        );
    }

    #[test]
    fn the_typical_sample_ignores_a_few_disturbed_ones_but_not_most() {
        let with_minflt = |per_sample: &[i64]| -> Vec<Sample> {
            per_sample.iter().map(|&m| sample(10, m, None)).collect()
        };
        let typical = Metric::TypicalRusage("minflt");
        // One sample in five rewrote written-back pages: the mean says 1.6, the median 0.
        let few = with_minflt(&[0, 0, 80, 0, 0]);
        assert_eq!(measure(Metric::Rusage("minflt"), &few, &[], &[]), Some(1.6));
        assert_eq!(measure(typical, &few, &[], &[]), Some(0.0));
        // In most samples it is the loop itself.
        let most = with_minflt(&[8, 0, 8, 8]);
        assert_eq!(measure(typical, &most, &[], &[]), Some(0.8));
        assert_eq!(measure(typical, &[], &[], &[]), None);
    }

    #[test]
    fn a_first_sample_s_faults_do_not_make_a_short_run_fault_per_op() {
        // unixbench.context1 in an emulated FreeBSD guest: three samples of 128 loops, the
        // first with the process's 4 first-touch faults: 0.0104 per op over all, 0 typically.
        let samples: Vec<Sample> = [4, 0, 0].iter().map(|&m| sample(128, m, None)).collect();
        let none = Expectation::new(Metric::TypicalFaults, Bound::Below(0.01), "none");
        let checks = check(&[none], &samples, &[], &[], &[], None);
        assert!(checks[0].ok, "{checks:?}");
        assert!(measure(Metric::Faults, &samples, &[], &[]).is_some_and(|f| f > 0.01));
        // Faults in every sample are the loop's own, and fail it.
        let every: Vec<Sample> = [4, 3, 5].iter().map(|&m| sample(128, m, None)).collect();
        let none = Expectation::new(Metric::TypicalFaults, Bound::Below(0.01), "none");
        assert!(!check(&[none], &every, &[], &[], &[], None)[0].ok);
    }
}

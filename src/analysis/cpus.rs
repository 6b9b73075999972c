//! Whether the CPUs a configuration's processes ran on differ (`oslab run --cpu-turns`).
//!
//! CPUs taken in turn make the CPU a fixed effect; counted as noise, it widens the interval
//! of every configuration it touches. Here it is tested as a factor: a one-way analysis of
//! variance of the processes' log medians grouped by CPU, the spread between the CPUs' means
//! against the spread between processes on one CPU (layout, moments of the host), with
//! Fisher's F. It needs a second process on some CPU (the within-CPU spread needs a degree of
//! freedom); two per CPU is `--cpu-turns`' default. A CPU that takes the disk's interrupts
//! and runs 10% slower is a finding to report per CPU, not an error bar.

use super::special::f_upper_tail;
use super::stats::median;

/// The level below which the CPUs are said to differ.
pub const ALPHA: f64 = 0.05;

/// One CPU's processes.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuGroup {
    pub cpu: usize,
    /// The median of its processes' medians.
    pub median: f64,
    pub processes: usize,
}

/// The CPUs' figures and the test between them.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuEffect {
    /// By CPU number.
    pub groups: Vec<CpuGroup>,
    /// The analysis of variance's p-value: how often CPUs that do not differ would look
    /// this far apart.
    pub p: f64,
    /// How many configurations of the run were tested (1 until `holm` says otherwise).
    pub tests: usize,
    /// `p` adjusted for those tests by Holm's method (`p` itself for one test): eleven
    /// configurations tested at 5% would call one CPU effect by chance 43% of the time.
    pub p_adjusted: f64,
}

impl CpuEffect {
    /// The CPUs differ at the 5% level, over all the run's tests (Holm).
    pub fn differ(&self) -> bool {
        self.p_adjusted < ALPHA
    }

    /// The slowest CPU's median over the fastest's, less one (0.10: 10% apart).
    pub fn range(&self) -> f64 {
        let medians = self.groups.iter().map(|g| g.median);
        let low = medians.clone().fold(f64::INFINITY, f64::min);
        let high = medians.fold(f64::NEG_INFINITY, f64::max);
        high / low - 1.0
    }
}

/// The test over processes with `medians`, the process on `cpus[i]` (`None`: not pinned to
/// one CPU, left out). `None` unless two CPUs or more each hold a process, some CPU two, and
/// every median kept is positive and finite.
pub fn cpu_effect(medians: &[f64], cpus: &[Option<usize>]) -> Option<CpuEffect> {
    let mut by_cpu: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for (&m, cpu) in medians.iter().zip(cpus) {
        if let Some(cpu) = cpu {
            if !(m > 0.0 && m.is_finite()) {
                return None;
            }
            by_cpu.entry(*cpu).or_default().push(m);
        }
    }
    let k = by_cpu.len();
    let n: usize = by_cpu.values().map(Vec::len).sum();
    if k < 2 || n <= k {
        return None;
    }
    let logs: Vec<Vec<f64>> = by_cpu
        .values()
        .map(|ms| ms.iter().map(|m| m.ln()).collect())
        .collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let grand = mean(&logs.concat());
    let (mut between, mut within) = (0.0, 0.0);
    for group in &logs {
        let m = mean(group);
        between += group.len() as f64 * (m - grand).powi(2);
        within += group.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    }
    let (d1, d2) = ((k - 1) as f64, (n - k) as f64);
    // Processes on one CPU that agree exactly: any difference between CPUs is decisive.
    let p = if within <= f64::EPSILON * grand.abs().max(1.0) {
        if between > f64::EPSILON { 0.0 } else { 1.0 }
    } else {
        f_upper_tail((between / d1) / (within / d2), d1, d2)
    };
    let groups = by_cpu
        .into_iter()
        .map(|(cpu, ms)| CpuGroup {
            cpu,
            median: median(&ms).unwrap_or(f64::NAN),
            processes: ms.len(),
        })
        .collect();
    Some(CpuEffect {
        groups,
        p,
        tests: 1,
        p_adjusted: p,
    })
}

/// Holm's step-down adjustment of `ps` (Holm, "A simple sequentially rejective multiple test
/// procedure", Scand. J. Statist. 6(2), 1979), in their order: the i-th smallest p times the
/// number of tests not yet rejected (m − i + 1), made non-decreasing, capped at 1. Rejecting
/// where the adjusted p is below α keeps the chance of any false call at α or less, whatever
/// the tests' dependence.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * ps[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Adjust every effect in `effects` for all of them (Holm), setting `tests` and `p_adjusted`.
pub fn adjust_for_each_other(effects: &mut [&mut CpuEffect]) {
    let ps: Vec<f64> = effects.iter().map(|e| e.p).collect();
    for (effect, adjusted) in effects.iter_mut().zip(holm(&ps)) {
        effect.tests = ps.len();
        effect.p_adjusted = adjusted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_cpu_ten_percent_slower_is_seen_and_equal_cpus_are_not() {
        let cpus = [Some(1), Some(0), Some(1), Some(0)];
        let slow_one = cpu_effect(&[110.0, 100.0, 111.0, 101.0], &cpus).unwrap();
        assert!(slow_one.differ(), "{slow_one:?}");
        assert_eq!(slow_one.groups[0].cpu, 0);
        assert_eq!(slow_one.groups[1].median, 110.5);
        assert!((slow_one.range() - 110.5 / 100.5 + 1.0).abs() < 1e-12);
        let same = cpu_effect(&[100.0, 104.0, 103.0, 101.0], &cpus).unwrap();
        assert!(!same.differ(), "{same:?}");
        assert!(same.p > 0.5);
    }

    #[test]
    fn too_few_or_unpinned_processes_give_no_test() {
        // One process a CPU: no spread within a CPU to hold the difference against.
        assert_eq!(cpu_effect(&[1.0, 2.0], &[Some(0), Some(1)]), None);
        // One CPU.
        assert_eq!(cpu_effect(&[1.0, 2.0, 3.0], &[Some(0); 3]), None);
        // Unpinned processes are left out.
        assert_eq!(
            cpu_effect(&[1.0, 2.0, 3.0], &[Some(0), None, Some(1)]),
            None
        );
        assert_eq!(
            cpu_effect(&[1.0, 0.0, 3.0], &[Some(0), Some(0), Some(1)]),
            None
        );
        // Identical processes on each CPU, the CPUs apart.
        let exact = cpu_effect(&[1.0, 1.0, 2.0, 2.0], &[Some(0), Some(0), Some(1), Some(1)]);
        assert_eq!(exact.map(|e| e.p), Some(0.0));
    }

    #[test]
    fn holm_multiplies_the_smallest_by_the_tests_and_keeps_the_order() {
        // Holm's own kind of example: m = 4.
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.3]), vec![0.3]);
        assert_eq!(holm(&[0.6, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn one_call_in_eleven_tests_at_p_0_016_is_not_a_cpu_effect() {
        // The calibration set's `--cpu-turns 0,1` (docs/measurement.md): pagefault.anon
        // thp=on at p = 0.016 among ten at 0.15–0.54.
        let cpus = [Some(0), Some(1), Some(0), Some(1)];
        let mut one = cpu_effect(&[100.0, 110.0, 101.0, 111.0], &cpus).unwrap();
        assert!(one.differ());
        one.p = 0.016;
        one.p_adjusted = 0.016;
        let mut others: Vec<CpuEffect> = (0..10)
            .map(|i| CpuEffect {
                p: 0.15 + 0.04 * i as f64,
                ..one.clone()
            })
            .collect();
        let mut all: Vec<&mut CpuEffect> = vec![&mut one];
        all.extend(others.iter_mut());
        adjust_for_each_other(&mut all);
        assert_eq!(one.tests, 11);
        assert!((one.p_adjusted - 0.176).abs() < 1e-12, "{}", one.p_adjusted);
        assert!(!one.differ());
    }

    proptest! {
        #[test]
        fn holm_never_lowers_a_p_value_nor_passes_one(
            ps in proptest::collection::vec(0.0f64..=1.0, 0..20),
        ) {
            let adjusted = holm(&ps);
            prop_assert_eq!(adjusted.len(), ps.len());
            for (a, p) in adjusted.iter().zip(&ps) {
                prop_assert!(*a >= *p && *a <= 1.0, "{} {}", a, p);
            }
        }

        #[test]
        fn the_p_value_is_a_probability_and_scale_free(
            medians in proptest::collection::vec(1e-3f64..1e9, 3..12),
            scale in 1e-3f64..1e3,
        ) {
            let cpus: Vec<Option<usize>> = (0..medians.len()).map(|i| Some(i % 2)).collect();
            let effect = cpu_effect(&medians, &cpus).expect("two CPUs, one with two processes");
            prop_assert!((0.0..=1.0).contains(&effect.p));
            let scaled: Vec<f64> = medians.iter().map(|m| m * scale).collect();
            let again = cpu_effect(&scaled, &cpus).unwrap();
            prop_assert!((again.p - effect.p).abs() < 1e-6, "{} {}", effect.p, again.p);
        }
    }
}

//! How busy each CPU was over an interval, from `kern.cp_times`: per CPU, the ticks spent in
//! user, nice, system, interrupt and idle (CPUSTATES = 5).

use std::collections::BTreeMap;

/// kern.cp_times has no steal state: the hypervisor's share is not seen from inside.
pub use crate::platform::absent::steal::Steal;

/// Why FreeBSD cannot say how much time its hypervisor stole.
pub const NO_STEAL: &str = "FreeBSD's kern.cp_times counts no steal time";

/// Cumulative (busy, total) ticks per CPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes(BTreeMap<usize, (u64, u64)>);

/// user, nice, sys, intr, idle.
const CPUSTATES: usize = 5;
const IDLE: usize = 4;

impl CpuTimes {
    pub fn now() -> CpuTimes {
        super::super::unix::bsd::sysctl::longs("kern.cp_times")
            .map(|ticks| from_ticks(&ticks))
            .unwrap_or_default()
    }

    /// The busy fraction (0–1) of the CPUs not in `excluded` between `self` and `later`,
    /// averaged over those CPUs; `None` when there is none or nothing was counted.
    pub fn busy_since(&self, later: &CpuTimes, excluded: &[usize]) -> Option<f64> {
        let (mut busy, mut total) = (0u64, 0u64);
        for (cpu, (b1, t1)) in &later.0 {
            let Some((b0, t0)) = self.0.get(cpu).filter(|_| !excluded.contains(cpu)) else {
                continue;
            };
            busy = busy.saturating_add(b1.saturating_sub(*b0));
            total = total.saturating_add(t1.saturating_sub(*t0));
        }
        (total > 0).then(|| busy as f64 / total as f64)
    }
}

fn from_ticks(ticks: &[i64]) -> CpuTimes {
    let times = ticks
        .chunks_exact(CPUSTATES)
        .enumerate()
        .map(|(cpu, states)| {
            let total = states
                .iter()
                .fold(0u64, |a, &t| a.saturating_add(t.max(0) as u64));
            let idle = states[IDLE].max(0) as u64;
            (cpu, (total.saturating_sub(idle), total))
        })
        .collect();
    CpuTimes(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_fraction_of_the_other_cpus() {
        let a = from_ticks(&[10, 0, 10, 0, 80, 0, 0, 0, 0, 100]);
        let b = from_ticks(&[60, 0, 10, 0, 130, 25, 0, 25, 0, 150]);
        assert_eq!(a.busy_since(&b, &[0]), Some(0.5));
        assert_eq!(a.busy_since(&b, &[0, 1]), None);
    }
}

//! How busy each CPU was over an interval, from the per-CPU lines of /proc/stat (proc(5)):
//! recorded with every result because a cross-CPU figure depends on what the other CPUs did.

use std::collections::BTreeMap;

/// Cumulative (busy, total) jiffies per CPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes(BTreeMap<usize, (u64, u64)>);

impl CpuTimes {
    pub fn now() -> CpuTimes {
        std::fs::read_to_string("/proc/stat")
            .map(|s| parse(&s))
            .unwrap_or_default()
    }

    /// The busy fraction (0–1) of the CPUs not in `excluded` between `self` and `later`,
    /// averaged over those CPUs; `None` when there is none or nothing was counted.
    pub fn busy_since(&self, later: &CpuTimes, excluded: &[usize]) -> Option<f64> {
        let (mut busy, mut total) = (0u64, 0u64);
        for (cpu, (b1, t1)) in &later.0 {
            if excluded.contains(cpu) {
                continue;
            }
            let Some((b0, t0)) = self.0.get(cpu) else {
                continue;
            };
            busy = busy.saturating_add(b1.saturating_sub(*b0));
            total = total.saturating_add(t1.saturating_sub(*t0));
        }
        (total > 0).then(|| busy as f64 / total as f64)
    }
}

pub(super) fn parse(text: &str) -> CpuTimes {
    let mut times = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next() else { continue };
        let Some(cpu) = name
            .strip_prefix("cpu")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let values: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
        if values.len() < 4 {
            continue;
        }
        // Saturating: a garbled line must not overflow (found by fuzzing).
        let total = values
            .iter()
            .take(8)
            .fold(0u64, |a, v| a.saturating_add(*v));
        // idle (4th) and iowait (5th) are not busy; guest time is already in user.
        let idle = values[3].saturating_add(values.get(4).copied().unwrap_or(0));
        times.insert(cpu, (total - idle.min(total), total));
    }
    CpuTimes(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_fraction_of_the_other_cpus() {
        let a = parse("cpu  1 2 3 4\ncpu0 10 0 10 80 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\n");
        let b = parse("cpu  1 2 3 4\ncpu0 60 0 10 130 0 0 0 0 0 0\ncpu1 25 0 25 150 0 0 0 0 0 0\n");
        assert_eq!(a.busy_since(&b, &[0]), Some(0.5));
        assert_eq!(a.busy_since(&b, &[1]), Some(0.5));
        assert_eq!(a.busy_since(&b, &[]), Some(100.0 / 200.0));
        assert_eq!(a.busy_since(&b, &[0, 1]), None);
        assert_eq!(parse("garbage"), CpuTimes::default());
    }

    /// Found by the fuzz target proc_text: the sum of a line's figures overflowed.
    #[test]
    fn huge_figures_saturate() {
        let max = u64::MAX;
        let a = parse(&format!(
            "cpu0 {max} {max} 0 {max} {max}\ncpu1 {max} 1 1 1\n"
        ));
        assert_eq!(a.0[&0], (0, max));
        let zero = parse("cpu0 0 0 0 0\ncpu1 0 0 0 0\n");
        assert!(zero.busy_since(&a, &[]).is_some());
    }
}

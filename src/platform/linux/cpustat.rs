//! How busy each CPU was over an interval, from the per-CPU lines of /proc/stat (proc(5)):
//! recorded with every result because a cross-CPU figure depends on what the other CPUs did;
//! and the time the hypervisor stole from a CPU (the 8th figure of its line), read around
//! every sample.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

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

/// The time a hypervisor ran something else while one CPU (or, unpinned, any CPU) had work:
/// /proc/stat's steal, which the kernel counts from the hypervisor's steal clock and shows in
/// clock ticks (10 ms at USER_HZ 100). A read takes about 9 µs (the kernel formats the whole
/// file), so it is read once a sample, outside the timed window.
pub struct Steal {
    file: File,
    /// `cpuN`, or `cpu`: the line of the sum over CPUs.
    line: String,
    ns_per_tick: u64,
    buf: Vec<u8>,
}

impl Steal {
    /// The steal clock of `cpu` (`None`: every CPU's); `None` when /proc/stat cannot be read
    /// or has no steal figure.
    pub fn open(cpu: Option<usize>) -> Option<Steal> {
        let ticks = super::rusage::clock_ticks_per_second().max(1) as u64;
        let mut steal = Steal {
            file: File::open("/proc/stat").ok()?,
            line: line_name(cpu),
            ns_per_tick: 1_000_000_000 / ticks,
            buf: vec![0; 64 * 1024],
        };
        steal.read_ns().map(|_| steal)
    }

    /// The stolen time so far, in nanoseconds (a multiple of the clock tick).
    pub fn read_ns(&mut self) -> Option<u64> {
        // The CPU lines come first: the start of the file holds them on any machine with a
        // few hundred CPUs or fewer.
        let n = self.file.read_at(&mut self.buf, 0).ok()?;
        let text = std::str::from_utf8(self.buf.get(..n)?).ok();
        // A cut in the middle of a multi-byte character cannot happen in /proc/stat (ASCII),
        // but a cut line can: it is only used when complete.
        let ticks = steal_ticks(text?, &self.line)?;
        Some(ticks.saturating_mul(self.ns_per_tick))
    }
}

/// Why a system cannot say how much time its hypervisor stole.
pub const NO_STEAL: &str = "/proc/stat gives no steal time here";

/// The name of `cpu`'s line (`None`: the `cpu` line of all CPUs).
pub(super) fn line_name(cpu: Option<usize>) -> String {
    match cpu {
        Some(n) => format!("cpu{n}"),
        None => "cpu".to_string(),
    }
}

/// The steal ticks on the line named `name` (`line_name`).
pub(super) fn steal_ticks(text: &str, name: &str) -> Option<u64> {
    let line = text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .find(|l| l.split_whitespace().next() == Some(name))?;
    line.split_whitespace().nth(8)?.parse().ok()
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

    #[test]
    fn steal_is_the_eighth_figure_of_the_cpus_line() {
        let text = "cpu  5840 0 2500 18584 506 0 104 135 0 0\ncpu0 2180 0 844 10707 42 0 10 49 0 0\n\
                    cpu1 3660 0 1656 7876 464 0 94 85 0 0\nintr 1 2 3\n";
        let ticks = |cpu| steal_ticks(text, &line_name(cpu));
        assert_eq!(ticks(None), Some(135));
        assert_eq!(ticks(Some(0)), Some(49));
        assert_eq!(ticks(Some(1)), Some(85));
        assert_eq!(ticks(Some(2)), None);
        // An old kernel's line without steal, and a line cut by the buffer's end.
        assert_eq!(steal_ticks("cpu0 1 2 3 4 5 6 7\n", "cpu0"), None);
        assert_eq!(steal_ticks("cpu0 1 2 3 4 5 6 7 8", "cpu0"), None);
    }

    #[test]
    fn this_machine_reads_its_steal() {
        let mut steal = Steal::open(Some(0)).expect("/proc/stat has cpu0's steal");
        let a = steal.read_ns().unwrap();
        let b = steal.read_ns().unwrap();
        assert!(b >= a);
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

//! Which CPUs this process may run on, and pinning to them (sched_setaffinity(2)).

/// The CPUs in this thread's affinity mask, ascending.
pub fn allowed() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the size of the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Why no thread can be pinned here, if none can: `None`, Linux pins.
pub fn pinning_refusal() -> Option<&'static str> {
    None
}

/// Pin the calling thread to `cpus`.
pub fn pin(cpus: &[usize]) -> std::io::Result<()> {
    pin_task(0, cpus)
}

/// Pin task `tid` (a process or thread id; 0: the calling thread) to `cpus`.
pub fn pin_task(tid: libc::pid_t, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The CPU the calling thread runs on now.
pub fn current() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu >= 0).then_some(cpu as usize)
}

pub use crate::platform::cpu_list::{format_list, parse_list};

/// Each CPU's device interrupts since boot, indexed by CPU number: the numbered lines of
/// /proc/interrupts (the disk's queues, the network's, the serial port), whose affinity
/// steers them to a CPU, not the per-CPU lines (timer, rescheduling, function calls) that the
/// work on a CPU makes itself. `None` where the file is missing or holds no such line.
pub fn device_interrupts() -> Option<Vec<u64>> {
    parse_interrupts(&std::fs::read_to_string("/proc/interrupts").ok()?)
}

/// The CPU numbers /proc/interrupts may name: the kernel's own limit (CONFIG_NR_CPUS is at
/// most 8192), so that a damaged header cannot make a vector of any size.
const MAX_CPUS: usize = 8192;

/// /proc/interrupts' text: a header of `CPUn` columns, then a line per interrupt whose
/// first field is `N:` for a device's and a name (`LOC:`, `RES:`) for the per-CPU kinds;
/// the counts follow in the header's order (a line may stop short: `ERR:` has one).
pub(super) fn parse_interrupts(text: &str) -> Option<Vec<u64>> {
    let mut lines = text.lines();
    let columns: Vec<usize> = lines
        .next()?
        .split_whitespace()
        .map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect::<Option<_>>()?;
    let size = columns.iter().max()? + 1;
    if size > MAX_CPUS {
        return None;
    }
    let mut counts = vec![0u64; size];
    let mut any = false;
    for line in lines {
        let mut fields = line.split_whitespace();
        let Some(irq) = fields.next().and_then(|f| f.strip_suffix(':')) else {
            continue;
        };
        if irq.is_empty() || !irq.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for (&cpu, field) in columns.iter().zip(fields) {
            let Ok(n) = field.parse::<u64>() else { break };
            counts[cpu] = counts[cpu].saturating_add(n);
            any = true;
        }
    }
    any.then_some(counts)
}

/// The caches of CPU `cpu` (level, type, size, line, ways), from sysfs rather than CPUID,
/// whose cache leaves are wrong on some VMs (FINDINGS); empty when the system does not
/// describe them.
pub fn caches(cpu: usize) -> Vec<crate::model::env::Cache> {
    super::env::caches_of(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_to_an_allowed_cpu_works() {
        let allowed = allowed();
        assert!(!allowed.is_empty());
        let last = *allowed.last().unwrap();
        std::thread::spawn(move || {
            pin(&[last]).unwrap();
            assert_eq!(current(), Some(last));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn device_interrupts_are_the_numbered_lines_by_cpu() {
        let text = "           CPU0       CPU1       \n \
            26:          0         14  IO-APIC   4-edge      ttyS0\n \
            36:          0   12253793 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n \
            39:      15486          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0\n\
            NMI:          0          0   Non-maskable interrupts\n\
            LOC:   14687254   17612365   Local timer interrupts\n\
            ERR:          0\n";
        assert_eq!(parse_interrupts(text), Some(vec![15486, 12253807]));
        // Offline CPUs leave gaps in the header: counts go by number.
        let gap = "  CPU0 CPU2\n  5: 7 9 edge\n";
        assert_eq!(parse_interrupts(gap), Some(vec![7, 0, 9]));
        assert_eq!(parse_interrupts("CPU0\nLOC: 5 timer\n"), None);
        assert_eq!(parse_interrupts("CPU99999\n1: 5\n"), None);
        assert_eq!(parse_interrupts(""), None);
        if std::path::Path::new("/proc/interrupts").exists() {
            let here = device_interrupts().expect("a Linux machine has device interrupts");
            assert!(here.len() >= allowed().len().min(1));
        }
    }
}

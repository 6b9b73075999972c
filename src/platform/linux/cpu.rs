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
}

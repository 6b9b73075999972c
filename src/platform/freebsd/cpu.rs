//! Which CPUs this process may run on, and pinning to them (cpuset_getaffinity(2),
//! cpuset_setaffinity(2)).

pub use crate::platform::cpu_list::{format_list, parse_list};

const SET_SIZE: usize = std::mem::size_of::<libc::cpuset_t>();

/// The CPUs in this thread's affinity mask, ascending.
pub fn allowed() -> Vec<usize> {
    // SAFETY: an all-zero cpuset_t is the empty set.
    let mut set: libc::cpuset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpuset_t of the size passed; id -1 is the calling thread.
    let rc = unsafe {
        libc::cpuset_getaffinity(
            libc::CPU_LEVEL_WHICH,
            libc::CPU_WHICH_TID,
            -1,
            SET_SIZE,
            &mut set,
        )
    };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the size of the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Why no thread can be pinned here, if none can: `None`, FreeBSD pins.
pub fn pinning_refusal() -> Option<&'static str> {
    None
}

/// Pin the calling thread to `cpus`.
pub fn pin(cpus: &[usize]) -> std::io::Result<()> {
    pin_task(0, cpus)
}

/// Pin task `tid` (0: the calling thread; a thread id, else a process id: FreeBSD numbers
/// threads apart from processes) to `cpus`.
pub fn pin_task(tid: libc::pid_t, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: an all-zero cpuset_t is the empty set.
    let mut set: libc::cpuset_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    let set_for = |which: libc::c_int, id: libc::id_t| {
        // SAFETY: `set` is a valid cpuset_t of the size passed.
        unsafe { libc::cpuset_setaffinity(libc::CPU_LEVEL_WHICH, which, id, SET_SIZE, &set) }
    };
    let rc = if tid == 0 {
        set_for(libc::CPU_WHICH_TID, -1)
    } else {
        let rc = set_for(libc::CPU_WHICH_TID, tid as libc::id_t);
        if rc == 0 {
            rc
        } else {
            set_for(libc::CPU_WHICH_PID, tid as libc::id_t)
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Each CPU's device interrupts since boot: `None`, FreeBSD counts interrupts per source
/// (`vmstat -i`), not per CPU.
pub fn device_interrupts() -> Option<Vec<u64>> {
    None
}

/// The CPU the calling thread runs on now (sched_getcpu, FreeBSD 13 and later).
pub fn current() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu >= 0).then_some(cpu as usize)
}

/// The caches of CPU `cpu`: FreeBSD's sysctls do not describe them per CPU, and oslab does
/// not read CPUID's cache leaves (wrong on some VMs): empty.
pub fn caches(_cpu: usize) -> Vec<crate::model::env::Cache> {
    Vec::new()
}

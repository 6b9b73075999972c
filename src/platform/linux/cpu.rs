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

/// Parse a CPU list as the kernel writes them: `3`, `0,2`, `0-3,6`.
pub fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        if let Some((a, b)) = part.split_once('-') {
            let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            if a > b || b - a > 4096 {
                return None;
            }
            cpus.extend(a..=b);
        } else {
            cpus.push(part.parse().ok()?);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    cpus.retain(|c| seen.insert(*c));
    (!cpus.is_empty()).then_some(cpus)
}

/// Render a CPU list compactly: `0-3,6`.
pub fn format_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
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
    use proptest::prelude::*;

    #[test]
    fn lists() {
        assert_eq!(parse_list("3"), Some(vec![3]));
        assert_eq!(parse_list("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_list("1,1"), Some(vec![1]));
        assert_eq!(parse_list("2-1"), None);
        assert_eq!(parse_list("x"), None);
        assert_eq!(parse_list(""), None);
        assert_eq!(format_list(&[0, 1, 2, 5]), "0-2,5");
    }

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

    proptest! {
        #[test]
        fn list_round_trip(cpus in proptest::collection::btree_set(0usize..512, 1..20)) {
            let v: Vec<usize> = cpus.into_iter().collect();
            prop_assert_eq!(parse_list(&format_list(&v)), Some(v));
        }

        #[test]
        fn list_parser_never_panics(s in "\\PC*") {
            let _ = parse_list(&s);
        }
    }
}

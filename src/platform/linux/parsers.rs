//! One door to every parser of text the kernel writes: /proc (cpuinfo, meminfo, stat,
//! interrupts, status, task stat, mountinfo, pressure), /sys (sizes, CPU lists, choice
//! files), cgroup files and os-release. The parsers stay private to their modules; [`parse_all`] runs each
//! of them on one text so that the fuzz target `proc_text` and its regression tests can
//! reach them. smaps has its own door, [`super::maps::parse_smaps`].

/// Run every parser of kernel text on `text` and drop the results. A parser must never
/// panic, loop or allocate without bound, whatever a file holds: a kernel that formats a
/// field differently, a container that fakes /proc, a file cut short. Returns how many
/// parsers accepted the text (a figure for tests; what each one returns is its own tests'
/// business).
pub fn parse_all(text: &str) -> usize {
    super::env::parse_texts(text);
    let mut accepted = 0;
    let mut count = |ok: bool| accepted += usize::from(ok);
    count(super::cpu::parse_list(text).is_some());
    count(super::cpu::parse_interrupts(text).is_some());
    count(super::memory::parse_psi(text).is_some());
    count(super::memory::parse_thp_mode(text).is_some());
    count(!super::cgroup::parse_keyed(text).is_empty());
    count(super::cpustat::parse(text) != super::cpustat::CpuTimes::default());
    count(super::cpustat::steal_ticks(text, "cpu0").is_some());
    count(super::mount::mount_of_path(text, "/tmp").is_some());
    // A task's stat, status and the process's status: the same text in each role, and the
    // clock-tick rates of real kernels (100, 250, 1000) and the smallest.
    for hz in [1, 100, 1000] {
        count(super::rusage::parse_task(text, text, text, hz).is_some());
    }
    // The three files as the parts of one text, split at NUL bytes.
    let mut parts = text.splitn(3, '\0');
    let (stat, status, process) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    count(super::rusage::parse_task(stat, status, process, 100).is_some());
    accepted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_files_are_accepted_by_some_parser() {
        for path in [
            "/proc/self/stat",
            "/proc/meminfo",
            "/proc/stat",
            "/proc/self/mountinfo",
        ] {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            parse_all(&text);
        }
        let stat = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
        assert!(parse_all(&stat) >= 1, "/proc/stat is a cpustat file");
        assert_eq!(parse_all(""), 0);
    }
}

//! CPUs on macOS: there is no CPU affinity (thread_policy_set's affinity tags are hints
//! between threads, ignored on Apple silicon), so nothing can be pinned; every CPU is
//! allowed; the caches come from sysctl.

pub use crate::platform::cpu_list::{format_list, parse_list};

/// Every CPU (`hw.ncpu`): a thread may run on any of them.
pub fn allowed() -> Vec<usize> {
    let n = super::super::unix::bsd::sysctl::number("hw.ncpu").unwrap_or(1);
    (0..n.max(1) as usize).collect()
}

const NO_AFFINITY: &str = "macOS has no CPU affinity: threads cannot be pinned";

/// Why no thread can be pinned: see the module.
pub fn pinning_refusal() -> Option<&'static str> {
    Some(NO_AFFINITY)
}

/// Refused: macOS cannot pin a thread.
pub fn pin(cpus: &[usize]) -> std::io::Result<()> {
    pin_task(0, cpus)
}

/// Refused: macOS cannot pin a thread.
pub fn pin_task(_tid: libc::pid_t, _cpus: &[usize]) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        NO_AFFINITY,
    ))
}

/// macOS does not say which CPU a thread runs on.
pub fn current() -> Option<usize> {
    None
}

/// The caches as sysctl gives them for every CPU of the first performance level (the
/// fastest cores: perflevel0), or the machine-wide `hw.*cachesize` where levels are absent
/// (Intel Macs).
pub fn caches(_cpu: usize) -> Vec<crate::model::env::Cache> {
    super::env::caches_of_level(0)
}

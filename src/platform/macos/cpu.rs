//! CPUs on macOS: there is no CPU affinity (thread_policy_set's affinity tags are hints
//! between threads, ignored on Apple silicon), so nothing can be pinned; every CPU is
//! allowed; the caches come from sysctl.

pub use crate::platform::cpu_list::{format_list, parse_list};

use crate::model::env::Cache;
use crate::platform::unix::bsd::sysctl::number;

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

/// Each CPU's device interrupts since boot: `None`, macOS does not publish interrupt counts per
/// CPU.
pub fn device_interrupts() -> Option<Vec<u64>> {
    None
}

/// macOS does not say which CPU a thread runs on.
pub fn current() -> Option<usize> {
    None
}

/// The caches as sysctl gives them for every CPU of the first performance level (the
/// fastest cores: perflevel0), or the machine-wide `hw.*cachesize` where levels are absent
/// (Intel Macs).
pub fn caches(_cpu: usize) -> Vec<Cache> {
    caches_of_level(0)
}

fn cache(level: u32, kind: &str, size: Option<u64>, line: Option<u64>) -> Option<Cache> {
    Some(Cache {
        level,
        kind: kind.to_string(),
        size_bytes: size.filter(|&s| s > 0)?,
        line_bytes: line.and_then(|l| u32::try_from(l).ok()),
        ways: None,
        shared_cpus: None,
    })
}

/// The caches of performance level `level` (`hw.perflevelN.l1dcachesize`…), or the
/// machine-wide `hw.l1dcachesize`… where the system has no levels (Intel Macs).
pub fn caches_of_level(level: u32) -> Vec<Cache> {
    let line = number("hw.cachelinesize");
    let get = |what: &str| {
        number(&format!("hw.perflevel{level}.{what}")).or_else(|| number(&format!("hw.{what}")))
    };
    [
        cache(1, "Data", get("l1dcachesize"), line),
        cache(1, "Instruction", get("l1icachesize"), line),
        cache(2, "Unified", get("l2cachesize"), line),
        cache(3, "Unified", get("l3cachesize"), line),
    ]
    .into_iter()
    .flatten()
    .collect()
}

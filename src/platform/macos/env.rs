//! The machine description on macOS: the common BSD part (sysctls, CPUID on Intel) and
//! `machdep.cpu.brand_string`, `hw.memsize`, `hw.physicalcpu`, the caches, and on Apple
//! silicon the performance levels (`hw.perflevelN.*`): the P- and E-cores, each with its CPU
//! count and caches.

use super::cpu::caches_of_level;
use crate::model::env::{Cache, CoreKind, Environment};
use crate::platform::unix::bsd::sysctl::{number, string};

/// The caches CPU `cpu` sees: those of the first performance level (macOS does not say which
/// level a CPU number belongs to).
pub fn caches_of(_cpu: usize) -> Vec<Cache> {
    caches_of_level(0)
}

/// The performance levels as kinds of core (`hw.nperflevels`, `hw.perflevelN.name`,
/// `.logicalcpu`), level 0 the fastest. macOS does not say which CPU numbers a level has:
/// they are given in level order, which is an assumption, not a reading.
pub fn core_kinds() -> Vec<CoreKind> {
    let levels = number("hw.nperflevels").unwrap_or(0).min(8) as u32;
    let mut next = 0usize;
    (0..levels)
        .filter_map(|level| {
            let n = number(&format!("hw.perflevel{level}.logicalcpu"))? as usize;
            let name = string(&format!("hw.perflevel{level}.name"))
                .unwrap_or_else(|| format!("perflevel{level}"));
            let cpus = (next..next + n).collect();
            next += n;
            Some(CoreKind {
                name: format!("{name} cores"),
                cpus,
                caches: caches_of_level(level),
                ..CoreKind::default()
            })
        })
        .collect()
}

/// oslab does not detect Rosetta 2 yet (`sysctl.proc_translated` would tell).
pub fn emulation() -> Option<String> {
    (number("sysctl.proc_translated") == Some(1))
        .then(|| "Rosetta 2 (x86_64 code translated to arm64)".to_string())
}

/// Describe this machine. Never fails: unreadable facts are left empty.
pub fn collect() -> Environment {
    let mut e = super::super::unix::bsd::env::base();
    e.cpu_model = string("machdep.cpu.brand_string")
        .or_else(|| string("hw.model"))
        .or(e.cpu_model);
    e.cpu_vendor = string("machdep.cpu.vendor");
    e.physical_cores = number("hw.physicalcpu").and_then(|n| u32::try_from(n).ok());
    e.sockets = number("hw.packages").and_then(|n| u32::try_from(n).ok());
    e.online_cpus = e
        .logical_cpus
        .map(|n| super::cpu::format_list(&(0..n as usize).collect::<Vec<_>>()));
    e.cpus_allowed = Some(super::cpu::format_list(&super::cpu::allowed()));
    e.caches = caches_of_level(0);
    e.core_kinds = core_kinds();
    e.os_release = string("kern.osproductversion").map(|v| format!("macOS {v}"));
    e.emulation = emulation();
    if let Ok(m) = super::memory::meminfo() {
        e.mem_total_bytes = Some(m.total);
        e.mem_available_bytes = Some(m.available);
        e.swap_total_bytes = Some(m.swap_total);
    }
    e
}

//! The machine description on FreeBSD: the common BSD part (uname-like sysctls, CPUID) and
//! `hw.model`, `hw.physmem`, the timecounters, `kern.hz`. What FreeBSD does not describe
//! (per-CPU caches, kinds of core, mitigations, governors) stays empty.

use crate::model::env::{Cache, CoreKind, Environment};
use crate::platform::unix::bsd::sysctl;

/// FreeBSD's sysctls do not describe caches per CPU: empty.
pub fn caches_of(_cpu: usize) -> Vec<Cache> {
    Vec::new()
}

/// One kind of core as far as oslab can tell here (FreeBSD does not name hybrid kinds).
pub fn core_kinds() -> Vec<CoreKind> {
    Vec::new()
}

/// oslab knows no user-mode emulator on FreeBSD.
pub fn emulation() -> Option<String> {
    None
}

/// Describe this machine. Never fails: unreadable facts are left empty.
pub fn collect() -> Environment {
    let mut e = super::super::unix::bsd::env::base();
    e.cpu_model = sysctl::string("hw.model").or(e.cpu_model);
    e.cpu_mhz = sysctl::number("hw.clockrate").map(|mhz| mhz as f64);
    e.online_cpus = e
        .logical_cpus
        .map(|n| super::cpu::format_list(&(0..n as usize).collect::<Vec<_>>()));
    e.cpus_allowed = Some(super::cpu::format_list(&super::cpu::allowed()));
    e.os_release = e.kernel_release.as_ref().map(|r| format!("FreeBSD {r}"));
    e.clocksource = sysctl::string("kern.timecounter.hardware");
    e.available_clocksources = sysctl::string("kern.timecounter.choice");
    e.hz = sysctl::number("kern.hz");
    if let Ok(m) = super::memory::meminfo() {
        e.mem_total_bytes = Some(m.total);
        e.mem_available_bytes = Some(m.available);
        e.swap_total_bytes = Some(m.swap_total);
    }
    e.virtualization = sysctl::string("kern.vm_guest").filter(|g| g != "none");
    e
}

//! macOS: sysctl (with the P- and E-core levels of Apple silicon), proc_pidinfo, kqueue for a
//! parent's exit, F_NOCACHE and F_FULLFSYNC, statfs. No CPU pinning (macOS has no affinity
//! call), no raw system calls (the ABI is private to libSystem), no futex (`__ulock_*` is
//! private), and no perf counters, stack sampling, tracing, cgroups or memory maps (`absent`).

/// The operating system this backend serves.
pub const CURRENT: crate::model::Os = crate::model::Os::MacOs;

pub mod clock;
pub mod cpu;
pub mod env;
pub mod fscache;
pub mod futex;
pub mod memory;
pub mod process;
pub mod raw;
pub mod rusage;

pub use super::absent::{
    cgroup, counters, cpustat, maps, reclaim, stacks, swap, symbols, systrace,
};
pub use super::unix::bsd::{mount, pipe};
pub use super::unix::interrupt;

/// Why the features in `absent` are missing here.
pub(super) mod why {
    pub const COUNTERS: &str = "macOS has no public per-thread counter API (kperf is private)";
    pub const SAMPLING: &str = "macOS has no public stack-sampling API for another process's \
                                threads short of DTrace, which oslab does not drive";
    pub const TRACING: &str = "oslab traces with Linux's eBPF and perf tracepoints; macOS \
                               offers DTrace, with System Integrity Protection in the way";
    pub const CGROUPS: &str = "there are no memory cgroups on macOS";
    pub const MAPS: &str = "reading a map with mach_vm_region is not written yet";
}

//! FreeBSD: sysctl, cpuset(2), procctl(2), _umtx_op(2), the raw `syscall` instruction with
//! its carry-flag errors, and statfs. No perf counters, stack sampling, system-call tracing,
//! memory cgroups or memory maps yet (`absent`): each says why.

/// The operating system this backend serves.
pub const CURRENT: crate::model::Os = crate::model::Os::FreeBsd;

pub mod clock;
pub mod cpu;
pub mod cpustat;
pub mod env;
pub mod fscache;
pub mod futex;
pub mod memory;
pub mod process;
pub mod raw;
pub mod rusage;

pub use super::absent::{cgroup, counters, maps, reclaim, stacks, swap, symbols, systrace};
pub use super::unix::bsd::{mount, pipe};
pub use super::unix::interrupt;

/// Why the features in `absent` are missing here.
pub(super) mod why {
    pub const COUNTERS: &str = "hwpmc(4) is not supported by oslab yet";
    pub const SAMPLING: &str = "oslab samples stacks with Linux's perf_event_open; a \
                                hwpmc(4) or DTrace sampler is not written yet";
    pub const TRACING: &str = "oslab traces with Linux's eBPF and perf tracepoints; a \
                               ktrace(1)/DTrace backend is not written yet";
    pub const CGROUPS: &str = "there are no memory cgroups on FreeBSD (rctl(8) limits \
                               are not used by oslab)";
    pub const MAPS: &str = "reading a map with kinfo_getvmmap(3) is not written yet";
}

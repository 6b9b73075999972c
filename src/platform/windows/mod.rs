//! Windows: QueryPerformanceCounter, thread affinity masks, GetProcessTimes and the process
//! memory counters, job objects for a worker and what it starts, the console's Ctrl-C
//! handler, the registry and GlobalMemoryStatusEx for the machine's description,
//! VirtualAlloc. No perf counters, stack sampling, system-call tracing, memory cgroups or
//! memory maps (`absent`): each says why.

/// The operating system this backend serves.
pub const CURRENT: crate::model::Os = crate::model::Os::Windows;

pub(super) mod anon;
pub mod clock;
pub mod cpu;
pub mod env;
pub mod interrupt;
pub mod memory;
pub mod mount;
pub mod process;
pub mod rusage;
pub mod text;

pub use super::absent::{
    cgroup, counters, cpustat, maps, reclaim, stacks, swap, symbols, systrace,
};

/// Why the features in `absent` are missing here.
pub(super) mod why {
    pub const COUNTERS: &str = "oslab reads hardware counters with Linux's perf_event_open; \
                                Windows exposes them only to ETW sessions and drivers";
    pub const SAMPLING: &str = "oslab samples stacks with Linux's perf_event_open; an ETW \
                                sampler is not written yet";
    pub const TRACING: &str = "oslab traces with Linux's eBPF and perf tracepoints; an ETW \
                               system-call tracer is not written yet";
    pub const CGROUPS: &str = "Windows has job objects, not memory cgroups, and oslab does \
                               not confine a memory load with them yet";
    pub const MAPS: &str = "reading a map with VirtualQueryEx is not written yet";
}

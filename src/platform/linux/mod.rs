//! Linux: procfs and sysfs, cgroups v1 and v2, perf_event_open, sched_setaffinity, the raw
//! `syscall` instruction.

/// The operating system this backend serves.
pub const CURRENT: crate::model::Os = crate::model::Os::Linux;

pub mod bpf;
pub mod cgroup;
pub mod clock;
pub mod counters;
pub mod cpu;
pub mod cpustat;
pub mod env;
pub mod fscache;
pub mod futex;
pub use super::unix::interrupt;
pub mod kallsyms;
pub mod maps;
pub mod memory;
pub mod mount;
pub mod parsers;
pub mod pipe;
pub mod process;
pub mod raw;
pub mod reclaim;
pub mod rusage;
pub mod stacks;
pub mod swap;
pub mod symbols;
pub mod systrace;
pub mod tracefs;
pub mod vmscan;

//! The platform layer: the only module that knows which operating system oslab runs on.
//!
//! Everything that differs by OS lives in one folder per OS behind one face, as sysinfo and
//! rustix do: clocks, CPU pinning and topology, process resource usage, counters, memory
//! cgroups, memory maps, the environment description, file-system and cache control, signals,
//! the raw system-call instruction. Callers name `crate::platform::cpu`, never
//! `platform::linux::cpu`, so adding an OS is adding a folder that provides the same modules.
//! The contract each backend fulfils is written down in docs/architecture.md.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

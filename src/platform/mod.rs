//! The platform layer: the only module that knows which operating system oslab runs on.
//!
//! Everything that differs by OS lives in one folder per OS behind one face, as sysinfo and
//! rustix do: clocks, CPU pinning and topology, process resource usage, counters, memory
//! cgroups, memory maps, the environment description, file-system and cache control, signals,
//! the raw system-call instruction. Callers name `crate::platform::cpu`, never
//! `platform::linux::cpu`, so adding an OS is adding a folder that provides the same modules.
//! The contract each backend fulfils is written down in docs/architecture.md.
//!
//! Besides the backends: `unix/` holds what the Unix systems share word for word (signals,
//! getrusage, kill(pid, 0), statfs on the BSDs), and `absent/` the modules of features a
//! backend does not have (perf counters, stack sampling, system-call tracing, memory cgroups):
//! the same types and functions as Linux's, every operation refused with the backend's reason,
//! so that the callers build unchanged and say in one line why the feature is missing.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "freebsd")]
mod freebsd;
#[cfg(target_os = "freebsd")]
use freebsd as this_os;
#[cfg(target_os = "freebsd")]
pub use freebsd::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as this_os;
#[cfg(target_os = "macos")]
pub use macos::*;

#[cfg(unix)]
mod unix;

#[cfg(not(target_os = "linux"))]
mod absent;

mod contract;
mod cpu_list;

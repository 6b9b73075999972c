//! The modules of features a backend does not have: Linux's perf counters, stack sampling,
//! system-call tracing, memory cgroups, and memory pressure and THP. Each keeps the types and functions of the Linux
//! module of the same name, so callers build unchanged, and refuses every operation with the
//! backend's reason (`this_os::why`): a run records the counters as unsupported, `oslab
//! profile` and `oslab trace` refuse in one line, a memory load is unsupported. Nothing here
//! panics and nothing pretends to have measured.

pub mod cgroup;
pub mod counters;
#[cfg(any(target_os = "macos", windows))]
pub mod cpustat;
pub mod maps;
pub mod memory;
pub mod reclaim;
pub mod stacks;
pub mod steal;
pub mod swap;
pub mod symbols;
pub mod systrace;

/// `"<feature> is not available on <OS>: <why>"`.
pub(crate) fn refusal(feature: &str, why: &str) -> String {
    format!(
        "{feature} is not available on {}: {why}",
        super::CURRENT.title()
    )
}

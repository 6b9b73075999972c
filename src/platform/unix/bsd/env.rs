//! The parts of the machine description FreeBSD and macOS read alike: uname, sysctl's
//! `hw.ncpu`, `kern.osrelease`, `kern.version`, `kern.hostname`, the page size, CPUID on x86.
//! Each backend adds what only it has (CPU model, memory sizes, core kinds).

use crate::model::env::Environment;

/// What both BSDs fill alike; the backend completes it.
pub fn base() -> Environment {
    let cpuid = crate::platform::cpuid::facts();
    Environment {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        kernel_release: super::sysctl::string("kern.osrelease"),
        kernel_version: super::sysctl::string("kern.version")
            .map(|v| v.lines().next().unwrap_or_default().trim().to_string()),
        hostname: super::sysctl::string("kern.hostname"),
        // FreeBSD's host UUID (macOS has no such sysctl: None there).
        machine: super::sysctl::string("kern.hostuuid")
            .and_then(|id| crate::model::identity::machine_hash(&id)),
        logical_cpus: super::sysctl::number("hw.ncpu").and_then(|n| u32::try_from(n).ok()),
        page_size: Some(page_size()),
        tsc_invariant: cpuid.tsc_invariant,
        xsave_bytes: cpuid.xsave_bytes,
        hypervisor: cpuid.hypervisor,
        // CPUID's brand string, where the backend's sysctl does not name the CPU.
        cpu_model: cpuid.model,
        oslab_version: env!("CARGO_PKG_VERSION").to_string(),
        oslab_commit: option_env!("OSLAB_GIT_COMMIT").map(str::to_string),
        rustc_version: option_env!("OSLAB_RUSTC_VERSION").map(str::to_string),
        // SAFETY: geteuid has no preconditions.
        is_root: unsafe { libc::geteuid() } == 0,
        ..Environment::default()
    }
}

/// The size of a page, bytes (4096 when the system does not say).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

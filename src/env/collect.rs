//! Reading the environment from /proc, /sys and CPUID.

use super::Environment;

/// Describe this machine. Never fails: unreadable facts are left empty.
pub fn collect() -> Environment {
    Environment {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        oslab_version: env!("CARGO_PKG_VERSION").to_string(),
        ..Environment::default()
    }
}

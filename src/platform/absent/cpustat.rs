//! How busy the other CPUs were, where oslab does not read it yet (macOS's
//! host_processor_info, Windows' processor performance records would give it): every interval
//! reads as unknown.

/// Nothing recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes;

impl CpuTimes {
    pub fn now() -> CpuTimes {
        CpuTimes
    }

    /// Unknown here.
    pub fn busy_since(&self, _later: &CpuTimes, _excluded: &[usize]) -> Option<f64> {
        None
    }
}

pub use super::steal::Steal;

/// Why a system cannot say how much time its hypervisor stole.
pub const NO_STEAL: &str = "this system's CPU statistics give no steal time to oslab yet";

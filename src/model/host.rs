//! The names under which a sample's counters carry what the host did around it
//! (`measure::host` reads them, `analysis::host` sums them up).

/// A sample's stolen time in ns: the hypervisor's steal since the reading after the sample
/// before (clock ticks of 10 ms at USER_HZ 100).
pub const STEAL: &str = "host.steal_ns";
/// The canary's time in ns, timed right after the sample.
pub const CANARY: &str = "host.canary_ns";
/// The kernel canary's time in ns per call: a few calls into the kernel that do no work
/// (`platform::null_call`), timed right after the CPU canary.
pub const KERNEL_CANARY: &str = "host.kernel_canary_ns";

/// Whether a counter name is one of the host's readings.
pub fn is_host(name: &str) -> bool {
    name.starts_with("host.")
}

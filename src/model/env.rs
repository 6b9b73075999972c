//! The machine description stored with every run (`oslab env`). Every field is optional in
//! spirit: a value that cannot be read here is `None` (or empty) rather than an error, because
//! an environment that cannot be fully described must still be measurable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One cache level as the kernel describes it (Linux: sysfs `cacheinfo` of cpu0).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u32>,
    pub ways: Option<u32>,
    /// CPUs sharing this cache, as the kernel lists them (e.g. `0-1`).
    pub shared_cpus: Option<String>,
}

/// One TLB as described by CPUID.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tlb {
    /// e.g. `L1 dTLB 4K`, `L2 TLB 4K/2M`.
    pub name: String,
    pub entries: u32,
    pub ways: Option<String>,
}

/// Whether a perf counter works on this machine (filled by `platform::counters::probe`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterAvailability {
    pub supported: bool,
    pub reason: Option<String>,
}

/// The machine as one run saw it. Fields added after runs were stored read back as their
/// default (`serde(default)`), so older records stay readable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    // --- CPU ---
    pub cpu_model: Option<String>,
    pub cpu_vendor: Option<String>,
    /// family/model/stepping as "6/85/7".
    pub cpu_signature: Option<String>,
    pub microcode: Option<String>,
    pub online_cpus: Option<String>,
    pub logical_cpus: Option<u32>,
    pub physical_cores: Option<u32>,
    pub sockets: Option<u32>,
    pub threads_per_core: Option<u32>,
    pub cpu_mhz: Option<f64>,
    pub caches: Vec<Cache>,
    pub tlbs: Vec<Tlb>,
    pub tsc_invariant: Option<bool>,
    pub cpu_flags_of_note: Vec<String>,
    /// The CPU's "address sizes" (Linux: cpuinfo), e.g. `48 bits physical, 48 bits virtual`: 57 virtual
    /// bits means five-level page tables, one more level for every page walk.
    pub address_sizes: Option<String>,
    /// Bytes of XSAVE state for the user features enabled in XCR0 (CPUID 0xD): the FPU/SIMD
    /// state saved and restored around context switches (about 2.4 KiB with AVX-512).
    pub xsave_bytes: Option<u32>,
    /// CPUs this process may run on (`Cpus_allowed_list`): a container's cpuset shows here.
    pub cpus_allowed: Option<String>,
    // --- memory ---
    pub mem_total_bytes: Option<u64>,
    pub mem_available_bytes: Option<u64>,
    pub swap_total_bytes: Option<u64>,
    pub page_size: Option<u64>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub khugepaged_defrag: Option<String>,
    /// THP for shmem/tmpfs mappings (`shmem_enabled`), which governs shared anonymous memory.
    pub thp_shmem_enabled: Option<String>,
    pub numa_nodes: Option<u32>,
    /// `kernel.numa_balancing`: when on, the kernel unmaps pages to sample accesses (hinting
    /// faults), which shows up in page-fault counts.
    pub numa_balancing: Option<bool>,
    // --- OS and kernel ---
    pub os: String,
    pub os_release: Option<String>,
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub arch: String,
    /// The user-mode emulator this binary runs under (qemu-user on a kernel of another
    /// architecture), in words; `None` on native hardware. Timings are then the emulator's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<String>,
    pub hostname: Option<String>,
    pub kernel_cmdline: Option<String>,
    pub clocksource: Option<String>,
    pub available_clocksources: Option<String>,
    pub hz: Option<u64>,
    pub preemption: Option<String>,
    /// The C library the binary calls the kernel through, e.g. `glibc 2.36`.
    pub libc_version: Option<String>,
    /// Seccomp mode of this process (`disabled`, `strict`, `filter (N filters)`): every
    /// filter runs on every system call, so it adds to each syscall's cost.
    pub seccomp: Option<String>,
    // --- virtualization ---
    pub hypervisor: Option<String>,
    pub virtualization: Option<String>,
    /// Container runtime this process runs in (`docker`, `podman`, `lxc`, `kubernetes`,
    /// `wsl`, …); `None` when no sign of one was found.
    pub container: Option<String>,
    // --- security and power ---
    /// The kernel's view of CPU vulnerabilities and their mitigations (Linux: sysfs
    /// `cpu/vulnerabilities`): name → state.
    pub vulnerabilities: BTreeMap<String, String>,
    pub governor: Option<String>,
    pub cpufreq_driver: Option<String>,
    pub boost: Option<String>,
    /// cpuidle driver and governor: how deep an idle CPU sleeps decides how long waking it
    /// takes (cross-CPU wake-ups, context switches to an idle CPU).
    pub cpuidle_driver: Option<String>,
    pub cpuidle_governor: Option<String>,
    // --- perf ---
    pub perf_event_paranoid: Option<i32>,
    /// `kernel.kptr_restrict`: above 0 hides kernel symbol addresses from non-root profiles.
    pub kptr_restrict: Option<i32>,
    /// PMUs the kernel exposes (Linux: sysfs `event_source/devices`). On x86 the core PMU is
    /// `cpu` (`cpu_core`/`cpu_atom` on hybrids); without it there are no hardware counters,
    /// as in VMs without a virtual PMU.
    pub perf_pmus: Vec<String>,
    /// Counter name → whether it works here; filled by the caller of `collect`.
    pub counters: BTreeMap<String, CounterAvailability>,
    // --- the tool ---
    pub oslab_version: String,
    pub oslab_commit: Option<String>,
    pub rustc_version: Option<String>,
    pub is_root: bool,
}

impl Environment {
    /// Whether a run described by `other` measured on the same machine, in the same state that
    /// decides what a figure is, with the same oslab build: the same host and CPU (model,
    /// logical CPUs, microcode), kernel (release, command line, vulnerability mitigations) and
    /// oslab (version and commit). What drifts from run to run (free memory, frequency, the
    /// counters this run could open) does not count.
    pub fn same_machine(&self, other: &Environment) -> bool {
        self.hostname == other.hostname
            && self.emulation == other.emulation
            && self.cpu_model == other.cpu_model
            && self.logical_cpus == other.logical_cpus
            && self.microcode == other.microcode
            && self.kernel_release == other.kernel_release
            && self.kernel_cmdline == other.kernel_cmdline
            && self.vulnerabilities == other.vulnerabilities
            && self.oslab_version == other.oslab_version
            && self.oslab_commit == other.oslab_commit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_machine_is_told_by_what_decides_a_figure() {
        let a = Environment {
            hostname: Some("lab1".into()),
            kernel_release: Some("6.18.44".into()),
            mem_available_bytes: Some(1 << 30),
            ..Environment::default()
        };
        let drifted = Environment {
            mem_available_bytes: Some(2 << 30),
            cpu_mhz: Some(2400.0),
            ..a.clone()
        };
        assert!(a.same_machine(&drifted));
        let upgraded = Environment {
            kernel_release: Some("6.19.0".into()),
            ..a.clone()
        };
        assert!(!a.same_machine(&upgraded));
        let mut mitigated = a.clone();
        mitigated
            .vulnerabilities
            .insert("spec_rstack_overflow".into(), "Mitigation: Safe RET".into());
        assert!(!a.same_machine(&mitigated));
    }
}

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

/// One kind of core. The cores of a heterogeneous CPU differ (Arm's big.LITTLE and DynamIQ
/// clusters, Intel's P- and E-cores), and a figure measured on one kind says nothing of
/// another; on Arm every core is described this way, since Linux gives no model name there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoreKind {
    /// e.g. "ARM Cortex-A76 r4p0", "Intel P-core".
    pub name: String,
    /// The CPUs of this kind, ascending.
    pub cpus: Vec<usize>,
    /// Arm: MIDR_EL1 as hex, e.g. "0x413fd0c1".
    pub midr: Option<String>,
    /// The scheduler's capacity of these cores (sysfs `cpu_capacity`; 1024 is the biggest).
    pub capacity: Option<u32>,
    /// The highest frequency these cores run at (cpufreq `cpuinfo_max_freq`), MHz.
    pub max_mhz: Option<f64>,
    /// The caches of the first of these CPUs.
    pub caches: Vec<Cache>,
}

/// Whether a perf counter works on this machine (filled by `platform::counters::probe`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterAvailability {
    pub supported: bool,
    pub reason: Option<String>,
    /// The hardware event that counts it where it is not perf's generic one (arm64:
    /// "armv8_cortex_a72 L1D_CACHE_RD (0x40)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
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
    /// The kinds of core, when the platform can tell them apart (Arm: each MIDR; x86: the
    /// hybrid PMUs `cpu_core` and `cpu_atom`); more than one means a heterogeneous CPU.
    pub core_kinds: Vec<CoreKind>,
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
    /// The swap areas (/proc/swaps: kind, path, size, priority; a zram device named as one;
    /// those `--swap` made for the run marked so) and zswap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_areas: Option<String>,
    /// The multi-generational LRU (`/sys/kernel/mm/lru_gen/enabled`): when on, page reclaim
    /// takes its path instead of the classic active/inactive lists (mm/vmscan.c
    /// `shrink_folio_list`'s callers differ), which matters to a patch of the classic one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<String>,
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
    /// The machine's id, hashed (`model::identity::machine_hash`): tells the fleet store's
    /// machines apart when hostnames repeat or change. `None` where the system has no id.
    #[serde(default)]
    pub machine: Option<String>,
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

    /// Whether the CPU has more than one kind of core.
    pub fn heterogeneous(&self) -> bool {
        self.core_kinds.len() > 1
    }

    /// The kind of core CPU `cpu` is, on a heterogeneous CPU.
    pub fn core_kind_of(&self, cpu: usize) -> Option<&CoreKind> {
        if !self.heterogeneous() {
            return None;
        }
        self.core_kinds.iter().find(|k| k.cpus.contains(&cpu))
    }
}

/// The CPUs of `allowed` a run measures on when the user did not pin it: on a heterogeneous
/// CPU only those of the fastest kind among them (the highest capacity, else the highest
/// frequency, else the kind of the highest-numbered CPU, where the big cores usually are),
/// with that kind; elsewhere all of `allowed`.
pub fn fastest_cpus<'k>(
    kinds: &'k [CoreKind],
    allowed: &[usize],
) -> (Vec<usize>, Option<&'k CoreKind>) {
    let present: Vec<&CoreKind> = kinds
        .iter()
        .filter(|k| k.cpus.iter().any(|c| allowed.contains(c)))
        .collect();
    if present.len() < 2 {
        return (allowed.to_vec(), None);
    }
    let rank = |k: &CoreKind| {
        let last = k.cpus.iter().filter(|c| allowed.contains(c)).max().copied();
        (k.capacity, k.max_mhz.map(|m| m as u64), last)
    };
    let Some(fastest) = present.into_iter().max_by_key(|k| rank(k)) else {
        return (allowed.to_vec(), None);
    };
    let cpus = allowed
        .iter()
        .copied()
        .filter(|c| fastest.cpus.contains(c))
        .collect();
    (cpus, Some(fastest))
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

    fn kind(name: &str, cpus: &[usize], capacity: Option<u32>, mhz: Option<f64>) -> CoreKind {
        CoreKind {
            name: name.into(),
            cpus: cpus.to_vec(),
            capacity,
            max_mhz: mhz,
            ..CoreKind::default()
        }
    }

    #[test]
    fn a_run_measures_on_the_fastest_kind_of_core_it_may_use() {
        // RK3399: four Cortex-A53 (capacity 485) and two Cortex-A72 (1024).
        let rk3399 = Environment {
            core_kinds: vec![
                kind("A53", &[0, 1, 2, 3], Some(485), Some(1416.0)),
                kind("A72", &[4, 5], Some(1024), Some(1800.0)),
            ],
            ..Environment::default()
        };
        let all: Vec<usize> = (0..6).collect();
        let (cpus, fastest) = fastest_cpus(&rk3399.core_kinds, &all);
        assert_eq!(
            (cpus, fastest.map(|k| k.name.as_str())),
            (vec![4, 5], Some("A72"))
        );
        // Confined to the little cores, it measures there.
        assert_eq!(fastest_cpus(&rk3399.core_kinds, &[1, 2]).0, vec![1, 2]);
        assert_eq!(rk3399.core_kind_of(5).map(|k| k.name.as_str()), Some("A72"));
        // Without capacities the frequency decides, then the highest-numbered CPU.
        let by_mhz = Environment {
            core_kinds: vec![
                kind("P", &[0, 1], None, Some(5000.0)),
                kind("E", &[2, 3], None, Some(3800.0)),
            ],
            ..Environment::default()
        };
        assert_eq!(
            fastest_cpus(&by_mhz.core_kinds, &[0, 1, 2, 3]).0,
            vec![0, 1]
        );
        let unknown = Environment {
            core_kinds: vec![kind("x", &[0], None, None), kind("y", &[1], None, None)],
            ..Environment::default()
        };
        assert_eq!(fastest_cpus(&unknown.core_kinds, &[0, 1]).0, vec![1]);
        // One kind: every allowed CPU, and no kind is named.
        let server = Environment {
            core_kinds: vec![kind("N1", &[0, 1, 2, 3], None, None)],
            ..Environment::default()
        };
        assert_eq!(
            fastest_cpus(&server.core_kinds, &[0, 1, 2, 3]),
            (vec![0, 1, 2, 3], None)
        );
        assert!(server.core_kind_of(0).is_none());
    }
}

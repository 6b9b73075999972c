//! Reading the environment from /proc, /sys and CPUID.
//!
//! Everything here is best effort: a file that is missing or unreadable (another kernel,
//! another OS, no root) leaves its field `None` or empty; nothing panics and nothing fails.
//! The reading is thin; the parsing is done by pure functions over text, tested on text
//! captured from real machines.
//!
//! Caches come from sysfs, not CPUID: the CPUID cache leaf is wrong on some VMs (a Firecracker
//! guest reports a 320 MB L3), while the kernel's `cacheinfo` is what it schedules by.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::model::env::{Cache, Environment, Tlb};

mod cores;
mod emulation;
mod read;
use read::*;
mod parse;
use parse::*;
mod classify;
use classify::*;

const CPU_DIR: &str = "/sys/devices/system/cpu";
const CLOCKSOURCE_DIR: &str = "/sys/devices/system/clocksource/clocksource0";

/// The caches of CPU `cpu` as sysfs describes them (`cacheinfo`), in index order; empty
/// when the system does not describe them.
pub fn caches_of(cpu: usize) -> Vec<Cache> {
    caches(&Path::new(CPU_DIR).join(format!("cpu{cpu}/cache")))
}

/// The kinds of core of this machine (`Environment::core_kinds`).
pub fn core_kinds() -> Vec<crate::model::env::CoreKind> {
    cores::core_kinds(&read("/proc/cpuinfo").unwrap_or_default())
}
const THP_DIR: &str = "/sys/kernel/mm/transparent_hugepage";

/// Upper bound on the CPUs a cpu list may name (the kernel's NR_CPUS tops out at 8192): a
/// garbled range must not make us allocate billions of entries.
const MAX_CPUS: u32 = 1 << 16;

/// `/proc/cpuinfo` flags worth recording next to an OS measurement, in the order shown.
const FLAGS_OF_NOTE: &[&str] = &[
    // Timekeeping: whether the TSC can be the clock (see `measure`).
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "rdtscp",
    "tsc_deadline_timer",
    // Virtualization.
    "hypervisor",
    // Page tables and the TLB: PCID/INVPCID make PTI cheaper, pdpe1gb allows 1 GiB pages,
    // la57 adds a fifth page-table level.
    "pti",
    "pcid",
    "invpcid",
    "pdpe1gb",
    "la57",
    // Speculation controls the kernel may toggle on every kernel entry or switch.
    "ibrs",
    "ibrs_enhanced",
    "ibpb",
    "stibp",
    "ssbd",
    "md_clear",
    // SMT, the size of the FPU state saved on a switch, and whether a PMU is exposed.
    "ht",
    "xsaves",
    "avx512f",
    "arch_perfmon",
    "perfctr_core",
    // arm64 (`Features`): LSE atomics (a futex or lock without them is a load/store-exclusive
    // loop), SVE's and SME's larger register state saved on a switch, pointer authentication
    // and BTI (paid on every call and return), and self-synchronising counter reads (ECV).
    "atomics",
    "sve",
    "sve2",
    "sme",
    "paca",
    "pacg",
    "bti",
    "ecv",
];

/// The user-mode emulator this binary runs under, in words (see `Environment::emulation`);
/// `None` on native hardware.
pub fn emulation() -> Option<String> {
    emulation::emulation()
}

/// Under user-mode emulation, why no perf event or eBPF program can be had: the emulator
/// implements neither perf_event_open nor bpf (qemu-user fails both with ENOSYS), whatever
/// the kernel under it allows. `None` on native hardware. Sampling and tracing refuse with it.
pub fn perf_refusal_under_emulation() -> Option<String> {
    let emulator = emulation()?;
    Some(format!(
        "unsupported under emulation: the user-mode emulator implements neither \
         perf_event_open nor bpf ({emulator})"
    ))
}

/// Describe this machine. Never fails: unreadable facts are left empty. `counters` is left
/// for the caller, which probes perf events.
pub fn collect() -> Environment {
    let uname = uname();
    let cpuinfo_text = read("/proc/cpuinfo").unwrap_or_default();
    let cpuinfo = parse_cpuinfo(&cpuinfo_text);
    let status = read("/proc/self/status")
        .map(|t| parse_status(&t))
        .unwrap_or_default();
    let cmdline = read_value("/proc/cmdline");
    let cpuid = cpuid::facts();
    let kconfig = kernel_config(uname.release.as_deref());

    let mut e = Environment {
        virtualization: classify_virtualization(&VirtSigns {
            hypervisor: cpuid.hypervisor.as_deref(),
            hypervisor_bit: cpuid.hypervisor_bit,
            acpi_oem: acpi_oem_id().as_deref(),
            dmi_vendor: read_value("/sys/class/dmi/id/sys_vendor").as_deref(),
            dmi_product: read_value("/sys/class/dmi/id/product_name").as_deref(),
        }),
        preemption: preemption_model(
            read("/sys/kernel/debug/sched/preempt").as_deref(),
            cmdline.as_deref(),
            kconfig.as_deref(),
            uname.version.as_deref(),
        ),
        hz: kconfig
            .as_deref()
            .and_then(|c| kconfig_value(c, "CONFIG_HZ")?.parse().ok()),
        seccomp: status.seccomp.clone(),
        cpus_allowed: status.cpus_allowed.clone(),
        kernel_cmdline: cmdline,
        ..Environment::default()
    };
    fill_cpu(&mut e, &cpuinfo, cpuid);
    fill_core_kinds(&mut e, &cpuinfo_text);
    fill_memory(&mut e);
    fill_system(&mut e, &uname);
    fill_power_and_security(&mut e);
    e
}

/// The processor: model, topology, caches and TLBs, flags, the hypervisor.
fn fill_cpu(e: &mut Environment, cpuinfo: &CpuInfo, cpuid: CpuidFacts) {
    let topology = topology(cpuinfo.processors);
    e.cpu_model = cpuinfo.model.clone();
    e.cpu_vendor = cpuinfo.vendor.clone();
    e.cpu_signature = cpuinfo.signature();
    e.microcode = cpuinfo.microcode.clone();
    e.online_cpus = topology.online.clone();
    e.logical_cpus = topology.logical;
    e.physical_cores = topology.cores;
    e.sockets = topology.sockets;
    e.threads_per_core = topology.threads_per_core;
    e.cpu_mhz = cpuinfo.mhz;
    e.caches = caches_of(0);
    e.tlbs = cpuid.tlbs;
    e.tsc_invariant = cpuid.tsc_invariant;
    e.cpu_flags_of_note = flags_of_note(&cpuinfo.flags);
    e.address_sizes = cpuinfo.address_sizes.clone();
    e.xsave_bytes = cpuid.xsave_bytes;
    e.hypervisor = cpuid.hypervisor;
}

/// The kinds of core; on arm64, where the kernel names no model, they name the CPU: the
/// vendor from the MIDR's implementer and the signature from the first core's MIDR.
fn fill_core_kinds(e: &mut Environment, cpuinfo: &str) {
    e.core_kinds = cores::core_kinds(cpuinfo);
    if e.cpu_model.is_none() {
        e.cpu_model = cores::model_from_kinds(&e.core_kinds);
    }
    if let Some((_, midr)) = cores::parse_midrs(cpuinfo).first() {
        e.cpu_vendor = midr.vendor().map(str::to_string).or(e.cpu_vendor.take());
        e.cpu_signature = Some(format!("MIDR {:#010x}", midr.value()));
    }
}

/// Memory: sizes, pages, transparent huge pages, NUMA.
/// The multi-generational LRU's state from its bit mask (0x0001 is the feature itself).
fn lru_gen(mask: &str) -> String {
    let on = u32::from_str_radix(mask.trim_start_matches("0x"), 16).is_ok_and(|m| m & 1 == 1);
    format!("{} ({mask})", if on { "on" } else { "off" })
}

fn fill_memory(e: &mut Environment) {
    let meminfo = read("/proc/meminfo")
        .map(|t| parse_meminfo(&t))
        .unwrap_or_default();
    let thp = |file: &str| read(&format!("{THP_DIR}/{file}")).and_then(|t| selected_option(&t));
    e.mem_total_bytes = meminfo.get("MemTotal").copied();
    e.mem_available_bytes = meminfo.get("MemAvailable").copied();
    e.swap_total_bytes = meminfo.get("SwapTotal").copied();
    e.swap_areas = Some(crate::platform::swap::describe());
    e.lru_gen = read("/sys/kernel/mm/lru_gen/enabled").map(|t| lru_gen(t.trim()));
    e.page_size = page_size();
    e.thp_enabled = thp("enabled");
    e.thp_defrag = thp("defrag");
    e.khugepaged_defrag = thp("khugepaged/defrag");
    e.thp_shmem_enabled = thp("shmem_enabled");
    e.numa_nodes = read("/sys/devices/system/node/online")
        .and_then(|t| parse_cpu_list(&t))
        .and_then(|nodes| u32::try_from(nodes.len()).ok());
    e.numa_balancing = read_value("/proc/sys/kernel/numa_balancing")
        .and_then(|v| v.parse::<i64>().ok())
        .map(|v| v != 0);
}

/// The operating system, the kernel's clocks, libc, containers, and oslab itself.
fn fill_system(e: &mut Environment, uname: &Uname) {
    e.os = std::env::consts::OS.to_string();
    e.os_release = read("/etc/os-release")
        .or_else(|| read("/usr/lib/os-release"))
        .and_then(|t| os_release_name(&t));
    e.kernel_release = uname.release.clone();
    e.kernel_version = uname.version.clone();
    e.arch = std::env::consts::ARCH.to_string();
    e.emulation = emulation::emulation();
    e.hostname = uname.nodename.clone();
    // machine-id(5); D-Bus's copy where systemd is absent.
    e.machine = read("/etc/machine-id")
        .or_else(|| read("/var/lib/dbus/machine-id"))
        .and_then(|id| crate::model::identity::machine_hash(&id));
    e.clocksource = read_value(&format!("{CLOCKSOURCE_DIR}/current_clocksource"));
    e.available_clocksources = read_value(&format!("{CLOCKSOURCE_DIR}/available_clocksource"));
    e.libc_version = libc_version();
    e.container = detect_container(uname.release.as_deref());
    e.oslab_version = env!("CARGO_PKG_VERSION").to_string();
    e.oslab_commit = option_env!("OSLAB_GIT_COMMIT").map(str::to_string);
    e.rustc_version = option_env!("OSLAB_RUSTC_VERSION").map(str::to_string);
    e.is_root = is_root();
}

/// Mitigations, frequency and idle control, and what profiling is allowed.
fn fill_power_and_security(e: &mut Environment) {
    e.vulnerabilities = vulnerabilities();
    e.governor = read_value(&format!("{CPU_DIR}/cpu0/cpufreq/scaling_governor"));
    e.cpufreq_driver = read_value(&format!("{CPU_DIR}/cpu0/cpufreq/scaling_driver"));
    e.boost = boost();
    e.cpuidle_driver = read_value(&format!("{CPU_DIR}/cpuidle/current_driver"));
    e.cpuidle_governor = read_value(&format!("{CPU_DIR}/cpuidle/current_governor"))
        .or_else(|| read_value(&format!("{CPU_DIR}/cpuidle/current_governor_ro")));
    e.perf_event_paranoid =
        read_value("/proc/sys/kernel/perf_event_paranoid").and_then(|v| v.parse().ok());
    e.kptr_restrict = read_value("/proc/sys/kernel/kptr_restrict").and_then(|v| v.parse().ok());
    e.perf_pmus = dir_names(Path::new("/sys/bus/event_source/devices"));
    e.counters = BTreeMap::new();
}

// ---------------------------------------------------------------------------------------------
// CPUID: TLBs, the invariant-TSC bit, the hypervisor and the XSAVE size (x86 only).

/// What CPUID says that /proc and /sys do not.
#[derive(Debug, Default)]
struct CpuidFacts {
    tlbs: Vec<Tlb>,
    tsc_invariant: Option<bool>,
    hypervisor_bit: Option<bool>,
    /// Product name of the hypervisor (leaf 0x40000000), when the hypervisor bit is set.
    hypervisor: Option<String>,
    xsave_bytes: Option<u32>,
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod cpuid {
    use raw_cpuid::{Associativity, CpuIdReaderNative, DatType};

    use super::{CpuidFacts, Tlb, hypervisor_name, parse_leaf2_tlb};

    /// CPUID executed on this CPU.
    type CpuId = raw_cpuid::CpuId<CpuIdReaderNative>;

    pub(super) fn facts() -> CpuidFacts {
        let cpuid = CpuId::new();
        let hypervisor_bit = cpuid.get_feature_info().map(|f| f.has_hypervisor());
        let hypervisor = hypervisor_bit.filter(|&bit| bit).map(|_| {
            let leaf = raw_cpuid::cpuid!(0x4000_0000);
            let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
                .iter()
                .flat_map(|r| r.to_le_bytes())
                .collect();
            hypervisor_name(&String::from_utf8_lossy(&bytes))
        });
        let mut tlbs = deterministic_tlbs(&cpuid);
        if tlbs.is_empty() {
            tlbs = amd_tlbs(&cpuid);
        }
        if tlbs.is_empty() {
            tlbs = leaf2_tlbs(&cpuid);
        }
        CpuidFacts {
            tlbs,
            tsc_invariant: cpuid
                .get_advanced_power_mgmt_info()
                .map(|a| a.has_invariant_tsc()),
            hypervisor_bit,
            hypervisor,
            xsave_bytes: cpuid
                .get_extended_state_info()
                .map(|x| x.xsave_area_size_enabled_features())
                .filter(|&size| size > 0),
        }
    }

    /// Intel leaf 0x18 (deterministic address translation parameters).
    fn deterministic_tlbs(cpuid: &CpuId) -> Vec<Tlb> {
        let Some(iter) = cpuid.get_deterministic_address_translation_info() else {
            return Vec::new();
        };
        iter.filter_map(|dat| {
            let kind = match dat.cache_type() {
                DatType::DataTLB => "dTLB",
                DatType::InstructionTLB => "iTLB",
                DatType::UnifiedTLB => "TLB",
                DatType::LoadOnly => "load TLB",
                DatType::StoreOnly => "store TLB",
                _ => return None,
            };
            let pages: Vec<&str> = [
                (dat.has_4k_entries(), "4K"),
                (dat.has_2mb_entries(), "2M"),
                (dat.has_4mb_entries(), "4M"),
                (dat.has_1gb_entries(), "1G"),
            ]
            .into_iter()
            .filter_map(|(has, size)| has.then_some(size))
            .collect();
            let entries = u32::from(dat.ways()).checked_mul(dat.sets())?;
            (entries > 0).then(|| Tlb {
                name: format!("L{} {kind} {}", dat.cache_level(), pages.join("/")),
                entries,
                ways: Some(if dat.is_fully_associative() {
                    "full".to_string()
                } else {
                    format!("{}-way", dat.ways())
                }),
            })
        })
        .collect()
    }

    /// AMD leaves 0x80000005 (L1), 0x80000006 (L2) and 0x80000019 (1 GiB pages). Intel
    /// returns zeros for the TLB fields of these leaves, which are skipped.
    fn amd_tlbs(cpuid: &CpuId) -> Vec<Tlb> {
        let mut raw: Vec<(&str, u32, Associativity)> = Vec::new();
        if let Some(l1) = cpuid.get_l1_cache_and_tlb_info() {
            raw.push((
                "L1 dTLB 4K",
                l1.dtlb_4k_size().into(),
                l1.dtlb_4k_associativity(),
            ));
            raw.push((
                "L1 iTLB 4K",
                l1.itlb_4k_size().into(),
                l1.itlb_4k_associativity(),
            ));
            raw.push((
                "L1 dTLB 2M/4M",
                l1.dtlb_2m_4m_size().into(),
                l1.dtlb_2m_4m_associativity(),
            ));
            raw.push((
                "L1 iTLB 2M/4M",
                l1.itlb_2m_4m_size().into(),
                l1.itlb_2m_4m_associativity(),
            ));
        }
        let gigantic = cpuid.get_tlb_1gb_page_info();
        if let Some(l1g) = &gigantic {
            raw.push((
                "L1 dTLB 1G",
                l1g.dtlb_l1_1gb_size().into(),
                l1g.dtlb_l1_1gb_associativity(),
            ));
            raw.push((
                "L1 iTLB 1G",
                l1g.itlb_l1_1gb_size().into(),
                l1g.itlb_l1_1gb_associativity(),
            ));
        }
        if let Some(l2) = cpuid.get_l2_l3_cache_and_tlb_info() {
            raw.push((
                "L2 dTLB 4K",
                l2.dtlb_4k_size().into(),
                l2.dtlb_4k_associativity(),
            ));
            raw.push((
                "L2 iTLB 4K",
                l2.itlb_4k_size().into(),
                l2.itlb_4k_associativity(),
            ));
            raw.push((
                "L2 dTLB 2M/4M",
                l2.dtlb_2m_4m_size().into(),
                l2.dtlb_2m_4m_associativity(),
            ));
            raw.push((
                "L2 iTLB 2M/4M",
                l2.itlb_2m_4m_size().into(),
                l2.itlb_2m_4m_associativity(),
            ));
        }
        if let Some(l2g) = &gigantic {
            raw.push((
                "L2 dTLB 1G",
                l2g.dtlb_l2_1gb_size().into(),
                l2g.dtlb_l2_1gb_associativity(),
            ));
            raw.push((
                "L2 iTLB 1G",
                l2g.itlb_l2_1gb_size().into(),
                l2g.itlb_l2_1gb_associativity(),
            ));
        }
        raw.into_iter()
            .filter_map(|(name, entries, assoc)| amd_tlb(name, entries, assoc))
            .collect()
    }

    /// One TLB from AMD's leaves: none where it has no entries or is disabled.
    fn amd_tlb(name: &str, entries: u32, assoc: Associativity) -> Option<Tlb> {
        if entries == 0 || assoc == Associativity::Disabled {
            return None;
        }
        let ways = match assoc {
            Associativity::DirectMapped => Some("direct".to_string()),
            Associativity::NWay(n) => Some(format!("{n}-way")),
            Associativity::FullyAssociative => Some("full".to_string()),
            Associativity::Disabled | Associativity::Unknown => None,
        };
        Some(Tlb {
            name: name.to_string(),
            entries,
            ways,
        })
    }

    /// Intel leaf 2 descriptors, for CPUs older than leaf 0x18.
    fn leaf2_tlbs(cpuid: &CpuId) -> Vec<Tlb> {
        let Some(iter) = cpuid.get_cache_info() else {
            return Vec::new();
        };
        iter.filter(|info| {
            matches!(
                info.typ,
                raw_cpuid::CacheInfoType::TLB
                    | raw_cpuid::CacheInfoType::DTLB
                    | raw_cpuid::CacheInfoType::STLB
            )
        })
        .filter_map(|info| parse_leaf2_tlb(info.desc()))
        .collect()
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
mod cpuid {
    use super::CpuidFacts;

    /// No CPUID on this architecture: everything it would tell is unknown.
    pub(super) fn facts() -> CpuidFacts {
        CpuidFacts::default()
    }
}

#[cfg(test)]
mod tests;

/// Every parser of this module run on `text`, results dropped: for [`super::super::parsers`].
pub(in crate::platform) fn parse_texts(text: &str) {
    let cpuinfo = parse_cpuinfo(text);
    let _ = cpuinfo.signature();
    let _ = flags_of_note(&cpuinfo.flags);
    let _ = parse_meminfo(text);
    let _ = parse_size(text);
    let _ = parse_cpu_list(text);
    let _ = selected_option(text);
    let _ = os_release_name(text);
    let _ = kconfig_value(text, "CONFIG_HZ");
    let _ = preemption_model(Some(text), Some(text), Some(text), Some(text));
    let _ = parse_status(text);
    let _ = parse_acpi_oem_id(text.as_bytes());
    let _ = hypervisor_name(text);
    for line in text.lines() {
        let _ = parse_leaf2_tlb(line);
    }
}

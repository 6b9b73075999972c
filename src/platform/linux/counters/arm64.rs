//! arm64: the hardware events are opened on the CPU's own PMU, by Arm's event numbers.
//!
//! Two things make perf's generic events wrong there. A big.LITTLE or DynamIQ CPU has one
//! PMU per kind of core, and a generic event of a task goes to one of them only, counting
//! nothing while the task runs on the other kind; oslab pins its worker, so it opens the PMU
//! whose `cpus` hold the worker's CPU. And the kernel's generic PMUv3 map sends
//! `L1-dcache-loads` to L1D_CACHE, which counts stores too, and has no store events at all;
//! Arm's recommended read/write events (0x40–0x4F, the ones the kernel's own Cortex-A57/A72/A73
//! maps use) split them as the x86 events do. Those are IMPLEMENTATION DEFINED, so no
//! register says whether a core has them; `unimplemented` finds those that count nothing over
//! loads and stores that must have counted.

use std::path::{Path, PathBuf};

use perf_event::events::Dynamic;

/// Where the kernel lists the PMUs.
pub const DEVICES: &str = "/sys/bus/event_source/devices";

/// oslab's counters (perf's generic names) and the Arm events that count them.
pub const EVENTS: [(&str, &str, u64); 10] = [
    ("cycles", "CPU_CYCLES", 0x11),
    ("instructions", "INST_RETIRED", 0x08),
    ("L1-dcache-loads", "L1D_CACHE_RD", 0x40),
    ("L1-dcache-load-misses", "L1D_CACHE_REFILL_RD", 0x42),
    ("L1-dcache-stores", "L1D_CACHE_WR", 0x41),
    ("L1-dcache-store-misses", "L1D_CACHE_REFILL_WR", 0x43),
    ("dTLB-loads", "L1D_TLB_RD", 0x4e),
    ("dTLB-load-misses", "L1D_TLB_REFILL_RD", 0x4c),
    ("dTLB-stores", "L1D_TLB_WR", 0x4f),
    ("dTLB-store-misses", "L1D_TLB_REFILL_WR", 0x4d),
];

/// The Arm event counting oslab's counter `name`: (Arm's name, number).
pub fn event_of(name: &str) -> Option<(&'static str, u64)> {
    EVENTS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, arm, number)| (*arm, *number))
}

/// The CPU PMU of `cpu` under `devices`: a PMU with a `cpus` list (uncore PMUs have a
/// `cpumask` instead) and the architected `events/cpu_cycles`, whose list holds `cpu`.
pub fn pmu_for(devices: &Path, cpu: usize) -> Result<PathBuf, String> {
    let entries = std::fs::read_dir(devices)
        .map_err(|e| format!("cannot list {}: {e}", devices.display()))?;
    let mut cpu_pmus = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        let Ok(cpus) = std::fs::read_to_string(dir.join("cpus")) else {
            continue;
        };
        if !dir.join("events/cpu_cycles").exists() {
            continue;
        }
        if crate::platform::cpu::parse_list(cpus.trim()).is_some_and(|l| l.contains(&cpu)) {
            return Ok(dir);
        }
        cpu_pmus.push(dir);
    }
    Err(if cpu_pmus.is_empty() {
        format!(
            "no hardware PMU is exposed here (no Arm CPU PMU under {})",
            devices.display()
        )
    } else {
        format!("no Arm CPU PMU lists CPU {cpu} in its cpus")
    })
}

/// Event `number` of `pmu` (its type from sysfs, the number in its `event` format field).
pub fn dynamic(pmu: &Path, number: u64) -> Result<Dynamic, String> {
    let name = pmu
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut builder = Dynamic::builder(pmu).map_err(|e| format!("cannot read PMU {name}: {e}"))?;
    builder
        .field("event", number)
        .map_err(|e| format!("PMU {name} takes no event {number:#x}: {e}"))?;
    builder
        .build()
        .map_err(|e| format!("PMU {name}: event {number:#x} needs {}", e.param()))
}

/// The PMU's name and how it counts `name`, for `oslab env`: "armv8_cortex_a72 L1D_CACHE_RD
/// (0x40)".
pub fn describe(pmu: &Path, name: &str) -> Option<String> {
    let (arm, number) = event_of(name)?;
    let pmu = pmu.file_name()?.to_string_lossy();
    Some(format!("{pmu} {arm} ({number:#x})"))
}

/// A workload every event above must count: loads and stores over 1 MiB, one per 8 bytes —
/// past any L1D and any L1 dTLB, so the refill events count too.
pub fn exercise() {
    let mut buffer = vec![0u64; 1 << 17];
    let mut sum = 0u64;
    for (i, v) in buffer.iter_mut().enumerate() {
        sum = sum.wrapping_add(std::hint::black_box(*v));
        *v = std::hint::black_box(i as u64);
    }
    std::hint::black_box((sum, &buffer));
}

/// Why a counter that read `counted` over [`exercise`] is not implemented, if it is not.
pub fn unimplemented(name: &str, counted: u64) -> Option<String> {
    let (arm, number) = event_of(name)?;
    (counted == 0).then(|| {
        format!(
            "the PMU took {arm} ({number:#x}) but counted nothing over 131072 loads and stores: \
             this core does not implement it"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pmu(root: &Path, name: &str, cpus: Option<&str>, ty: u32) {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("events")).unwrap();
        std::fs::create_dir_all(dir.join("format")).unwrap();
        std::fs::write(dir.join("type"), format!("{ty}\n")).unwrap();
        std::fs::write(dir.join("format/event"), "config:0-15\n").unwrap();
        std::fs::write(dir.join("events/cpu_cycles"), "event=0x0011\n").unwrap();
        if let Some(cpus) = cpus {
            std::fs::write(dir.join("cpus"), format!("{cpus}\n")).unwrap();
        }
    }

    #[test]
    fn each_cpu_gets_the_pmu_of_its_kind_of_core() {
        let root = tempfile::tempdir().unwrap();
        pmu(root.path(), "armv8_cortex_a53", Some("0-3"), 8);
        pmu(root.path(), "armv8_cortex_a72", Some("4-5"), 9);
        // An uncore PMU: no `cpus`.
        std::fs::create_dir_all(root.path().join("arm_dsu_0")).unwrap();
        let big = pmu_for(root.path(), 5).unwrap();
        assert!(big.ends_with("armv8_cortex_a72"));
        assert!(
            pmu_for(root.path(), 1)
                .unwrap()
                .ends_with("armv8_cortex_a53")
        );
        let missing = pmu_for(root.path(), 7).unwrap_err();
        assert!(missing.contains("no Arm CPU PMU lists CPU 7"), "{missing}");
        assert_eq!(
            describe(&big, "dTLB-load-misses").as_deref(),
            Some("armv8_cortex_a72 L1D_TLB_REFILL_RD (0x4c)")
        );
        // The event's type and number come from sysfs (the perf_event_attr is built, not opened).
        dynamic(&big, 0x4c).expect("a PMU with an event format builds");
    }

    #[test]
    fn no_arm_pmu_says_so() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("software")).unwrap();
        let why = pmu_for(root.path(), 0).unwrap_err();
        assert!(why.starts_with("no hardware PMU is exposed here"), "{why}");
    }

    #[test]
    fn an_event_that_counted_nothing_is_not_implemented() {
        assert!(
            unimplemented("L1-dcache-stores", 0)
                .unwrap()
                .contains("L1D_CACHE_WR (0x41)")
        );
        assert_eq!(unimplemented("L1-dcache-stores", 131072), None);
        assert_eq!(unimplemented("page-faults", 0), None, "not an Arm event");
        exercise();
    }
}

//! The kinds of core: Arm cores by their MIDR (every processor block of `/proc/cpuinfo`),
//! Intel's hybrid P- and E-cores by the CPUs of their PMUs (`/sys/devices/cpu_core/cpus`,
//! `/sys/devices/cpu_atom/cpus`). Each kind gets its capacity, top frequency and caches from
//! the sysfs directory of its first CPU.

use super::*;
use crate::model::env::CoreKind;
use crate::model::midr::Midr;

/// The kinds of core of this machine; empty when it cannot tell them apart (an x86 CPU that
/// is not hybrid has one kind, which `cpu_model` already names).
pub(super) fn core_kinds(cpuinfo: &str) -> Vec<CoreKind> {
    let arm = group_by_midr(&parse_midrs(cpuinfo));
    let kinds: Vec<(String, Option<Midr>, Vec<usize>)> = if !arm.is_empty() {
        arm.into_iter()
            .map(|(midr, cpus)| (midr.to_string(), Some(midr), cpus))
            .collect()
    } else {
        [("Intel P-core", "cpu_core"), ("Intel E-core", "cpu_atom")]
            .iter()
            .filter_map(|(name, pmu)| {
                let cpus =
                    read(&format!("/sys/devices/{pmu}/cpus")).and_then(|t| parse_cpu_list(&t))?;
                Some((
                    name.to_string(),
                    None,
                    cpus.into_iter().map(|c| c as usize).collect(),
                ))
            })
            .collect()
    };
    kinds
        .into_iter()
        .map(|(name, midr, cpus)| {
            let first = cpus.first().copied().unwrap_or(0);
            let cpu_file = |file: &str| read_value(&format!("{CPU_DIR}/cpu{first}/{file}"));
            CoreKind {
                name,
                midr: midr.map(|m| format!("{:#010x}", m.value())),
                capacity: cpu_file("cpu_capacity").and_then(|v| v.parse().ok()),
                max_mhz: cpu_file("cpufreq/cpuinfo_max_freq")
                    .and_then(|v| v.parse::<f64>().ok())
                    .map(|khz| khz / 1000.0),
                caches: caches_of(first),
                cpus,
            }
        })
        .collect()
}

/// Every processor's MIDR fields from arm64's `/proc/cpuinfo` (one block per processor);
/// empty on other architectures, whose blocks have no "CPU part".
pub(super) fn parse_midrs(cpuinfo: &str) -> Vec<(usize, Midr)> {
    let mut found = Vec::new();
    for block in cpuinfo.split("\n\n") {
        let field = |key: &str| {
            block.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == key).then(|| v.trim())
            })
        };
        let number = |key: &str| {
            let v = field(key)?;
            match v.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => v.parse().ok(),
            }
        };
        let (Some(cpu), Some(implementer), Some(part)) = (
            field("processor").and_then(|v| v.parse().ok()),
            number("CPU implementer"),
            number("CPU part"),
        ) else {
            continue;
        };
        found.push((
            cpu,
            Midr {
                implementer: implementer as u8,
                variant: number("CPU variant").unwrap_or(0) as u8,
                part: part as u16,
                revision: number("CPU revision").unwrap_or(0) as u8,
            },
        ));
    }
    found
}

/// The CPUs of each distinct MIDR, in the order the kinds first appear.
pub(super) fn group_by_midr(cpus: &[(usize, Midr)]) -> Vec<(Midr, Vec<usize>)> {
    let mut kinds: Vec<(Midr, Vec<usize>)> = Vec::new();
    for &(cpu, midr) in cpus {
        match kinds.iter_mut().find(|(m, _)| *m == midr) {
            Some((_, list)) => list.push(cpu),
            None => kinds.push((midr, vec![cpu])),
        }
    }
    kinds
}

/// The CPU's name from its kinds of core, where the kernel gives none (arm64):
/// "ARM Neoverse-N1 r3p1", or "4× ARM Cortex-A53 r0p4 + 2× ARM Cortex-A72 r0p2".
pub(super) fn model_from_kinds(kinds: &[CoreKind]) -> Option<String> {
    match kinds {
        [] => None,
        [one] => Some(one.name.clone()),
        many => Some(
            many.iter()
                .map(|k| format!("{}× {}", k.cpus.len(), k.name))
                .collect::<Vec<_>>()
                .join(" + "),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first and last blocks of an RK3399's /proc/cpuinfo (4× Cortex-A53 + 2× Cortex-A72).
    const RK3399: &str = "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n\
processor\t: 1\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n\
processor\t: 4\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 2\n\n\
processor\t: 5\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 2\n\n";

    #[test]
    fn big_little_cores_are_told_apart_by_their_midr() {
        let kinds = group_by_midr(&parse_midrs(RK3399));
        let named: Vec<(String, Vec<usize>)> = kinds
            .iter()
            .map(|(m, c)| (m.to_string(), c.clone()))
            .collect();
        assert_eq!(
            named,
            vec![
                ("ARM Cortex-A53 r0p4".to_string(), vec![0, 1]),
                ("ARM Cortex-A72 r0p2".to_string(), vec![4, 5]),
            ]
        );
        let kinds: Vec<CoreKind> = kinds
            .into_iter()
            .map(|(m, cpus)| CoreKind {
                name: m.to_string(),
                cpus,
                ..CoreKind::default()
            })
            .collect();
        assert_eq!(
            model_from_kinds(&kinds).as_deref(),
            Some("2× ARM Cortex-A53 r0p4 + 2× ARM Cortex-A72 r0p2")
        );
    }

    #[test]
    fn x86_cpuinfo_has_no_midr() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\n";
        assert!(parse_midrs(x86).is_empty());
    }
}

use std::collections::BTreeMap;

use super::*;
use crate::model::env::{CounterAvailability, Tlb};

fn filled() -> Environment {
    Environment {
        cpu_model: Some("AMD EPYC".into()),
        cpu_vendor: Some("AuthenticAMD".into()),
        cpu_signature: Some("25/17/1".into()),
        microcode: Some("0x1000065".into()),
        online_cpus: Some("0-1".into()),
        logical_cpus: Some(2),
        physical_cores: Some(2),
        sockets: Some(1),
        threads_per_core: Some(1),
        cpu_mhz: Some(2596.124),
        caches: vec![
            Cache {
                level: 1,
                kind: "Data".into(),
                size_bytes: 32 << 10,
                line_bytes: Some(64),
                ways: Some(8),
                shared_cpus: Some("0".into()),
            },
            Cache {
                level: 3,
                kind: "Unified".into(),
                size_bytes: 32 << 20,
                line_bytes: Some(64),
                ways: Some(16),
                shared_cpus: Some("0-1".into()),
            },
        ],
        tlbs: vec![Tlb {
            name: "L1 dTLB 4K".into(),
            entries: 64,
            ways: Some("full".into()),
        }],
        tsc_invariant: Some(true),
        cpu_flags_of_note: vec!["constant_tsc".into(), "nonstop_tsc".into()],
        mem_total_bytes: Some(24_684_084 * 1024),
        swap_total_bytes: Some(0),
        page_size: Some(4096),
        thp_enabled: Some("madvise".into()),
        os: "linux".into(),
        os_release: Some("Debian GNU/Linux 12 (bookworm)".into()),
        kernel_release: Some("6.18.44-fc-v669".into()),
        arch: "x86_64".into(),
        kernel_cmdline: Some(
            "mitigations=auto,no_guest_host console=ttyS0 quiet -- --nopti-lookalike".into(),
        ),
        clocksource: Some("tsc".into()),
        available_clocksources: Some("tsc kvm-clock".into()),
        hz: Some(250),
        preemption: Some("none (dynamic, build default)".into()),
        virtualization: Some("Firecracker (KVM)".into()),
        hypervisor: Some("KVM".into()),
        container: Some("docker".into()),
        vulnerabilities: BTreeMap::from([
            ("meltdown".into(), "Not affected".into()),
            ("mds".into(), "Not affected".into()),
            ("spec_store_bypass".into(), "Vulnerable".into()),
        ]),
        cpuidle_driver: Some("haltpoll".into()),
        perf_event_paranoid: Some(2),
        perf_pmus: vec!["breakpoint".into(), "software".into()],
        counters: BTreeMap::from([
            (
                "cycles".into(),
                CounterAvailability {
                    supported: false,
                    reason: Some("ENOENT".into()),
                    event: None,
                },
            ),
            (
                "page-faults".into(),
                CounterAvailability {
                    supported: true,
                    reason: None,
                    event: None,
                },
            ),
        ]),
        oslab_version: "0.1.0".into(),
        oslab_commit: Some("abcdef012345-dirty".into()),
        is_root: true,
        ..Environment::default()
    }
}

fn has_row(text: &str, label: &str, value: &str) -> bool {
    text.lines().any(|line| {
        line.trim_start()
            .strip_prefix(label)
            .is_some_and(|rest| rest.trim() == value)
    })
}

#[test]
fn default_environment_says_unknown_only_where_it_matters() {
    let text = render(&Environment::default());
    assert!(!text.contains("None"), "{text}");
    assert!(has_row(&text, "clocksource", "unknown"), "{text}");
    assert!(has_row(&text, "THP", "unknown"), "{text}");
    assert!(has_row(&text, "governor", "unknown"), "{text}");
    assert!(has_row(&text, "counters", "not probed"), "{text}");
    assert!(has_row(&text, "user", "not root"), "{text}");
    assert!(
        !text.contains("CPU\n"),
        "an empty section is left out:\n{text}"
    );
    assert!(!text.contains("Caches"), "{text}");
}

#[test]
fn filled_environment_shows_key_lines() {
    let text = render(&filled());
    assert!(!text.contains("None"), "{text}");
    for (label, value) in [
        ("model", "AMD EPYC"),
        ("logical CPUs", "2 (online 0-1)"),
        ("topology", "1 socket, 2 cores, 1 thread per core"),
        ("frequency", "2596 MHz"),
        ("TSC", "invariant"),
        ("L1 dTLB 4K", "64 entries, fully associative"),
        ("total", "23.5 GiB"),
        ("swap", "none"),
        ("page size", "4 KiB"),
        ("THP", "madvise"),
        ("HZ", "250"),
        ("clocksource", "tsc (available: tsc kvm-clock)"),
        ("platform", "Firecracker (KVM)"),
        ("container", "docker"),
        ("spec_store_bypass", "Vulnerable"),
        ("not affected", "mds, meltdown"),
        ("boot options", "mitigations=auto,no_guest_host"),
        ("perf_event_paranoid", "2 (users: no kernel profiling)"),
        ("PMUs", "breakpoint software (no hardware PMU)"),
        ("unsupported", "cycles"),
        ("why", "ENOENT"),
        ("counted", "page-faults"),
        ("commit", "abcdef012345-dirty"),
        ("user", "root"),
    ] {
        assert!(
            has_row(&text, label, value),
            "missing `{label}  {value}` in\n{text}"
        );
    }
    let table: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with('L'))
        .collect();
    assert!(
        table
            .iter()
            .any(|l| l.contains("L3") && l.contains("32 MiB") && l.contains("0-1"))
    );
    assert!(text.contains("level  type"), "{text}");
    for title in [
        "CPU",
        "Caches & TLBs",
        "Memory",
        "OS & kernel",
        "Virtualization",
    ] {
        assert!(
            text.lines().any(|l| l == title),
            "missing section {title}:\n{text}"
        );
    }
    assert!(
        text.lines().all(|l| l.chars().count() <= LINE_WIDTH),
        "{text}"
    );
}

#[test]
fn long_values_wrap_under_their_column() {
    let env = Environment {
        kernel_cmdline: Some("word ".repeat(60)),
        ..Environment::default()
    };
    let text = render(&env);
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("command line"))
        .collect();
    assert!(lines.len() > 2, "{text}");
    let column = lines[0].find("word").unwrap();
    assert_eq!(lines[1].find("word"), Some(column), "{text}");
    assert!(
        lines.iter().all(|l| l.chars().count() <= LINE_WIDTH),
        "{text}"
    );
}

#[test]
fn byte_sizes() {
    assert_eq!(format_bytes(0), "0 B");
    assert_eq!(format_bytes(64), "64 B");
    assert_eq!(format_bytes(48 << 10), "48 KiB");
    assert_eq!(format_bytes(1 << 20), "1 MiB");
    assert_eq!(format_bytes(1536 << 10), "1.5 MiB");
    assert_eq!(format_bytes(u64::MAX), "16777216.0 TiB");
}

#[test]
fn arm_core_kinds_and_pmu_events_are_shown() {
    use crate::model::env::{Cache, CoreKind};
    let mut env = filled();
    env.core_kinds = vec![
        CoreKind {
            name: "ARM Cortex-A53 r0p4".into(),
            cpus: vec![0, 1, 2, 3],
            midr: Some("0x410fd034".into()),
            capacity: Some(485),
            max_mhz: None,
            caches: vec![Cache {
                level: 1,
                kind: "Data".into(),
                size_bytes: 32 << 10,
                ..Cache::default()
            }],
        },
        CoreKind {
            name: "ARM Cortex-A72 r0p2".into(),
            cpus: vec![4, 5],
            capacity: Some(1024),
            max_mhz: Some(1800.0),
            ..CoreKind::default()
        },
    ];
    env.counters.get_mut("cycles").unwrap().event =
        Some("armv8_cortex_a72 CPU_CYCLES (0x11)".into());
    let text = render(&env);
    assert!(
        has_row(
            &text,
            "core kind",
            "ARM Cortex-A53 r0p4: CPUs 0-3, MIDR 0x410fd034, capacity 485, L1d 32 KiB"
        ),
        "{text}"
    );
    assert!(
        has_row(
            &text,
            "core kind",
            "ARM Cortex-A72 r0p2: CPUs 4-5, capacity 1024, up to 1800 MHz"
        ),
        "{text}"
    );
    assert!(
        has_row(&text, "cycles", "armv8_cortex_a72 CPU_CYCLES (0x11)"),
        "{text}"
    );
}

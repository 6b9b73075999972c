use super::*;
use proptest::prelude::*;

const CPUINFO_EPYC: &str = "\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
stepping\t: 1
microcode\t: 0x1000065
cpu MHz\t\t: 2596.124
cache size\t: 1024 KB
flags\t\t: fpu vme de pse tsc msr ht syscall nx pdpe1gb rdtscp lm constant_tsc nonstop_tsc \
tsc_known_freq pcid hypervisor invpcid avx512f
address sizes\t: 48 bits physical, 48 bits virtual
power management:

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: Something else entirely
cpu MHz\t\t: 1000.000
flags\t\t: fpu

";

const CPUINFO_ARM64: &str = "\
processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c

processor\t: 1
BogoMIPS\t: 50.00
";

#[test]
fn cpuinfo_first_block_x86() {
    let info = parse_cpuinfo(CPUINFO_EPYC);
    assert_eq!(info.model.as_deref(), Some("AMD EPYC"));
    assert_eq!(info.vendor.as_deref(), Some("AuthenticAMD"));
    assert_eq!(info.signature().as_deref(), Some("25/17/1"));
    assert_eq!(info.microcode.as_deref(), Some("0x1000065"));
    assert_eq!(info.mhz, Some(2596.124));
    assert_eq!(
        info.address_sizes.as_deref(),
        Some("48 bits physical, 48 bits virtual")
    );
    assert_eq!(info.processors, 2);
    assert!(info.flags.iter().any(|f| f == "nonstop_tsc"));
    assert_eq!(
        flags_of_note(&info.flags),
        [
            "constant_tsc",
            "nonstop_tsc",
            "tsc_known_freq",
            "rdtscp",
            "hypervisor",
            "pcid",
            "invpcid",
            "pdpe1gb",
            "ht",
            "avx512f"
        ]
    );
}

#[test]
fn cpuinfo_arm64_has_no_model_name() {
    let info = parse_cpuinfo(CPUINFO_ARM64);
    assert_eq!(info.model, None);
    assert_eq!(info.vendor.as_deref(), Some("0x41"));
    assert_eq!(info.signature(), None);
    assert!(info.flags.iter().any(|f| f == "atomics"));
    assert_eq!(info.processors, 2);
}

#[test]
fn meminfo_in_bytes() {
    let text = "MemTotal:       24684084 kB\nMemAvailable:   24370912 kB\n\
                    SwapTotal:             0 kB\nHugePages_Total:       0\nBogus: x kB\n";
    let mem = parse_meminfo(text);
    assert_eq!(mem["MemTotal"], 24_684_084 * 1024);
    assert_eq!(mem["MemAvailable"], 24_370_912 * 1024);
    assert_eq!(mem["SwapTotal"], 0);
    assert_eq!(mem["HugePages_Total"], 0);
    assert!(!mem.contains_key("Bogus"));
}

#[test]
fn sizes() {
    assert_eq!(parse_size("48K"), Some(48 * 1024));
    assert_eq!(parse_size("1M"), Some(1 << 20));
    assert_eq!(parse_size("32768K\n"), Some(32 << 20));
    assert_eq!(parse_size("1024 KB"), Some(1 << 20));
    assert_eq!(parse_size("2GiB"), Some(2 << 30));
    assert_eq!(parse_size("512"), Some(512));
    assert_eq!(parse_size(""), None);
    assert_eq!(parse_size("K"), None);
    assert_eq!(parse_size("12Q"), None);
    assert_eq!(parse_size("99999999999999999999G"), None);
}

#[test]
fn cpu_lists() {
    assert_eq!(parse_cpu_list("0-1,4\n"), Some(vec![0, 1, 4]));
    assert_eq!(parse_cpu_list("0"), Some(vec![0]));
    assert_eq!(parse_cpu_list(""), Some(vec![]));
    assert_eq!(parse_cpu_list("0-7:2"), Some(vec![0, 2, 4, 6]));
    assert_eq!(parse_cpu_list("3-1"), None);
    assert_eq!(parse_cpu_list("0-4294967295"), None);
    assert_eq!(parse_cpu_list("a"), None);
    assert_eq!(parse_cpu_list("1,,2"), None);
}

#[test]
fn selected_options() {
    assert_eq!(
        selected_option("always [madvise] never\n").as_deref(),
        Some("madvise")
    );
    assert_eq!(
        selected_option("always defer defer+madvise [madvise] never").as_deref(),
        Some("madvise")
    );
    assert_eq!(
        selected_option("[always] madvise never").as_deref(),
        Some("always")
    );
    assert_eq!(selected_option("1\n").as_deref(), Some("1"));
    assert_eq!(
        selected_option("none voluntary (full) lazy").as_deref(),
        Some("full")
    );
    assert_eq!(selected_option("always [madvise"), None);
    assert_eq!(selected_option("[]"), None);
    assert_eq!(selected_option("  \n"), None);
}

#[test]
fn os_release() {
    let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n\
                      VERSION_ID=\"12\"\nID=debian\n";
    assert_eq!(
        os_release_name(debian).as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    let no_pretty = "# comment\nNAME='Alpine Linux'\nVERSION=3.20\n";
    assert_eq!(
        os_release_name(no_pretty).as_deref(),
        Some("Alpine Linux 3.20")
    );
    let escaped = "PRETTY_NAME=\"Say \\\"hi\\\"\"\n";
    assert_eq!(os_release_name(escaped).as_deref(), Some("Say \"hi\""));
    assert_eq!(os_release_name("ID=x\n"), None);
}

#[test]
fn kernel_config_values() {
    let config = "CONFIG_HZ_250=y\nCONFIG_HZ=250\n# CONFIG_PREEMPT is not set\n\
                      CONFIG_LOCALVERSION=\"-fc\"\n";
    assert_eq!(kconfig_value(config, "CONFIG_HZ"), Some("250"));
    assert_eq!(kconfig_value(config, "CONFIG_HZ_250"), Some("y"));
    assert_eq!(kconfig_value(config, "CONFIG_PREEMPT"), None);
    assert_eq!(kconfig_value(config, "CONFIG_LOCALVERSION"), Some("-fc"));
}

#[test]
fn preemption_sources_in_order() {
    let dynamic_none = "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n\
                            CONFIG_PREEMPT_DYNAMIC=y\n";
    let version = Some("#1 SMP PREEMPT_DYNAMIC @0");
    assert_eq!(
        preemption_model(Some("none voluntary (full) lazy\n"), None, None, version).as_deref(),
        Some("full (dynamic)")
    );
    assert_eq!(
        preemption_model(
            None,
            Some("quiet preempt=voluntary"),
            Some(dynamic_none),
            version
        )
        .as_deref(),
        Some("voluntary (dynamic, preempt= at boot)")
    );
    assert_eq!(
        preemption_model(None, Some("quiet"), Some(dynamic_none), version).as_deref(),
        Some("none (dynamic, build default)")
    );
    assert_eq!(
        preemption_model(None, None, None, version).as_deref(),
        Some("dynamic (mode unknown)")
    );
    assert_eq!(
        preemption_model(None, None, None, Some("#1 SMP PREEMPT Tue")).as_deref(),
        Some("full")
    );
    assert_eq!(
        preemption_model(None, None, None, Some("#1 SMP PREEMPT_RT Tue")).as_deref(),
        Some("rt")
    );
    assert_eq!(
        preemption_model(None, None, None, Some("#1 SMP Tue")).as_deref(),
        Some("none or voluntary")
    );
    assert_eq!(
        preemption_model(None, None, Some("CONFIG_PREEMPT_VOLUNTARY=y\n"), None).as_deref(),
        Some("voluntary")
    );
    assert_eq!(preemption_model(None, None, None, None), None);
}

#[test]
fn status_seccomp_and_affinity() {
    let text = "Name:\toslab\nSeccomp:\t2\nSeccomp_filters:\t3\nCpus_allowed_list:\t0-1\n";
    let status = parse_status(text);
    assert_eq!(status.seccomp.as_deref(), Some("filter (3 filters)"));
    assert_eq!(status.cpus_allowed.as_deref(), Some("0-1"));
    let plain = parse_status("Seccomp:\t0\nSeccomp_filters:\t0\n");
    assert_eq!(plain.seccomp.as_deref(), Some("disabled"));
    assert_eq!(plain.cpus_allowed, None);
}

#[test]
fn acpi_oem_ids() {
    let mut facp = b"FACP\x14\x01\x00\x00\x06\x66FIRECKFCVMFADT".to_vec();
    facp.resize(36, 0);
    assert_eq!(parse_acpi_oem_id(&facp).as_deref(), Some("FIRECK"));
    let mut bochs = b"FACP\x14\x01\x00\x00\x06\x66BOCHS BXPCFACP".to_vec();
    bochs.resize(36, 0);
    assert_eq!(parse_acpi_oem_id(&bochs).as_deref(), Some("BOCHS"));
    assert_eq!(parse_acpi_oem_id(b"FACP"), None);
}

#[test]
fn hypervisor_signatures() {
    assert_eq!(hypervisor_name("KVMKVMKVM\0\0\0"), "KVM");
    assert_eq!(hypervisor_name("Microsoft Hv"), "Hyper-V");
    assert_eq!(hypervisor_name("SomethingNew"), "SomethingNew");
}

#[test]
fn virtualization_names_the_platform_and_hypervisor() {
    let firecracker = VirtSigns {
        hypervisor: Some("KVM"),
        hypervisor_bit: Some(true),
        acpi_oem: Some("FIRECK"),
        ..VirtSigns::default()
    };
    assert_eq!(
        classify_virtualization(&firecracker).as_deref(),
        Some("Firecracker (KVM)")
    );
    let no_root = VirtSigns {
        acpi_oem: None,
        ..firecracker
    };
    assert_eq!(classify_virtualization(&no_root).as_deref(), Some("KVM"));
    let qemu = VirtSigns {
        hypervisor: Some("KVM"),
        hypervisor_bit: Some(true),
        dmi_vendor: Some("QEMU"),
        dmi_product: Some("Standard PC (Q35 + ICH9, 2009)"),
        acpi_oem: Some("BOCHS"),
    };
    assert_eq!(
        classify_virtualization(&qemu).as_deref(),
        Some("QEMU (KVM)")
    );
    let ec2 = VirtSigns {
        dmi_vendor: Some("Amazon EC2"),
        dmi_product: Some("m5.large"),
        ..qemu
    };
    assert_eq!(
        classify_virtualization(&ec2).as_deref(),
        Some("Amazon EC2 (KVM)")
    );
    let metal = VirtSigns {
        hypervisor_bit: Some(false),
        dmi_vendor: Some("Dell Inc."),
        ..VirtSigns::default()
    };
    assert_eq!(classify_virtualization(&metal).as_deref(), Some("none"));
    assert_eq!(classify_virtualization(&VirtSigns::default()), None);
}

#[test]
fn containers() {
    let docker = ContainerSigns {
        dockerenv: true,
        ..ContainerSigns::default()
    };
    assert_eq!(classify_container(&docker).as_deref(), Some("docker"));
    let environ = b"HOME=/\0container=podman\0".as_slice();
    let podman = ContainerSigns {
        pid1_environ: Some(environ),
        ..docker
    };
    assert_eq!(classify_container(&podman).as_deref(), Some("podman"));
    let k8s = ContainerSigns {
        self_cgroup: Some("0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n"),
        ..ContainerSigns::default()
    };
    assert_eq!(classify_container(&k8s).as_deref(), Some("kubernetes"));
    let wsl = ContainerSigns {
        kernel_release: Some("5.15.153.1-microsoft-standard-WSL2"),
        ..ContainerSigns::default()
    };
    assert_eq!(classify_container(&wsl).as_deref(), Some("wsl"));
    let host = ContainerSigns {
        self_cgroup: Some("0::/user.slice/user-1000.slice/session-2.scope\n"),
        kernel_release: Some("6.8.0-45-generic"),
        ..ContainerSigns::default()
    };
    assert_eq!(classify_container(&host), None);
}

#[test]
fn leaf2_descriptors() {
    let tlb =
        parse_leaf2_tlb("Data TLB: 4 KByte pages, 4-way set associative, 64 entries").unwrap();
    assert_eq!(tlb.name, "Data TLB 4K");
    assert_eq!(tlb.entries, 64);
    assert_eq!(tlb.ways.as_deref(), Some("4-way"));
    let full =
        parse_leaf2_tlb("Instruction TLB: 4 MByte pages, fully associative, 2 entries").unwrap();
    assert_eq!(
        (full.name.as_str(), full.entries),
        ("Instruction TLB 4M", 2)
    );
    assert_eq!(full.ways.as_deref(), Some("full"));
    let shared = parse_leaf2_tlb(
        "Shared 2nd-Level TLB: 4 KByte/2MByte pages, 6-way associative, 1536 entries. \
             Also 1GBbyte pages, 4-way, 16 entries.",
    )
    .unwrap();
    assert_eq!(shared.name, "Shared 2nd-Level TLB 4K/2M");
    assert_eq!(shared.entries, 1536);
    assert_eq!(parse_leaf2_tlb("Null descriptor"), None);
}

#[test]
fn c_char_arrays() {
    let chars: Vec<libc::c_char> = b"6.18.44\0junk"
        .iter()
        .map(|&b| b as libc::c_char)
        .collect();
    assert_eq!(c_chars_to_string(&chars).as_deref(), Some("6.18.44"));
    assert_eq!(c_chars_to_string(&[0; 4]), None);
}

/// A real invariant of any Linux machine, not a guess about this one.
#[cfg(target_os = "linux")]
#[test]
fn collects_this_machine() {
    let env = collect();
    assert!(env.kernel_release.as_deref().is_some_and(|r| !r.is_empty()));
    assert!(env.logical_cpus.is_some_and(|n| n >= 1));
    assert!(!env.caches.is_empty());
    assert!(env.counters.is_empty());
    assert_eq!(env.oslab_version, env!("CARGO_PKG_VERSION"));
}

proptest! {
    #[test]
    fn parsers_never_panic(text in "\\PC*") {
        let _ = parse_cpuinfo(&text);
        let _ = parse_meminfo(&text);
        let _ = parse_size(&text);
        let _ = parse_cpu_list(&text);
        let _ = selected_option(&text);
        let _ = os_release_name(&text);
        let _ = kconfig_value(&text, "CONFIG_HZ");
        let _ = preemption_model(Some(&text), Some(&text), Some(&text), Some(&text));
        let _ = parse_status(&text);
        let _ = parse_leaf2_tlb(&text);
        let _ = hypervisor_name(&text);
    }

    #[test]
    fn structured_parsers_never_panic(
        list in "[0-9,:\\- ]{0,40}",
        size in "[0-9]{0,25} ?[KMGkmgBbQi]{0,3}",
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        if let Some(cpus) = parse_cpu_list(&list) {
            prop_assert!(cpus.len() <= MAX_CPUS as usize);
        }
        let _ = parse_size(&size);
        let _ = parse_acpi_oem_id(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let signs = ContainerSigns {
            pid1_environ: Some(&bytes),
            self_cgroup: Some(&text),
            kernel_release: Some(&text),
            systemd_container: Some(&text),
            ..ContainerSigns::default()
        };
        let _ = classify_container(&signs);
        let virt = VirtSigns {
            hypervisor: Some(&text),
            hypervisor_bit: Some(true),
            acpi_oem: Some(&text),
            dmi_vendor: Some(&text),
            dmi_product: Some(&text),
        };
        let _ = classify_virtualization(&virt);
    }

    #[test]
    fn sizes_round_trip(n in 0u64..1 << 40, unit in 0usize..3) {
        let (suffix, factor) = [("K", 1u64 << 10), ("M", 1 << 20), ("G", 1 << 30)][unit];
        prop_assert_eq!(parse_size(&format!("{n}{suffix}")), n.checked_mul(factor));
    }
}

#[test]
fn arm64_features_of_note_are_kept() {
    let arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes atomics fphp cpuid lrcpc paca pacg bti sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n";
    let info = parse_cpuinfo(arm);
    assert_eq!(
        flags_of_note(&info.flags),
        ["atomics", "sve", "paca", "pacg", "bti"]
    );
}

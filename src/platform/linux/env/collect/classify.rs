//! Parsing and classifying, pure: process status, the ACPI OEM id, the hypervisor, signs of virtualization and containers, CPUID leaf 2 TLBs.

use super::*;

/// The fields of `/proc/self/status` kept here.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Status {
    pub(super) seccomp: Option<String>,
    pub(super) cpus_allowed: Option<String>,
}

pub(super) fn parse_status(text: &str) -> Status {
    let field = |name: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == name).then(|| value.trim())
        })
    };
    let seccomp = field("Seccomp").map(|mode| match mode {
        "0" => "disabled".to_string(),
        "1" => "strict".to_string(),
        "2" => match field("Seccomp_filters") {
            Some("1") => "filter (1 filter)".to_string(),
            Some(n) => format!("filter ({n} filters)"),
            None => "filter".to_string(),
        },
        other => format!("mode {other}"),
    });
    Status {
        seccomp,
        cpus_allowed: field("Cpus_allowed_list")
            .filter(|v| !v.is_empty())
            .map(str::to_string),
    }
}

/// The OEM ID (bytes 10..16 of the standard ACPI table header), trimmed of padding.
pub(super) fn parse_acpi_oem_id(table: &[u8]) -> Option<String> {
    let oem = table.get(10..16)?;
    let text: String = oem
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '?'
            }
        })
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// A CPUID hypervisor signature (leaf 0x40000000, EBX ECX EDX) as a product name; an
/// unknown signature is returned as it is.
pub(super) fn hypervisor_name(signature: &str) -> String {
    let signature = signature.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    match signature {
        "KVMKVMKVM" => "KVM",
        "Linux KVM Hv" => "KVM (Hyper-V enlightened)",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU (TCG)",
        "VBoxVBoxVBox" => "VirtualBox",
        "bhyve bhyve" | "BHyVE BHyVE" => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        "QNXQVMBSQG" => "QNX",
        "prl hyperv" | "lrpepyh  vr" => "Parallels",
        "Apple VZ" | "Apple VZ Hv" => "Apple Virtualization",
        "" => "unknown",
        other => other,
    }
    .to_string()
}

/// What virtualization detection looks at.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct VirtSigns<'a> {
    /// Hypervisor product from CPUID leaf 0x40000000 (see [`hypervisor_name`]).
    pub(super) hypervisor: Option<&'a str>,
    /// CPUID.1:ECX bit 31, `None` when CPUID is not available (not x86).
    pub(super) hypervisor_bit: Option<bool>,
    pub(super) acpi_oem: Option<&'a str>,
    pub(super) dmi_vendor: Option<&'a str>,
    pub(super) dmi_product: Option<&'a str>,
}

/// The platform this runs on, like `systemd-detect-virt --vm` but with the product named:
/// the VMM from ACPI or DMI, followed by the hypervisor from CPUID in parentheses when they
/// differ (`Firecracker (KVM)`, `QEMU (KVM)`, `Amazon EC2 (KVM)`). `none` on bare metal,
/// `None` when there is nothing to go on.
pub(super) fn classify_virtualization(signs: &VirtSigns) -> Option<String> {
    let dmi = |s: Option<&str>| s.map(str::trim).unwrap_or("").to_ascii_lowercase();
    let (vendor, product) = (dmi(signs.dmi_vendor), dmi(signs.dmi_product));
    let from_dmi = if vendor.contains("qemu") || product.contains("qemu") {
        Some("QEMU")
    } else if vendor.contains("amazon ec2") || product.starts_with("amazon ec2") {
        Some("Amazon EC2")
    } else if vendor.contains("google") && product.contains("compute engine") {
        Some("Google Compute Engine")
    } else if vendor.contains("microsoft") && product.contains("virtual machine") {
        Some("Hyper-V")
    } else if vendor.contains("vmware") {
        Some("VMware")
    } else if vendor.contains("innotek") || product.contains("virtualbox") {
        Some("VirtualBox")
    } else if vendor.contains("xen") {
        Some("Xen")
    } else if vendor.contains("parallels") {
        Some("Parallels")
    } else if vendor.contains("bochs") {
        Some("Bochs")
    } else if product.contains("openstack") {
        Some("OpenStack")
    } else if vendor.contains("cloud hypervisor") || product.contains("cloud hypervisor") {
        Some("Cloud Hypervisor")
    } else {
        None
    };
    let from_acpi = match signs.acpi_oem.map(str::trim) {
        Some("FIRECK") => Some("Firecracker"),
        Some("CLOUDH") => Some("Cloud Hypervisor"),
        Some("BOCHS") => Some("QEMU"),
        Some("VRTUAL") => Some("Hyper-V"),
        Some("VMWARE") => Some("VMware"),
        Some("VBOX") => Some("VirtualBox"),
        Some("Xen") | Some("XEN") => Some("Xen"),
        Some("AMAZON") => Some("Amazon EC2"),
        Some("Google") => Some("Google Compute Engine"),
        _ => None,
    };
    // DMI names the cloud or VMM more specifically than ACPI (an EC2 instance on QEMU
    // tables); ACPI is what a microVM without DMI still has.
    let platform = from_dmi.or(from_acpi);
    let hypervisor = signs.hypervisor.filter(|h| !h.is_empty());
    match (platform, hypervisor) {
        (Some(p), Some(h)) if h == p || h.starts_with(p) => Some(h.to_string()),
        (Some(p), Some(h)) => Some(format!("{p} ({h})")),
        (Some(p), None) => Some(p.to_string()),
        (None, Some(h)) => Some(h.to_string()),
        (None, None) => match signs.hypervisor_bit {
            Some(true) => Some("unknown hypervisor".to_string()),
            Some(false) => Some("none".to_string()),
            None => None,
        },
    }
}

/// What container detection looks at.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ContainerSigns<'a> {
    /// `/run/systemd/container`, written by container managers that follow systemd's interface.
    pub(super) systemd_container: Option<&'a str>,
    /// `/proc/1/environ` (NUL-separated; `container=` is set by most runtimes).
    pub(super) pid1_environ: Option<&'a [u8]>,
    pub(super) dockerenv: bool,
    pub(super) containerenv: bool,
    pub(super) self_cgroup: Option<&'a str>,
    pub(super) kernel_release: Option<&'a str>,
}

/// The container runtime this process runs in, from the same markers
/// `systemd-detect-virt --container` uses; `None` when there is no sign of one.
pub(super) fn classify_container(signs: &ContainerSigns) -> Option<String> {
    let named = |s: &str| {
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_string())
    };
    if let Some(name) = signs.systemd_container.and_then(named) {
        return Some(name);
    }
    if let Some(environ) = signs.pid1_environ {
        let from_environ = environ
            .split(|&b| b == 0)
            .find_map(|var| var.strip_prefix(b"container="))
            .and_then(|name| named(&String::from_utf8_lossy(name)));
        if from_environ.is_some() {
            return from_environ;
        }
    }
    if signs.containerenv {
        return Some("podman".to_string());
    }
    if signs.dockerenv {
        return Some("docker".to_string());
    }
    if let Some(cgroup) = signs.self_cgroup {
        for (marker, name) in [
            ("kubepods", "kubernetes"),
            ("libpod", "podman"),
            ("/docker/", "docker"),
            ("docker-", "docker"),
            ("/lxc/", "lxc"),
            ("/lxc.payload", "lxc"),
            ("containerd", "containerd"),
        ] {
            if cgroup.contains(marker) {
                return Some(name.to_string());
            }
        }
    }
    let release = signs.kernel_release.unwrap_or("").to_ascii_lowercase();
    if release.contains("microsoft") || release.contains("wsl") {
        return Some("wsl".to_string());
    }
    None
}

/// One TLB described by an Intel CPUID leaf 2 descriptor, e.g.
/// `Data TLB: 4 KByte pages, 4-way set associative, 64 entries`.
pub(super) fn parse_leaf2_tlb(description: &str) -> Option<Tlb> {
    let (kind, rest) = description.split_once(':')?;
    let pages = rest.split(',').next()?.trim();
    let pages = pages.strip_suffix("pages").unwrap_or(pages).trim();
    let pages = pages.replace(" KByte", "K").replace("KByte", "K");
    let pages = pages.replace(" MByte", "M").replace("MByte", "M");
    let pages = pages.replace(" GByte", "G").replace("GByte", "G");
    let words: Vec<&str> = rest
        .split([' ', ',', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    let entries = words
        .windows(2)
        .find(|w| w[1] == "entries")
        .and_then(|w| w[0].parse::<u32>().ok())?;
    let lower = rest.to_ascii_lowercase();
    let ways = if lower.contains("fully associative") {
        Some("full".to_string())
    } else {
        words
            .iter()
            .find_map(|w| w.strip_suffix("-way"))
            .map(|n| format!("{n}-way"))
    };
    Some(Tlb {
        name: format!("{} {}", kind.trim(), pages.trim()),
        entries,
        ways,
    })
}

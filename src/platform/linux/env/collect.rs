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

const CPU_DIR: &str = "/sys/devices/system/cpu";
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
];

/// Describe this machine. Never fails: unreadable facts are left empty. `counters` is left
/// for the caller, which probes perf events.
pub fn collect() -> Environment {
    let uname = uname();
    let cpuinfo = read("/proc/cpuinfo")
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    let meminfo = read("/proc/meminfo")
        .map(|t| parse_meminfo(&t))
        .unwrap_or_default();
    let status = read("/proc/self/status")
        .map(|t| parse_status(&t))
        .unwrap_or_default();
    let cmdline = read_value("/proc/cmdline");
    let cpuid = cpuid::facts();
    let topology = topology(cpuinfo.processors);
    let kconfig = kernel_config(uname.release.as_deref());

    let virtualization = classify_virtualization(&VirtSigns {
        hypervisor: cpuid.hypervisor.as_deref(),
        hypervisor_bit: cpuid.hypervisor_bit,
        acpi_oem: acpi_oem_id().as_deref(),
        dmi_vendor: read_value("/sys/class/dmi/id/sys_vendor").as_deref(),
        dmi_product: read_value("/sys/class/dmi/id/product_name").as_deref(),
    });
    let preemption = preemption_model(
        read("/sys/kernel/debug/sched/preempt").as_deref(),
        cmdline.as_deref(),
        kconfig.as_deref(),
        uname.version.as_deref(),
    );

    Environment {
        cpu_model: cpuinfo.model.clone(),
        cpu_vendor: cpuinfo.vendor.clone(),
        cpu_signature: cpuinfo.signature(),
        microcode: cpuinfo.microcode.clone(),
        online_cpus: topology.online.clone(),
        logical_cpus: topology.logical,
        physical_cores: topology.cores,
        sockets: topology.sockets,
        threads_per_core: topology.threads_per_core,
        cpu_mhz: cpuinfo.mhz,
        caches: caches(Path::new(CPU_DIR).join("cpu0/cache").as_path()),
        tlbs: cpuid.tlbs,
        tsc_invariant: cpuid.tsc_invariant,
        cpu_flags_of_note: flags_of_note(&cpuinfo.flags),
        address_sizes: cpuinfo.address_sizes.clone(),
        xsave_bytes: cpuid.xsave_bytes,
        cpus_allowed: status.cpus_allowed.clone(),

        mem_total_bytes: meminfo.get("MemTotal").copied(),
        mem_available_bytes: meminfo.get("MemAvailable").copied(),
        swap_total_bytes: meminfo.get("SwapTotal").copied(),
        page_size: page_size(),
        thp_enabled: read(&format!("{THP_DIR}/enabled")).and_then(|t| selected_option(&t)),
        thp_defrag: read(&format!("{THP_DIR}/defrag")).and_then(|t| selected_option(&t)),
        khugepaged_defrag: read(&format!("{THP_DIR}/khugepaged/defrag"))
            .and_then(|t| selected_option(&t)),
        thp_shmem_enabled: read(&format!("{THP_DIR}/shmem_enabled"))
            .and_then(|t| selected_option(&t)),
        numa_nodes: read("/sys/devices/system/node/online")
            .and_then(|t| parse_cpu_list(&t))
            .and_then(|nodes| u32::try_from(nodes.len()).ok()),
        numa_balancing: read_value("/proc/sys/kernel/numa_balancing")
            .and_then(|v| v.parse::<i64>().ok())
            .map(|v| v != 0),

        os: std::env::consts::OS.to_string(),
        os_release: read("/etc/os-release")
            .or_else(|| read("/usr/lib/os-release"))
            .and_then(|t| os_release_name(&t)),
        kernel_release: uname.release.clone(),
        kernel_version: uname.version.clone(),
        arch: std::env::consts::ARCH.to_string(),
        hostname: uname.nodename.clone(),
        kernel_cmdline: cmdline,
        clocksource: read_value("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        available_clocksources: read_value(
            "/sys/devices/system/clocksource/clocksource0/available_clocksource",
        ),
        hz: kconfig
            .as_deref()
            .and_then(|c| kconfig_value(c, "CONFIG_HZ")?.parse().ok()),
        preemption,
        libc_version: libc_version(),
        seccomp: status.seccomp.clone(),

        hypervisor: cpuid.hypervisor,
        virtualization,
        container: detect_container(uname.release.as_deref()),

        vulnerabilities: vulnerabilities(),
        governor: read_value(&format!("{CPU_DIR}/cpu0/cpufreq/scaling_governor")),
        cpufreq_driver: read_value(&format!("{CPU_DIR}/cpu0/cpufreq/scaling_driver")),
        boost: boost(),
        cpuidle_driver: read_value(&format!("{CPU_DIR}/cpuidle/current_driver")),
        cpuidle_governor: read_value(&format!("{CPU_DIR}/cpuidle/current_governor"))
            .or_else(|| read_value(&format!("{CPU_DIR}/cpuidle/current_governor_ro"))),

        perf_event_paranoid: read_value("/proc/sys/kernel/perf_event_paranoid")
            .and_then(|v| v.parse().ok()),
        kptr_restrict: read_value("/proc/sys/kernel/kptr_restrict").and_then(|v| v.parse().ok()),
        perf_pmus: dir_names(Path::new("/sys/bus/event_source/devices")),
        counters: BTreeMap::new(),

        oslab_version: env!("CARGO_PKG_VERSION").to_string(),
        oslab_commit: option_env!("OSLAB_GIT_COMMIT").map(str::to_string),
        rustc_version: option_env!("OSLAB_RUSTC_VERSION").map(str::to_string),
        is_root: is_root(),
    }
}

// ---------------------------------------------------------------------------------------------
// Reading: thin wrappers whose only job is to turn every failure into `None`.

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok()
}

/// A single-value file (sysfs, /proc/sys), trimmed; empty counts as absent.
fn read_value(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let value = text.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// Names of the entries of a directory, sorted; empty when it cannot be listed.
fn dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

#[derive(Debug, Default)]
struct Uname {
    release: Option<String>,
    version: Option<String>,
    nodename: Option<String>,
}

fn uname() -> Uname {
    // SAFETY: `utsname` is plain old data (arrays of c_char), so all-zero is a valid value.
    let mut buf: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable `utsname` that outlives the call.
    if unsafe { libc::uname(&mut buf) } != 0 {
        return Uname::default();
    }
    Uname {
        release: c_chars_to_string(&buf.release),
        version: c_chars_to_string(&buf.version),
        nodename: c_chars_to_string(&buf.nodename),
    }
}

/// A NUL-terminated (or full) `c_char` array as a string; empty counts as absent.
#[allow(
    clippy::unnecessary_cast,
    reason = "c_char is i8 on some targets, u8 on others"
)]
fn c_chars_to_string(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn page_size() -> Option<u64> {
    // SAFETY: sysconf only reads a configuration value; it has no memory-safety preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0)
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn libc_version() -> Option<String> {
    // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string owned
    // by glibc, valid for the life of the process.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    Some(format!("glibc {}", version.to_string_lossy()))
}

#[cfg(all(target_os = "linux", target_env = "musl"))]
fn libc_version() -> Option<String> {
    // musl has no run-time version query.
    Some("musl".to_string())
}

#[cfg(not(all(target_os = "linux", any(target_env = "gnu", target_env = "musl"))))]
fn libc_version() -> Option<String> {
    None
}

#[derive(Debug, Default)]
struct Topology {
    online: Option<String>,
    logical: Option<u32>,
    cores: Option<u32>,
    sockets: Option<u32>,
    threads_per_core: Option<u32>,
}

/// CPU topology from `/sys/devices/system/cpu/{online,cpuN/topology/*}`. `processors` (the
/// count of `/proc/cpuinfo` entries) stands in for the CPU count when sysfs is absent.
fn topology(processors: u32) -> Topology {
    let online_text = read_value(&format!("{CPU_DIR}/online"));
    let online = online_text.as_deref().and_then(parse_cpu_list);
    let Some(online) = online else {
        return Topology {
            online: online_text,
            logical: (processors > 0).then_some(processors),
            ..Topology::default()
        };
    };
    let mut cores = BTreeSet::new();
    let mut sockets = BTreeSet::new();
    let mut max_threads = 0usize;
    for cpu in &online {
        let dir = format!("{CPU_DIR}/cpu{cpu}/topology");
        let number = |name: &str| read_value(&format!("{dir}/{name}"))?.parse::<i64>().ok();
        let (Some(package), Some(core)) = (number("physical_package_id"), number("core_id")) else {
            continue;
        };
        // core_id is unique within a die on multi-die parts; die_id is absent on old kernels.
        let die = number("die_id").unwrap_or(0);
        cores.insert((package, die, core));
        sockets.insert(package);
        if let Some(siblings) = read_value(&format!("{dir}/thread_siblings_list"))
            .as_deref()
            .and_then(parse_cpu_list)
        {
            max_threads = max_threads.max(siblings.len());
        }
    }
    let count = |n: usize| u32::try_from(n).ok().filter(|&n| n > 0);
    Topology {
        online: online_text,
        logical: count(online.len()),
        cores: count(cores.len()),
        sockets: count(sockets.len()),
        threads_per_core: count(max_threads),
    }
}

/// The caches of cpu0 from `cacheinfo` in sysfs, in index order (L1d, L1i, L2, L3 usually).
fn caches(dir: &Path) -> Vec<Cache> {
    let mut indexed: Vec<(u32, Cache)> = dir_names(dir)
        .iter()
        .filter_map(|name| {
            let index = name.strip_prefix("index")?.parse::<u32>().ok()?;
            let value = |file: &str| read_value(&dir.join(name).join(file).to_string_lossy());
            let cache = Cache {
                level: value("level")?.parse().ok()?,
                kind: value("type").unwrap_or_default(),
                size_bytes: value("size").as_deref().and_then(parse_size).unwrap_or(0),
                line_bytes: value("coherency_line_size").and_then(|v| v.parse().ok()),
                ways: value("ways_of_associativity").and_then(|v| v.parse().ok()),
                shared_cpus: value("shared_cpu_list"),
            };
            Some((index, cache))
        })
        .collect();
    indexed.sort_by_key(|(index, _)| *index);
    indexed.into_iter().map(|(_, cache)| cache).collect()
}

/// The kernel's build configuration: `/boot/config-$release`, the modules directory, or
/// `/proc/config.gz` (decompressed with the system's `gzip`, since no inflate crate is linked;
/// skipped when `gzip` is absent).
fn kernel_config(release: Option<&str>) -> Option<String> {
    if let Some(release) = release {
        for path in [
            format!("/boot/config-{release}"),
            format!("/lib/modules/{release}/config"),
            format!("/lib/modules/{release}/build/.config"),
        ] {
            if let Some(text) = read(&path) {
                return Some(text);
            }
        }
    }
    if !Path::new("/proc/config.gz").exists() {
        return None;
    }
    let output = Command::new("gzip")
        .args(["-dc", "/proc/config.gz"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}

/// The OEM ID of the ACPI FADT (`/sys/firmware/acpi/tables/FACP`, root only). Hypervisors
/// without DMI tables still sign their ACPI tables (Firecracker writes `FIRECK`).
fn acpi_oem_id() -> Option<String> {
    let table = fs::read("/sys/firmware/acpi/tables/FACP").ok()?;
    parse_acpi_oem_id(&table)
}

/// Container markers, the way `systemd-detect-virt --container` looks for them.
fn detect_container(kernel_release: Option<&str>) -> Option<String> {
    classify_container(&ContainerSigns {
        systemd_container: read_value("/run/systemd/container").as_deref(),
        pid1_environ: fs::read("/proc/1/environ").ok().as_deref(),
        dockerenv: Path::new("/.dockerenv").exists(),
        containerenv: Path::new("/run/.containerenv").exists(),
        self_cgroup: read("/proc/self/cgroup").as_deref(),
        kernel_release,
    })
}

/// `/sys/devices/system/cpu/vulnerabilities/*`: file name → the kernel's verdict.
fn vulnerabilities() -> BTreeMap<String, String> {
    let dir = format!("{CPU_DIR}/vulnerabilities");
    dir_names(Path::new(&dir))
        .into_iter()
        .filter_map(|name| {
            let state = read_value(&format!("{dir}/{name}"))?;
            Some((name, state))
        })
        .collect()
}

/// Turbo/boost state: the generic cpufreq knob, else intel_pstate's inverted one.
fn boost() -> Option<String> {
    if let Some(value) = read_value(&format!("{CPU_DIR}/cpufreq/boost")) {
        return Some(on_off(&value));
    }
    let no_turbo = read_value(&format!("{CPU_DIR}/intel_pstate/no_turbo"))?;
    Some(match no_turbo.as_str() {
        "0" => "on".to_string(),
        "1" => "off".to_string(),
        other => format!("intel_pstate no_turbo={other}"),
    })
}

fn on_off(value: &str) -> String {
    match value {
        "1" => "on".to_string(),
        "0" => "off".to_string(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing: pure functions over text.

/// The first processor block of `/proc/cpuinfo`, plus the number of processors listed.
#[derive(Debug, Default, Clone, PartialEq)]
struct CpuInfo {
    model: Option<String>,
    vendor: Option<String>,
    family: Option<String>,
    model_number: Option<String>,
    stepping: Option<String>,
    microcode: Option<String>,
    mhz: Option<f64>,
    flags: Vec<String>,
    address_sizes: Option<String>,
    processors: u32,
}

impl CpuInfo {
    /// "family/model/stepping" in decimal, as the kernel prints them.
    fn signature(&self) -> Option<String> {
        Some(format!(
            "{}/{}/{}",
            self.family.as_deref()?,
            self.model_number.as_deref()?,
            self.stepping.as_deref()?
        ))
    }
}

/// Parse `/proc/cpuinfo`. Keys differ by architecture: x86 has `model name`, `vendor_id` and
/// `flags`; arm64 has `CPU implementer` and `Features` and no model name.
fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut in_first_block = true;
    for line in text.lines() {
        if line.trim().is_empty() {
            in_first_block = info.processors == 0;
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "processor" {
            info.processors += 1;
            continue;
        }
        if !in_first_block || value.is_empty() {
            continue;
        }
        let slot = match key {
            "model name" | "cpu model" => &mut info.model,
            "vendor_id" | "CPU implementer" => &mut info.vendor,
            "cpu family" => &mut info.family,
            "model" => &mut info.model_number,
            "stepping" => &mut info.stepping,
            "microcode" => &mut info.microcode,
            "address sizes" => &mut info.address_sizes,
            "cpu MHz" => {
                info.mhz = info
                    .mhz
                    .or_else(|| value.parse().ok().filter(|m: &f64| m.is_finite()));
                continue;
            }
            "flags" | "Features" => {
                if info.flags.is_empty() {
                    info.flags = value.split_whitespace().map(str::to_string).collect();
                }
                continue;
            }
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(value.to_string());
        }
    }
    info
}

/// The flags of [`FLAGS_OF_NOTE`] that this CPU has, in that list's order.
fn flags_of_note(flags: &[String]) -> Vec<String> {
    FLAGS_OF_NOTE
        .iter()
        .filter(|note| flags.iter().any(|f| f == *note))
        .map(|note| note.to_string())
        .collect()
}

/// `/proc/meminfo` as key → bytes. Values with a `kB` unit are KiB; unit-less ones
/// (`HugePages_Total`) are counts and kept as they are.
fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (key, rest) = line.split_once(':')?;
            let mut parts = rest.split_whitespace();
            let number: u64 = parts.next()?.parse().ok()?;
            let value = match parts.next() {
                Some(unit) if unit.eq_ignore_ascii_case("kB") => number.checked_mul(1024)?,
                Some(_) => return None,
                None => number,
            };
            Some((key.trim().to_string(), value))
        })
        .collect()
}

/// A sysfs size such as `48K`, `1M`, `32768K`, `1024 KB` or `512` (bytes), in bytes. Units are
/// binary, as the kernel prints them.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits_end].parse().ok()?;
    let multiplier: u64 = match text[digits_end..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(multiplier)
}

/// A kernel cpu list (`0-3,8,10-11`, also used for node lists) as the CPUs it names, in
/// order. `None` when malformed or absurdly large; an empty list is `Some(vec![])`.
fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let text = text.trim();
    let mut cpus = Vec::new();
    if text.is_empty() {
        return Some(cpus);
    }
    for part in text.split(',') {
        let part = part.trim();
        // Ranges may carry a stride (`0-7:2`), as in cpuset lists; sysfs does not print one.
        let (range, stride) = match part.split_once(':') {
            Some((range, stride)) => (range, stride.trim().parse::<u32>().ok()?),
            None => (part, 1),
        };
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let cpu = range.trim().parse::<u32>().ok()?;
                (cpu, cpu)
            }
        };
        if first > last || last >= MAX_CPUS || stride == 0 {
            return None;
        }
        cpus.extend((first..=last).step_by(stride as usize));
        if cpus.len() > MAX_CPUS as usize {
            return None;
        }
    }
    Some(cpus)
}

/// The selected value of a sysfs choice file: `always [madvise] never` → `madvise`. debugfs
/// marks the selection with parentheses instead (`none voluntary (full) lazy`). A file with
/// no marker holds just its value (`khugepaged/defrag` is `0` or `1`).
fn selected_option(text: &str) -> Option<String> {
    let text = text.trim();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let Some(start) = text.find(open) {
            let rest = &text[start + open.len_utf8()..];
            let end = rest.find(close)?;
            let value = rest[..end].trim();
            return (!value.is_empty()).then(|| value.to_string());
        }
    }
    (!text.is_empty() && !text.contains([']', ')'])).then(|| text.to_string())
}

/// PRETTY_NAME from os-release(5) text, else NAME and VERSION.
fn os_release_name(text: &str) -> Option<String> {
    let mut fields = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            fields.insert(key.trim(), unquote_shell(value.trim()));
        }
    }
    let nonempty = |key: &str| fields.get(key).filter(|v| !v.is_empty()).cloned();
    nonempty("PRETTY_NAME").or_else(|| match (nonempty("NAME"), nonempty("VERSION")) {
        (Some(name), Some(version)) => Some(format!("{name} {version}")),
        (name, _) => name,
    })
}

/// An os-release value: optionally single or double quoted, with shell backslash escapes
/// inside double quotes.
fn unquote_shell(value: &str) -> String {
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.to_string();
    }
    let inner = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// A value from kernel config text: `CONFIG_HZ=250` → `250`; `# CONFIG_X is not set` → None.
fn kconfig_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|line| {
        let value = line.trim().strip_prefix(key)?.strip_prefix('=')?;
        Some(value.trim().trim_matches('"'))
    })
}

/// The preemption model, from the best source available:
/// 1. debugfs `sched/preempt` (the current mode of a PREEMPT_DYNAMIC kernel, root only);
/// 2. `preempt=` on the command line of a PREEMPT_DYNAMIC kernel;
/// 3. the kernel config (for a dynamic kernel, the boot default);
/// 4. the `uname -v` string, which names PREEMPT, PREEMPT_DYNAMIC, PREEMPT_RT or nothing.
fn preemption_model(
    debugfs: Option<&str>,
    cmdline: Option<&str>,
    config: Option<&str>,
    version: Option<&str>,
) -> Option<String> {
    let version_tokens: Vec<&str> = version.unwrap_or("").split_whitespace().collect();
    let config_set = |key: &str| config.and_then(|c| kconfig_value(c, key)) == Some("y");
    if version_tokens.contains(&"PREEMPT_RT") || config_set("CONFIG_PREEMPT_RT") {
        return Some("rt".to_string());
    }
    if let Some(mode) = debugfs.and_then(selected_option) {
        return Some(format!("{mode} (dynamic)"));
    }
    let dynamic =
        version_tokens.contains(&"PREEMPT_DYNAMIC") || config_set("CONFIG_PREEMPT_DYNAMIC");
    if dynamic {
        let boot_choice = cmdline.and_then(|c| {
            c.split_whitespace()
                .find_map(|arg| arg.strip_prefix("preempt="))
                .filter(|mode| !mode.is_empty())
        });
        if let Some(mode) = boot_choice {
            return Some(format!("{mode} (dynamic, preempt= at boot)"));
        }
    }
    if config.is_some() {
        let model = [
            ("CONFIG_PREEMPT_LAZY", "lazy"),
            ("CONFIG_PREEMPT", "full"),
            ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
            ("CONFIG_PREEMPT_NONE", "none"),
        ]
        .into_iter()
        .find(|(key, _)| config_set(key))
        .map(|(_, model)| model);
        if let Some(model) = model {
            return Some(if dynamic {
                format!("{model} (dynamic, build default)")
            } else {
                model.to_string()
            });
        }
    }
    // Without the version string there is nothing left to go on.
    version?;
    Some(
        if dynamic {
            "dynamic (mode unknown)"
        } else if version_tokens.contains(&"PREEMPT_LAZY") {
            "lazy"
        } else if version_tokens.contains(&"PREEMPT") {
            "full"
        } else {
            "none or voluntary"
        }
        .to_string(),
    )
}

/// The fields of `/proc/self/status` kept here.
#[derive(Debug, Default, Clone, PartialEq)]
struct Status {
    seccomp: Option<String>,
    cpus_allowed: Option<String>,
}

fn parse_status(text: &str) -> Status {
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
fn parse_acpi_oem_id(table: &[u8]) -> Option<String> {
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
fn hypervisor_name(signature: &str) -> String {
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
struct VirtSigns<'a> {
    /// Hypervisor product from CPUID leaf 0x40000000 (see [`hypervisor_name`]).
    hypervisor: Option<&'a str>,
    /// CPUID.1:ECX bit 31, `None` when CPUID is not available (not x86).
    hypervisor_bit: Option<bool>,
    acpi_oem: Option<&'a str>,
    dmi_vendor: Option<&'a str>,
    dmi_product: Option<&'a str>,
}

/// The platform this runs on, like `systemd-detect-virt --vm` but with the product named:
/// the VMM from ACPI or DMI, followed by the hypervisor from CPUID in parentheses when they
/// differ (`Firecracker (KVM)`, `QEMU (KVM)`, `Amazon EC2 (KVM)`). `none` on bare metal,
/// `None` when there is nothing to go on.
fn classify_virtualization(signs: &VirtSigns) -> Option<String> {
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
struct ContainerSigns<'a> {
    /// `/run/systemd/container`, written by container managers that follow systemd's interface.
    systemd_container: Option<&'a str>,
    /// `/proc/1/environ` (NUL-separated; `container=` is set by most runtimes).
    pid1_environ: Option<&'a [u8]>,
    dockerenv: bool,
    containerenv: bool,
    self_cgroup: Option<&'a str>,
    kernel_release: Option<&'a str>,
}

/// The container runtime this process runs in, from the same markers
/// `systemd-detect-virt --container` uses; `None` when there is no sign of one.
fn classify_container(signs: &ContainerSigns) -> Option<String> {
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
fn parse_leaf2_tlb(description: &str) -> Option<Tlb> {
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
            .filter(|(_, entries, assoc)| *entries > 0 && *assoc != Associativity::Disabled)
            .map(|(name, entries, assoc)| Tlb {
                name: name.to_string(),
                entries,
                ways: match assoc {
                    Associativity::DirectMapped => Some("direct".to_string()),
                    Associativity::NWay(n) => Some(format!("{n}-way")),
                    Associativity::FullyAssociative => Some("full".to_string()),
                    Associativity::Disabled | Associativity::Unknown => None,
                },
            })
            .collect()
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

//! Reading the live system: thin wrappers whose only job is to turn every failure into None, and the probes built on them.

use super::*;

// ---------------------------------------------------------------------------------------------
// Reading: thin wrappers whose only job is to turn every failure into `None`.

pub(super) fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok()
}

/// A single-value file (sysfs, /proc/sys), trimmed; empty counts as absent.
pub(super) fn read_value(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let value = text.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// Names of the entries of a directory, sorted; empty when it cannot be listed.
pub(super) fn dir_names(dir: &Path) -> Vec<String> {
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
pub(super) struct Uname {
    pub(super) release: Option<String>,
    pub(super) version: Option<String>,
    pub(super) nodename: Option<String>,
}

pub(super) fn uname() -> Uname {
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
pub(super) fn c_chars_to_string(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    (!text.is_empty()).then_some(text)
}

pub(super) fn page_size() -> Option<u64> {
    // SAFETY: sysconf only reads a configuration value; it has no memory-safety preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0)
}

pub(super) fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn libc_version() -> Option<String> {
    // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string owned
    // by glibc, valid for the life of the process.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    Some(format!("glibc {}", version.to_string_lossy()))
}

#[cfg(all(target_os = "linux", target_env = "musl"))]
pub(super) fn libc_version() -> Option<String> {
    // musl has no run-time version query.
    Some("musl".to_string())
}

#[cfg(not(all(target_os = "linux", any(target_env = "gnu", target_env = "musl"))))]
pub(super) fn libc_version() -> Option<String> {
    None
}

#[derive(Debug, Default)]
pub(super) struct Topology {
    pub(super) online: Option<String>,
    pub(super) logical: Option<u32>,
    pub(super) cores: Option<u32>,
    pub(super) sockets: Option<u32>,
    pub(super) threads_per_core: Option<u32>,
}

/// CPU topology from `/sys/devices/system/cpu/{online,cpuN/topology/*}`. `processors` (the
/// count of `/proc/cpuinfo` entries) stands in for the CPU count when sysfs is absent.
pub(super) fn topology(processors: u32) -> Topology {
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
pub(super) fn caches(dir: &Path) -> Vec<Cache> {
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
pub(super) fn kernel_config(release: Option<&str>) -> Option<String> {
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
pub(super) fn acpi_oem_id() -> Option<String> {
    let table = fs::read("/sys/firmware/acpi/tables/FACP").ok()?;
    parse_acpi_oem_id(&table)
}

/// Container markers, the way `systemd-detect-virt --container` looks for them.
pub(super) fn detect_container(kernel_release: Option<&str>) -> Option<String> {
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
pub(super) fn vulnerabilities() -> BTreeMap<String, String> {
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
pub(super) fn boost() -> Option<String> {
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

pub(super) fn on_off(value: &str) -> String {
    match value {
        "1" => "on".to_string(),
        "0" => "off".to_string(),
        other => other.to_string(),
    }
}

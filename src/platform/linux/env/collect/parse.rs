//! Parsing, pure functions over text: cpuinfo, meminfo, sizes, CPU lists, os-release, kernel config, the preemption model.

use super::*;

// ---------------------------------------------------------------------------------------------
// Parsing: pure functions over text.

/// The first processor block of `/proc/cpuinfo`, plus the number of processors listed.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct CpuInfo {
    pub(super) model: Option<String>,
    pub(super) vendor: Option<String>,
    pub(super) family: Option<String>,
    pub(super) model_number: Option<String>,
    pub(super) stepping: Option<String>,
    pub(super) microcode: Option<String>,
    pub(super) mhz: Option<f64>,
    pub(super) flags: Vec<String>,
    pub(super) address_sizes: Option<String>,
    pub(super) processors: u32,
}

impl CpuInfo {
    /// "family/model/stepping" in decimal, as the kernel prints them.
    pub(super) fn signature(&self) -> Option<String> {
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
pub(super) fn parse_cpuinfo(text: &str) -> CpuInfo {
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
pub(super) fn flags_of_note(flags: &[String]) -> Vec<String> {
    FLAGS_OF_NOTE
        .iter()
        .filter(|note| flags.iter().any(|f| f == *note))
        .map(|note| note.to_string())
        .collect()
}

/// `/proc/meminfo` as key → bytes. Values with a `kB` unit are KiB; unit-less ones
/// (`HugePages_Total`) are counts and kept as they are.
pub(super) fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
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
pub(super) fn parse_size(text: &str) -> Option<u64> {
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
pub(super) fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
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
pub(super) fn selected_option(text: &str) -> Option<String> {
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
pub(super) fn os_release_name(text: &str) -> Option<String> {
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
pub(super) fn unquote_shell(value: &str) -> String {
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
pub(super) fn kconfig_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
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
pub(super) fn preemption_model(
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

//! `oslab env` as aligned text: the machine description of a run, grouped the way a person
//! reads a machine (CPU, caches, memory, kernel, virtualization, mitigations, power, perf
//! counters, the tool itself).
//!
//! Unknown facts are left out rather than printed as "None"; only the few that change how
//! results must be read (clocksource, THP, governor) say "unknown" explicitly.

use std::fmt::Write as _;

use crate::model::env::{Cache, CoreKind, Environment};

/// Rows are indented under their section title.
const INDENT: &str = "  ";
/// Space between a label and its value.
const GAP: &str = "  ";
/// Labels are padded to at least this width so sections line up when they can.
const MIN_LABEL_WIDTH: usize = 20;
/// Long values (the kernel command line, mitigation strings) wrap to stay within this width.
const LINE_WIDTH: usize = 100;

/// Render the environment for a person at a terminal.
pub fn render(env: &Environment) -> String {
    let sections = [
        cpu(env),
        caches_and_tlbs(env),
        memory(env),
        os_and_kernel(env),
        virtualization(env),
        mitigations(env),
        power(env),
        perf(env),
        tool(env),
    ];
    let mut out = String::new();
    for section in sections.iter().filter(|s| !s.lines.is_empty()) {
        if !out.is_empty() {
            out.push('\n');
        }
        section.write_to(&mut out);
    }
    out
}

/// One titled group of lines.
struct Section {
    title: &'static str,
    lines: Vec<Line>,
}

enum Line {
    /// `label  value`, the value wrapped and aligned.
    Row(String, String),
    /// Preformatted text (a table), indented only.
    Text(String),
}

impl Section {
    fn new(title: &'static str) -> Self {
        Section {
            title,
            lines: Vec::new(),
        }
    }

    fn row(&mut self, label: &str, value: impl Into<String>) {
        self.lines.push(Line::Row(label.to_string(), value.into()));
    }

    /// A row only when the value is known.
    fn opt(&mut self, label: &str, value: Option<impl Into<String>>) {
        if let Some(value) = value {
            self.row(label, value);
        }
    }

    fn write_to(&self, out: &mut String) {
        let label_width = self
            .lines
            .iter()
            .filter_map(|line| match line {
                Line::Row(label, _) => Some(label.chars().count()),
                Line::Text(_) => None,
            })
            .max()
            .unwrap_or(0)
            .max(MIN_LABEL_WIDTH);
        let value_column = INDENT.len() + label_width + GAP.len();
        let value_width = LINE_WIDTH.saturating_sub(value_column).max(24);
        let _ = writeln!(out, "{}", self.title);
        for line in &self.lines {
            match line {
                Line::Row(label, value) => {
                    for (i, part) in wrap(value, value_width).iter().enumerate() {
                        let text = if i == 0 {
                            format!("{INDENT}{label:<label_width$}{GAP}{part}")
                        } else {
                            format!("{:value_column$}{part}", "")
                        };
                        let _ = writeln!(out, "{}", text.trim_end());
                    }
                }
                Line::Text(text) => {
                    let _ = writeln!(out, "{}", format!("{INDENT}{text}").trim_end());
                }
            }
        }
    }
}

fn cpu(env: &Environment) -> Section {
    let mut s = Section::new("CPU");
    s.opt("model", env.cpu_model.as_deref());
    s.opt("vendor", env.cpu_vendor.as_deref());
    s.opt("family/model/step", env.cpu_signature.as_deref());
    s.opt("microcode", env.microcode.as_deref());
    s.opt("frequency", env.cpu_mhz.map(|mhz| format!("{mhz:.0} MHz")));
    let logical = env.logical_cpus.map(|n| match &env.online_cpus {
        Some(online) => format!("{n} (online {online})"),
        None => n.to_string(),
    });
    s.opt("logical CPUs", logical.or_else(|| env.online_cpus.clone()));
    let topology: Vec<String> = [
        env.sockets.map(|n| plural(n, "socket", "sockets")),
        env.physical_cores.map(|n| plural(n, "core", "cores")),
        env.threads_per_core
            .map(|n| plural(n, "thread per core", "threads per core")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !topology.is_empty() {
        s.row("topology", topology.join(", "));
    }
    for kind in &env.core_kinds {
        let label = if env.heterogeneous() {
            "core kind"
        } else {
            "core"
        };
        s.row(label, core_kind_line(kind));
    }
    s.opt("allowed CPUs", env.cpus_allowed.as_deref());
    s.opt(
        "TSC",
        env.tsc_invariant
            .map(|inv| if inv { "invariant" } else { "not invariant" }),
    );
    s.opt("address sizes", env.address_sizes.as_deref());
    s.opt(
        "XSAVE state",
        env.xsave_bytes.map(|b| format!("{b} bytes per context")),
    );
    if !env.cpu_flags_of_note.is_empty() {
        s.row("flags of note", env.cpu_flags_of_note.join(" "));
    }
    s
}

fn caches_and_tlbs(env: &Environment) -> Section {
    let mut s = Section::new("Caches & TLBs");
    s.lines
        .extend(cache_table(&env.caches).into_iter().map(Line::Text));
    for tlb in &env.tlbs {
        let mut value = plural(tlb.entries, "entry", "entries");
        match tlb.ways.as_deref() {
            Some("full") => value.push_str(", fully associative"),
            Some("direct") => value.push_str(", direct mapped"),
            Some(ways) => value.push_str(&format!(", {ways}")),
            None => {}
        }
        s.row(&tlb.name, value);
    }
    s
}

/// One kind of core on a line: "ARM Cortex-A72 r0p2: CPUs 4-5, capacity 1024, up to 1800 MHz,
/// L1d 32 KiB, L2 1 MiB".
pub(crate) fn core_kind_line(kind: &CoreKind) -> String {
    let mut parts = vec![format!(
        "CPUs {}",
        crate::platform::cpu::format_list(&kind.cpus)
    )];
    parts.extend(kind.midr.as_ref().map(|m| format!("MIDR {m}")));
    parts.extend(kind.capacity.map(|c| format!("capacity {c}")));
    parts.extend(kind.max_mhz.map(|m| format!("up to {m:.0} MHz")));
    parts.extend(
        kind.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| {
                format!(
                    "L{}{} {}",
                    c.level,
                    if c.kind == "Data" { "d" } else { "" },
                    format_bytes(c.size_bytes)
                )
            }),
    );
    format!("{}: {}", kind.name, parts.join(", "))
}

/// The caches as a small table: level, type, size, line, ways, shared by.
fn cache_table(caches: &[Cache]) -> Vec<String> {
    if caches.is_empty() {
        return Vec::new();
    }
    let header = ["level", "type", "size", "line", "ways", "shared by"].map(str::to_string);
    let rows: Vec<[String; 6]> = caches
        .iter()
        .map(|c| {
            [
                format!("L{}", c.level),
                c.kind.clone(),
                format_bytes(c.size_bytes),
                c.line_bytes.map_or("-".to_string(), |b| format!("{b} B")),
                c.ways.map_or("-".to_string(), |w| w.to_string()),
                c.shared_cpus.clone().unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|row| {
            row.iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect::<Vec<_>>()
                .join(GAP)
        })
        .collect()
}

fn memory(env: &Environment) -> Section {
    let mut s = Section::new("Memory");
    s.opt("total", env.mem_total_bytes.map(format_bytes));
    s.opt("available", env.mem_available_bytes.map(format_bytes));
    s.opt(
        "swap",
        env.swap_total_bytes.map(|b| {
            if b == 0 {
                "none".to_string()
            } else {
                format_bytes(b)
            }
        }),
    );
    s.opt("swap areas", env.swap_areas.as_deref());
    s.opt("multi-gen LRU", env.lru_gen.as_deref());
    s.opt("page size", env.page_size.map(format_bytes));
    s.row("THP", env.thp_enabled.as_deref().unwrap_or("unknown"));
    s.opt("THP defrag", env.thp_defrag.as_deref());
    s.opt("khugepaged defrag", env.khugepaged_defrag.as_deref());
    s.opt("THP shmem", env.thp_shmem_enabled.as_deref());
    s.opt("NUMA nodes", env.numa_nodes.map(|n| n.to_string()));
    s.opt("NUMA balancing", env.numa_balancing.map(on_off));
    s
}

fn os_and_kernel(env: &Environment) -> Section {
    let mut s = Section::new("OS & kernel");
    let os = env
        .os_release
        .clone()
        .or_else(|| (!env.os.is_empty()).then(|| env.os.clone()));
    s.opt("OS", os);
    s.opt("kernel", env.kernel_release.as_deref());
    s.opt("kernel build", env.kernel_version.as_deref());
    if !env.arch.is_empty() {
        s.row("arch", env.arch.as_str());
    }
    s.opt("emulated", env.emulation.as_deref());
    s.opt("hostname", env.hostname.as_deref());
    s.opt("preemption", env.preemption.as_deref());
    s.opt("HZ", env.hz.map(|hz| hz.to_string()));
    let clocksource = match (&env.clocksource, &env.available_clocksources) {
        (Some(current), Some(available)) => format!("{current} (available: {available})"),
        (Some(current), None) => current.clone(),
        (None, _) => "unknown".to_string(),
    };
    s.row("clocksource", clocksource);
    s.opt("C library", env.libc_version.as_deref());
    s.opt("seccomp", env.seccomp.as_deref());
    s.opt("command line", env.kernel_cmdline.as_deref());
    s
}

fn virtualization(env: &Environment) -> Section {
    let mut s = Section::new("Virtualization");
    s.opt("platform", env.virtualization.as_deref());
    s.opt("hypervisor", env.hypervisor.as_deref());
    s.opt("container", env.container.as_deref());
    s
}

/// Affected or mitigated vulnerabilities one per row; the unaffected ones on a single row.
fn mitigations(env: &Environment) -> Section {
    let mut s = Section::new("Mitigations");
    let mut unaffected = Vec::new();
    for (name, state) in &env.vulnerabilities {
        if state.eq_ignore_ascii_case("not affected") {
            unaffected.push(name.as_str());
        } else {
            s.row(name, state.as_str());
        }
    }
    if !unaffected.is_empty() {
        s.row("not affected", unaffected.join(", "));
    }
    let boot_options = mitigation_boot_options(env.kernel_cmdline.as_deref().unwrap_or(""));
    if !boot_options.is_empty() {
        s.row("boot options", boot_options.join(" "));
    }
    s
}

/// Kernel command-line options that change mitigations (see the kernel's
/// admin-guide/kernel-parameters: `mitigations=`, `nopti`, `spectre_v2=`, …).
fn mitigation_boot_options(cmdline: &str) -> Vec<&str> {
    const PREFIXES: &[&str] = &[
        "mitigations=",
        "pti=",
        "nopti",
        "nospectre",
        "spectre",
        "spec_",
        "nospec",
        "retbleed=",
        "mds=",
        "tsx",
        "l1tf=",
        "srso",
        "mmio_stale_data=",
        "gather_data_sampling=",
        "reg_file_data_sampling=",
        "ssbd=",
        "nosmt",
        "kpti=",
    ];
    cmdline
        .split_whitespace()
        .take_while(|arg| *arg != "--")
        .filter(|arg| PREFIXES.iter().any(|p| arg.starts_with(p)))
        .collect()
}

fn power(env: &Environment) -> Section {
    let mut s = Section::new("Power");
    s.row("governor", env.governor.as_deref().unwrap_or("unknown"));
    s.opt("cpufreq driver", env.cpufreq_driver.as_deref());
    s.opt("boost", env.boost.as_deref());
    s.opt("cpuidle driver", env.cpuidle_driver.as_deref());
    s.opt("cpuidle governor", env.cpuidle_governor.as_deref());
    s
}

fn perf(env: &Environment) -> Section {
    let mut s = Section::new("Perf counters");
    s.opt(
        "perf_event_paranoid",
        env.perf_event_paranoid
            .map(|p| format!("{p} ({})", paranoid_meaning(p))),
    );
    s.opt("kptr_restrict", env.kptr_restrict.map(|k| k.to_string()));
    if !env.perf_pmus.is_empty() {
        let mut pmus = env.perf_pmus.join(" ");
        // x86 names its core PMU `cpu` (`cpu_core`/`cpu_atom` on hybrids); other
        // architectures use other names, so only say this where it is reliable.
        let x86 = matches!(env.arch.as_str(), "x86" | "x86_64");
        if x86 && !env.perf_pmus.iter().any(|p| p.starts_with("cpu")) {
            pmus.push_str(" (no hardware PMU)");
        }
        s.row("PMUs", pmus);
    }
    if env.counters.is_empty() {
        s.row("counters", "not probed");
    }
    // One row per outcome: the counters that work, then each reason with the counters it
    // applies to, so ten hardware events without a PMU read as one entry.
    let mut outcomes: Vec<(bool, Option<&str>, Vec<&str>)> = Vec::new();
    for (name, availability) in &env.counters {
        let key = (availability.supported, availability.reason.as_deref());
        match outcomes.iter_mut().find(|(ok, why, _)| (*ok, *why) == key) {
            Some((_, _, names)) => names.push(name),
            None => outcomes.push((key.0, key.1, vec![name])),
        }
    }
    outcomes.sort_by_key(|(ok, _, _)| !*ok);
    for (ok, why, names) in outcomes {
        s.row(if ok { "counted" } else { "unsupported" }, names.join(" "));
        if let Some(why) = why {
            s.row(if ok { "  note" } else { "  why" }, why);
        }
    }
    // Where a counter is not perf's generic event (arm64), which event counts it.
    for (name, availability) in &env.counters {
        if let Some(event) = &availability.event {
            s.row(&format!("  {name}"), event);
        }
    }
    s
}

/// What a `perf_event_paranoid` level forbids to users without CAP_PERFMON (see
/// Documentation/admin-guide/perf-security.rst; level 3 is a Debian/Android patch).
fn paranoid_meaning(level: i32) -> &'static str {
    match level {
        i32::MIN..=-1 => "no restrictions",
        0 => "users: no raw tracepoints",
        1 => "users: no CPU-wide events",
        2 => "users: no kernel profiling",
        _ => "users: no perf_event_open",
    }
}

fn tool(env: &Environment) -> Section {
    let mut s = Section::new("oslab");
    if !env.oslab_version.is_empty() {
        s.row("version", env.oslab_version.as_str());
    }
    s.opt("commit", env.oslab_commit.as_deref());
    s.opt("rustc", env.rustc_version.as_deref());
    let user = match (env.is_root, env.os.as_str()) {
        (true, "windows") => "administrator (elevated)",
        (false, "windows") => "not elevated",
        (true, _) => "root",
        (false, _) => "not root",
    };
    s.row("user", user);
    s
}

/// Bytes in binary units: exact values as integers (`32 KiB`), others to one decimal.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >> (10 * (unit + 1)) > 0 {
        unit += 1;
    }
    let scale = 1u64 << (10 * unit);
    if bytes.is_multiple_of(scale) {
        format!("{} {}", bytes / scale, UNITS[unit])
    } else {
        format!("{:.1} {}", bytes as f64 / scale as f64, UNITS[unit])
    }
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// Greedy word wrap to `width` characters; a word longer than the width gets a line of its own.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let needed =
            current.chars().count() + usize::from(!current.is_empty()) + word.chars().count();
        if !current.is_empty() && needed > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines
}

/// Where the workers ran, and why there where oslab chose: "pinned to CPU 0, the fewest
/// device interrupts since boot (…)", or the CPUs the processes took in turn.
pub fn where_pinned(settings: &crate::model::RunSettings) -> String {
    match &settings.cpu_choice {
        Some(why) if settings.cpu_turns.is_empty() => format!("{}, {why}", place(settings)),
        _ => place(settings),
    }
}

/// "pinned to CPU 0", or "processes pinned to CPUs 1, 0 in turn".
fn place(settings: &crate::model::RunSettings) -> String {
    let list: Vec<String> = settings.cpu_turns.iter().map(|c| c.to_string()).collect();
    if list.is_empty() {
        let cpus = crate::platform::cpu::format_list(&settings.cpus);
        format!("pinned to CPU {cpus}")
    } else {
        format!("processes pinned to CPUs {} in turn", list.join(", "))
    }
}

/// Where the workers ran: one CPU, or the CPUs the processes took in turn; on a
/// heterogeneous CPU, which kind of core they are.
pub fn pinning(
    settings: &crate::model::RunSettings,
    env: &crate::model::env::Environment,
) -> String {
    if let Some(why) = &settings.unpinned {
        return format!("not pinned: {why}");
    }
    let place = place(settings);
    let used = if settings.cpu_turns.is_empty() {
        &settings.cpus
    } else {
        &settings.cpu_turns
    };
    let mut kinds: Vec<&str> = Vec::new();
    for kind in used.iter().filter_map(|&c| env.core_kind_of(c)) {
        if !kinds.contains(&kind.name.as_str()) {
            kinds.push(&kind.name);
        }
    }
    match kinds.as_slice() {
        [] => place,
        [one] => format!("{place} ({one} cores)"),
        many => format!("{place} (MIXED kinds of core: {})", many.join(", ")),
    }
}

#[cfg(test)]
mod tests;

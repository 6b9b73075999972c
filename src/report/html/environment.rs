//! The environment section, last on the page: the machine-spec table a lab write-up needs,
//! one column per run; with several runs the rows that differ first and highlighted, the
//! identical ones folded into one line.

use std::fmt::Write as _;

use super::{kib, run_name};
use crate::model::Run;
use crate::report::charts::esc;
use crate::report::format::{sig3, time_ns};

/// How a row reads its value from a run (`None`: not known, shown as a dash).
type Field = fn(&Run) -> Option<String>;

/// The machine: when, which CPU, its caches and TLBs, memory.
const MACHINE: &[(&str, Field)] = &[
    ("started", |r| Some(utc(r.started_at))),
    ("tag", |r| r.tag.clone()),
    ("CPU", |r| r.environment.cpu_model.clone()),
    ("CPUs", |r| {
        let e = &r.environment;
        let mut parts = Vec::new();
        if let Some(n) = e.logical_cpus {
            parts.push(format!("{n} logical"));
        }
        if let Some(n) = e.physical_cores {
            parts.push(format!("{n} cores"));
        }
        if let Some(n) = e.sockets {
            parts.push(format!("{n} sockets"));
        }
        if let Some(n) = e.threads_per_core {
            parts.push(format!("{n} threads/core"));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }),
    ("CPU signature, microcode", |r| {
        join_some(&[
            r.environment.cpu_signature.clone(),
            r.environment.microcode.clone(),
        ])
    }),
    ("core kinds", |r| {
        let kinds: Vec<String> = r
            .environment
            .core_kinds
            .iter()
            .map(crate::report::env_table::core_kind_line)
            .collect();
        (!kinds.is_empty()).then(|| kinds.join("; "))
    }),
    ("caches", |r| {
        let c: Vec<String> = r
            .environment
            .caches
            .iter()
            .map(|c| {
                format!(
                    "L{} {} {}{}",
                    c.level,
                    c.kind,
                    kib(c.size_bytes as f64 / 1024.0),
                    c.ways.map(|w| format!(" {w}-way")).unwrap_or_default()
                )
            })
            .collect();
        (!c.is_empty()).then(|| c.join("; "))
    }),
    ("TLBs", |r| {
        let t: Vec<String> = r
            .environment
            .tlbs
            .iter()
            .map(|t| format!("{} {} entries", t.name, t.entries))
            .collect();
        (!t.is_empty()).then(|| t.join("; "))
    }),
    ("memory", |r| {
        let e = &r.environment;
        join_some(&[
            e.mem_total_bytes
                .map(|b| format!("{} total", kib(b as f64 / 1024.0))),
            e.swap_total_bytes
                .map(|b| format!("{} swap", kib(b as f64 / 1024.0))),
            e.page_size.map(|b| format!("{b} B pages")),
            e.numa_nodes.map(|n| format!("{n} NUMA nodes")),
        ])
    }),
    ("transparent huge pages", |r| {
        let e = &r.environment;
        join_some(&[
            e.thp_enabled.as_ref().map(|v| format!("enabled: {v}")),
            e.thp_defrag.as_ref().map(|v| format!("defrag: {v}")),
        ])
    }),
];

/// The operating system, virtualization, clock and frequency.
const SYSTEM: &[(&str, Field)] = &[
    ("OS", |r| {
        join_some(&[
            Some(r.environment.os.clone()),
            r.environment.os_release.clone(),
        ])
    }),
    ("kernel", |r| {
        join_some(&[
            r.environment.kernel_release.clone(),
            r.environment.kernel_version.clone(),
        ])
    }),
    ("preemption, HZ", |r| {
        join_some(&[
            r.environment.preemption.clone(),
            r.environment.hz.map(|h| format!("HZ={h}")),
        ])
    }),
    ("architecture", |r| {
        let e = &r.environment;
        Some(match &e.emulation {
            Some(how) => format!("{} — emulated: {how}", e.arch),
            None => e.arch.clone(),
        })
    }),
    ("virtualization", |r| {
        let e = &r.environment;
        join_some(&[
            e.virtualization.clone(),
            e.hypervisor.clone(),
            e.container.as_ref().map(|c| format!("container: {c}")),
        ])
        .or(Some("none detected".into()))
    }),
    ("clock", |r| {
        Some(format!(
            "{}; read pair {}, resolution {}",
            r.clock.describe(),
            time_ns(r.clock.overhead_ns),
            time_ns(r.clock.resolution_ns)
        ))
    }),
    ("clocksource", |r| r.environment.clocksource.clone()),
    ("frequency", |r| {
        let e = &r.environment;
        join_some(&[
            e.governor.as_ref().map(|g| format!("governor {g}")),
            e.cpufreq_driver.clone(),
            e.boost.as_ref().map(|b| format!("boost {b}")),
        ])
    }),
];

/// Mitigations, C library, perf counters, kernel command line, settings and the tool.
const SECURITY_AND_TOOLS: &[(&str, Field)] = &[
    ("mitigations", |r| {
        let v: Vec<String> = r
            .environment
            .vulnerabilities
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        (!v.is_empty()).then(|| v.join("\n"))
    }),
    ("C library, seccomp", |r| {
        join_some(&[
            r.environment.libc_version.clone(),
            r.environment
                .seccomp
                .as_ref()
                .map(|s| format!("seccomp {s}")),
        ])
    }),
    ("perf", |r| {
        let e = &r.environment;
        join_some(&[
            e.perf_event_paranoid
                .map(|p| format!("perf_event_paranoid {p}")),
            (!e.perf_pmus.is_empty()).then(|| format!("PMUs: {}", e.perf_pmus.join(", "))),
        ])
    }),
    ("counters that work", |r| {
        let ok: Vec<&str> = r
            .environment
            .counters
            .iter()
            .filter(|(_, c)| c.supported)
            .map(|(n, _)| n.as_str())
            .collect();
        (!ok.is_empty()).then(|| ok.join(", "))
    }),
    ("counters unsupported here", |r| {
        unsupported_counters(&r.environment.counters)
    }),
    ("kernel command line", |r| {
        r.environment.kernel_cmdline.clone()
    }),
    ("settings", |r| {
        let s = &r.settings;
        Some(format!(
            "{}precision ±{}%, budget {} s per experiment, {}{}",
            if s.quick { "--quick, " } else { "" },
            sig3(s.precision * 100.0),
            sig3(s.budget_s),
            crate::report::env_table::where_pinned(s),
            s.load
                .as_deref()
                .map(|l| format!(", --load {l}"))
                .unwrap_or_default()
        ))
    }),
    ("oslab", |r| {
        join_some(&[
            Some(r.oslab_version.clone()),
            r.environment.oslab_commit.clone(),
            r.environment.rustc_version.clone(),
        ])
    }),
    ("hostname", |r| r.environment.hostname.clone()),
];

/// The machine last: one column per run. With several runs the rows that differ come first,
/// highlighted, and the rows identical in every run fold into one `<details>` line.
pub(super) fn section(runs: &[Run]) -> String {
    let mut s = String::from("<section id=\"environment\">\n<h2>Environment</h2>\n");
    let mut head = String::from("<thead><tr><th></th>");
    for r in runs {
        let _ = write!(head, "<th>{}</th>", run_name(r));
    }
    head.push_str("</tr></thead>\n");
    let (mut differ, mut same) = (String::new(), String::new());
    let (mut same_rows, mut highlighted) = (0, 0);
    for (name, field) in MACHINE.iter().chain(SYSTEM).chain(SECURITY_AND_TOOLS) {
        let values: Vec<Option<String>> = runs.iter().map(field).collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let differs = runs.len() > 1 && values.windows(2).any(|w| w[0] != w[1]);
        // When and under which tag a run was taken always differ: they name the columns.
        let naming = matches!(*name, "started" | "tag");
        let row = row(name, &values, differs && !naming);
        highlighted += usize::from(differs && !naming);
        if runs.len() > 1 && !differs {
            same.push_str(&row);
            same_rows += 1;
        } else {
            differ.push_str(&row);
        }
    }
    let _ = write!(
        s,
        "<table class=\"env\" data-table=\"environment\">\n{head}<tbody>\n{differ}</tbody></table>\n"
    );
    if runs.len() > 1 {
        s.push_str(if highlighted > 0 {
            "<p class=\"note\">Highlighted rows differ between the runs.</p>\n"
        } else {
            "<p class=\"note\">The machines are described alike: no row differs but when and \
             under which tag each run was taken.</p>\n"
        });
        if same_rows > 0 {
            let _ = write!(
                s,
                "<details class=\"same\" data-same-rows=\"{same_rows}\"><summary>same {}: {same_rows} \
                 row{}</summary>\n<table class=\"env\" data-table=\"environment-same\">\n{head}\
                 <tbody>\n{same}</tbody></table></details>\n",
                if runs.len() == 2 {
                    "on both".to_string()
                } else {
                    format!("on all {}", runs.len())
                },
                if same_rows == 1 { "" } else { "s" }
            );
        }
    }
    s.push_str("</section>\n");
    s
}

fn row(name: &str, values: &[Option<String>], highlight: bool) -> String {
    let mut s = format!(
        "<tr{}><th>{}</th>",
        if highlight { " class=\"differs\"" } else { "" },
        esc(name)
    );
    for v in values {
        let _ = write!(
            s,
            "<td>{}</td>",
            v.as_ref()
                .map_or("–".into(), |v| esc(v).replace('\n', "<br>"))
        );
    }
    s.push_str("</tr>\n");
    s
}

/// The counters that do not work here, those with the same reason listed once: "10 counters
/// (cycles, instructions, …): no hardware PMU is exposed here (…)".
pub(super) fn unsupported_counters(
    counters: &std::collections::BTreeMap<String, crate::model::env::CounterAvailability>,
) -> Option<String> {
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, c) in counters.iter().filter(|(_, c)| !c.supported) {
        let reason = c.reason.as_deref().unwrap_or("no reason recorded");
        match by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, names)) => names.push(name),
            None => by_reason.push((reason, vec![name])),
        }
    }
    let lines: Vec<String> = by_reason
        .iter()
        .map(|(reason, names)| match names.as_slice() {
            [one] => format!("{one}: {reason}"),
            many => format!("{} counters ({}): {reason}", many.len(), many.join(", ")),
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

pub(super) fn join_some(parts: &[Option<String>]) -> Option<String> {
    let p: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
    (!p.is_empty()).then(|| p.join(", "))
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`.
pub(super) fn utc(t: f64) -> String {
    let full = crate::report::format::utc(t);
    match full.get(..16) {
        Some(minutes) => format!("{minutes} UTC"),
        None => full,
    }
}

//! `oslab report`: one or more stored runs as one self-contained HTML page (inline CSS and
//! SVG, no script, no network) — the machine table a lab write-up starts with, the cost ladder,
//! per family one chart per metric across variants, the distribution of samples, curves for
//! parameter sweeps, and with two or more runs the comparison of the first with each other.
//!
//! Charts are hand-written SVG (see `charts.rs` for why). Every chart carries
//! `data-chart="<id>"`; a metric that could not be measured here gets a
//! `data-unsupported="<id>"` paragraph saying "unsupported here: <reason>" instead of an
//! empty chart. Layout is described in docs/report.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::charts::{self, Bar, Point, Scale, Strip, esc};
use super::format::{per_op, sig3, time_ns, time_range_ns, times};
use super::ladder::{self, label};
use super::pool::{Pooled, pool};
use crate::analysis::compare::{DEFAULT_NOISE, Metric, RunComparison, compare_runs, default_noise};
use crate::analysis::percentile;
use crate::analysis::result::{ResultFigures, figures};
use crate::experiment;
use crate::model::{ExperimentResult, Run, Status};

/// At most this many samples are drawn per result in a strip plot (evenly spaced in run
/// order); the box and median always use every sample.
pub const MAX_DOTS: usize = 150;

/// Width of the per-family metric charts (two to a row).
const SMALL: f64 = 560.0;

/// One metric of the per-family charts.
struct MetricDef {
    id: &'static str,
    title: &'static str,
    kind: Kind,
}

enum Kind {
    Time,
    /// `misses / loads` from two counters, as a percentage.
    Rate(&'static str, &'static str),
    /// A getrusage field per operation, multiplied by the factor (µs → ns for CPU times).
    Rusage(&'static str, f64),
    /// The largest `maxrss_kb` seen.
    MaxRss,
}

/// The twelve metric charts of every family (the thirteenth figure is the distribution).
const METRICS: &[MetricDef] = &[
    MetricDef {
        id: "time",
        title: "Time per operation (median, whisker: 95% CI of the median)",
        kind: Kind::Time,
    },
    MetricDef {
        id: "l1d_miss_rate",
        title: "L1D load miss rate (% of L1D loads)",
        kind: Kind::Rate("L1-dcache-load-misses", "L1-dcache-loads"),
    },
    MetricDef {
        id: "dtlb_miss_rate",
        title: "dTLB load miss rate (% of dTLB loads)",
        kind: Kind::Rate("dTLB-load-misses", "dTLB-loads"),
    },
    MetricDef {
        id: "utime",
        title: "User CPU time per operation (getrusage)",
        kind: Kind::Rusage("utime_us", 1000.0),
    },
    MetricDef {
        id: "stime",
        title: "System CPU time per operation (getrusage)",
        kind: Kind::Rusage("stime_us", 1000.0),
    },
    MetricDef {
        id: "minflt",
        title: "Minor page faults per operation",
        kind: Kind::Rusage("minflt", 1.0),
    },
    MetricDef {
        id: "majflt",
        title: "Major page faults per operation",
        kind: Kind::Rusage("majflt", 1.0),
    },
    MetricDef {
        id: "maxrss",
        title: "Maximum resident set size (largest seen)",
        kind: Kind::MaxRss,
    },
    MetricDef {
        id: "inblock",
        title: "Blocks read from storage per operation (inblock, 512 B each)",
        kind: Kind::Rusage("inblock", 1.0),
    },
    MetricDef {
        id: "oublock",
        title: "Blocks written to storage per operation (oublock, 512 B each)",
        kind: Kind::Rusage("oublock", 1.0),
    },
    MetricDef {
        id: "nvcsw",
        title: "Voluntary context switches per operation",
        kind: Kind::Rusage("nvcsw", 1.0),
    },
    MetricDef {
        id: "nivcsw",
        title: "Involuntary context switches per operation",
        kind: Kind::Rusage("nivcsw", 1.0),
    },
];

/// The ids of the per-family metric charts, in page order.
pub fn metric_ids() -> Vec<&'static str> {
    METRICS.iter().map(|m| m.id).collect()
}

/// A metric's value for one result: `Err` says why it could not be measured.
fn metric_value(
    m: &MetricDef,
    r: &ExperimentResult,
    f: &ResultFigures,
) -> Result<Option<f64>, String> {
    match m.kind {
        Kind::Time => Ok(f.stats.as_ref().map(|s| s.median)),
        Kind::Rate(misses, loads) => {
            let get = |name: &str| match f.counters.get(name) {
                Some(c) if c.status == "ok" => Ok(c.per_op),
                Some(c) if c.status == "unsupported" => Err(format!(
                    "{name}: {}",
                    c.reason.as_deref().unwrap_or("could not be opened")
                )),
                Some(c) => Err(format!(
                    "{name}: {}",
                    c.reason.as_deref().unwrap_or("not counted")
                )),
                None if r.samples.is_empty() => Ok(None),
                None => Err(format!("{name}: not counted in this experiment")),
            };
            let (m, l) = (get(misses)?, get(loads)?);
            Ok(match (m, l) {
                (Some(m), Some(l)) if l > 0.0 => Some(100.0 * m / l),
                _ => None,
            })
        }
        Kind::Rusage(field, factor) => Ok(f.rusage.get(field).map(|v| v * factor)),
        Kind::MaxRss => Ok(f.rusage.get("maxrss_kb").copied()),
    }
}

fn metric_fmt(m: &MetricDef) -> fn(f64) -> String {
    match m.kind {
        Kind::Time | Kind::Rusage(_, 1000.0) => time_ns,
        Kind::Rate(..) => |v| format!("{}%", sig3(v)),
        Kind::MaxRss => kib,
        Kind::Rusage(..) => per_op,
    }
}

fn kib(v: f64) -> String {
    if v >= 1024.0 * 1024.0 {
        format!("{} GiB", sig3(v / 1024.0 / 1024.0))
    } else if v >= 1024.0 {
        format!("{} MiB", sig3(v / 1024.0))
    } else {
        format!("{} KiB", sig3(v))
    }
}

/// A result with its figures and the run it belongs to.
struct Item<'a> {
    run_index: usize,
    run_id: i64,
    result: &'a ExperimentResult,
    figures: ResultFigures,
}

/// The page for `runs` (the first is the baseline of any comparison).
pub fn render(runs: &[Run]) -> String {
    // Repeats (`run --repeat`) are shown as one result per configuration over the pooled
    // samples of its processes; the comparison section compares processes.
    let pooled: Vec<Vec<Pooled>> = runs.iter().map(|run| pool(&run.results)).collect();
    let items: Vec<Vec<Item>> = runs
        .iter()
        .zip(&pooled)
        .enumerate()
        .map(|(i, (run, pooled))| {
            pooled
                .iter()
                .map(|p| Item {
                    run_index: i,
                    run_id: run.id,
                    result: &p.result,
                    figures: p.figures(),
                })
                .collect()
        })
        .collect();
    let multi = runs.len() > 1;
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>oslab report: run {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n",
        esc(&ids.join(", "))
    );
    let _ = write!(
        out,
        "<h1>oslab report</h1>\n<p class=\"lead\">{} — what the operating system costs a \
         program, measured by oslab {}. Times are per operation; whiskers are 95% bootstrap \
         confidence intervals of the median. Hover a bar or a point for its exact figures.</p>\n",
        runs.iter().map(run_name).collect::<Vec<_>>().join("; "),
        esc(env!("CARGO_PKG_VERSION"))
    );
    out.push_str(&toc(runs));
    out.push_str(&environment_section(runs));
    if multi {
        out.push_str("<div id=\"ladder\"></div>\n");
    }
    for run in runs {
        out.push_str(&ladder_section(run, multi));
    }
    if multi {
        out.push_str(&comparison_section(runs));
    }
    out.push_str(&families_section(runs, &items));
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn run_name(r: &Run) -> String {
    let tag = r
        .tag
        .as_deref()
        .map(|t| format!(" [{}]", esc(t)))
        .unwrap_or_default();
    format!("run {}{tag}", r.id)
}

fn toc(runs: &[Run]) -> String {
    let mut s = String::from(
        "<nav><a href=\"#environment\">Environment</a> · <a href=\"#ladder\">Cost ladder</a>",
    );
    if runs.len() > 1 {
        s.push_str(" · <a href=\"#comparison\">Comparison</a>");
    }
    for family in families(runs) {
        let _ = write!(
            s,
            " · <a href=\"#family-{}\">{}</a>",
            esc(&family),
            esc(&family)
        );
    }
    s.push_str("</nav>\n");
    s
}

/// Families in registry order (unknown ones, from imported runs, last in run order).
fn families(runs: &[Run]) -> Vec<String> {
    let mut seen: Vec<(usize, String)> = Vec::new();
    for r in runs.iter().flat_map(|r| &r.results) {
        let family = family_of(&r.experiment).to_string();
        if !seen.iter().any(|(_, f)| *f == family) {
            let pos = experiment::REGISTRY
                .iter()
                .position(|e| e.family() == family)
                .unwrap_or(usize::MAX);
            seen.push((pos, family));
        }
    }
    seen.sort_by_key(|(p, _)| *p);
    seen.into_iter().map(|(_, f)| f).collect()
}

fn family_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(f, _)| f)
}

// ---------------------------------------------------------------------------------------------
// Environment

fn environment_section(runs: &[Run]) -> String {
    type Field = fn(&Run) -> Option<String>;
    let rows: &[(&str, Field)] = &[
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
        ("architecture", |r| Some(r.environment.arch.clone())),
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
                "{}{}; read pair {}, resolution {}",
                r.clock.source,
                r.clock
                    .tsc_hz
                    .map(|h| format!(" at {:.3} GHz", h / 1e9))
                    .unwrap_or_default(),
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
            let no: Vec<String> = r
                .environment
                .counters
                .iter()
                .filter(|(_, c)| !c.supported)
                .map(|(n, c)| format!("{n}: {}", c.reason.as_deref().unwrap_or("no reason")))
                .collect();
            (!no.is_empty()).then(|| no.join("\n"))
        }),
        ("kernel command line", |r| {
            r.environment.kernel_cmdline.clone()
        }),
        ("settings", |r| {
            let s = &r.settings;
            Some(format!(
                "{}precision ±{}%, budget {} s per experiment, CPU {}{}",
                if s.quick { "--quick, " } else { "" },
                sig3(s.precision * 100.0),
                sig3(s.budget_s),
                crate::platform::cpu::format_list(&s.cpus),
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
    let mut s = String::from(
        "<section id=\"environment\">\n<h2>Environment</h2>\n<table class=\"env\" \
         data-table=\"environment\">\n<thead><tr><th></th>",
    );
    for r in runs {
        let _ = write!(s, "<th>{}</th>", run_name(r));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for (name, field) in rows {
        let values: Vec<Option<String>> = runs.iter().map(field).collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let differs = runs.len() > 1 && values.windows(2).any(|w| w[0] != w[1]);
        let _ = write!(
            s,
            "<tr{}><th>{}</th>",
            if differs && *name != "started" {
                " class=\"differs\""
            } else {
                ""
            },
            esc(name)
        );
        for v in values {
            let _ = write!(
                s,
                "<td>{}</td>",
                v.map_or("–".into(), |v| esc(&v).replace('\n', "<br>"))
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    if runs.len() > 1 {
        s.push_str("<p class=\"note\">Highlighted rows differ between the runs.</p>\n");
    }
    s.push_str("</section>\n");
    s
}

fn join_some(parts: &[Option<String>]) -> Option<String> {
    let p: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
    (!p.is_empty()).then(|| p.join(", "))
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`.
fn utc(t: f64) -> String {
    let full = super::format::utc(t);
    match full.get(..16) {
        Some(minutes) => format!("{minutes} UTC"),
        None => full,
    }
}

// ---------------------------------------------------------------------------------------------
// Cost ladder

fn ladder_section(run: &Run, multi: bool) -> String {
    let l = ladder::ladder(run);
    let mut s = format!(
        "<section id=\"{}\">\n<h2>Cost ladder{}</h2>\n",
        if multi {
            format!("ladder-{}", run.id)
        } else {
            "ladder".into()
        },
        if multi {
            format!(": {}", run_name(run))
        } else {
            String::new()
        }
    );
    if l.rungs.is_empty() {
        s.push_str(
            "<p class=\"empty\">No headline result was measured in this run.</p>\n</section>\n",
        );
        return s;
    }
    let _ = writeln!(
        s,
        "<p class=\"caption\">Time per operation, log scale, cheapest first; whiskers: 95% CI \
         of the median{}. Derived rungs (purple) are computed from two results.</p>",
        if l.baseline.is_some() {
            "; labels give each figure as a multiple of a plain function call \
             (syscall.function_call)"
        } else {
            ""
        }
    );
    let bars: Vec<Bar> = l
        .rungs
        .iter()
        .map(|r| {
            let multiple = l
                .baseline
                .filter(|b| *b > 0.0)
                .map(|b| format!(" · {} call", times(r.median / b)))
                .unwrap_or_default();
            let class = if r.status.starts_with("derived") {
                if r.status.contains("suspect") {
                    "derived suspect"
                } else {
                    "derived"
                }
            } else {
                r.status.as_str()
            };
            Bar {
                label: format!("{} (per {})", r.label, r.per),
                value: (r.median > 0.0).then_some(r.median),
                whisker: r.ci,
                text: if r.median > 0.0 {
                    format!("{}{multiple}", time_ns(r.median))
                } else {
                    format!("{} (≤ 0: not drawn on a log scale)", time_ns(r.median))
                },
                title: format!(
                    "{}: median {} per {}, 95% CI {}, {} samples, {}",
                    r.label,
                    time_ns(r.median),
                    r.per,
                    r.ci.map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, r.median)),
                    r.samples,
                    r.status
                ),
                class: class.into(),
            }
        })
        .collect();
    s.push_str(&charts::hbars(
        &format!("ladder-run{}", run.id),
        "cost ladder: time per operation on a log scale",
        &bars,
        Scale::Log,
        &time_ns,
        charts::WIDTH,
    ));
    for (label, explain) in &l.explanations {
        let _ = write!(
            s,
            "\n<p class=\"note\"><b>{}</b>: {}</p>",
            esc(label),
            esc(explain)
        );
    }
    s.push_str("\n</section>\n");
    s
}

// ---------------------------------------------------------------------------------------------
// Comparison

fn comparison_section(runs: &[Run]) -> String {
    let mut s = String::from("<section id=\"comparison\">\n<h2>Comparison</h2>\n");
    let _ = writeln!(
        s,
        "<p class=\"caption\">A = {} against each other run; B/A above 1 means B costs more. \
         A change is claimed when the Mann-Whitney p &lt; 0.05 and the 95% CI of B/A lies \
         outside the noise band: ±{}%, or the runs' precision target when larger (as \
         <code>oslab compare</code>).</p>",
        run_name(&runs[0]),
        sig3(DEFAULT_NOISE * 100.0)
    );
    for b in &runs[1..] {
        let (noise, _) = default_noise(&runs[0], b);
        let cmp = compare_runs(&runs[0], b, &Metric::Time, noise);
        s.push_str(&comparison_table(&runs[0], b, &cmp));
    }
    s.push_str(&grouped_bars(runs));
    s.push_str("</section>\n");
    s
}

fn comparison_table(a: &Run, b: &Run, cmp: &RunComparison) -> String {
    let mut s = format!("<h3>{} vs {}</h3>\n", run_name(a), run_name(b));
    if cmp.environment_diff.is_empty() && cmp.settings_diff.is_empty() {
        s.push_str("<p class=\"note\">Same environment and settings.</p>\n");
    } else {
        s.push_str("<details><summary>What differs between the machines and settings (");
        let _ = write!(
            s,
            "{} fields)</summary>\n<table class=\"diff\"><thead><tr><th>field</th><th>A</th>\
             <th>B</th></tr></thead><tbody>\n",
            cmp.environment_diff.len() + cmp.settings_diff.len()
        );
        for d in cmp.environment_diff.iter().chain(&cmp.settings_diff) {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&d.field),
                esc(d.a.as_deref().unwrap_or("–")),
                esc(d.b.as_deref().unwrap_or("–"))
            );
        }
        s.push_str("</tbody></table></details>\n");
    }
    let _ = writeln!(
        s,
        "<table class=\"cmp\" data-table=\"comparison-{}-{}\"><thead><tr><th>experiment</th>\
         <th>A</th><th>B</th><th>B/A</th><th>95% CI</th><th>p</th><th>verdict</th></tr>\
         </thead><tbody>",
        a.id, b.id
    );
    let ratio = |x: f64| {
        if x.is_finite() {
            format!("{x:.3}")
        } else {
            "–".into()
        }
    };
    for p in &cmp.pairs {
        let mut name = p.experiment.clone();
        for (k, v) in &p.params {
            let _ = write!(name, " {k}={v}");
        }
        match &p.comparison {
            Some(c) => {
                let class = match c.verdict.as_str() {
                    "faster" => "faster",
                    "slower" => "slower",
                    _ => "same",
                };
                let _ = writeln!(
                    s,
                    "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                     <td>{}</td><td>{}</td><td>{}{}</td></tr>",
                    esc(&name),
                    time_ns(c.a),
                    time_ns(c.b),
                    ratio(c.ratio),
                    c.ci.map_or("–".into(), |(lo, hi)| format!(
                        "{} – {}",
                        ratio(lo),
                        ratio(hi)
                    )),
                    c.p.map_or("–".into(), |p| if p < 1e-4 {
                        format!("{p:.1e}")
                    } else {
                        format!("{p:.4}")
                    }),
                    c.verdict.as_str(),
                    if c.highlight { " !!" } else { "" }
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "<tr><td>{}</td><td colspan=\"6\">not measured on one side</td></tr>",
                    esc(&name)
                );
            }
        }
    }
    s.push_str("</tbody></table>\n");
    if !cmp.unpaired.is_empty() {
        s.push_str("<ul class=\"unpaired\">");
        for u in &cmp.unpaired {
            let _ = write!(
                s,
                "<li>{} measured only in {}{}</li>",
                esc(&u.experiment),
                if u.only_in == "a" { "A" } else { "B" },
                u.other_status
                    .map(|st| format!(" (the other run: {st})"))
                    .unwrap_or_default()
            );
        }
        s.push_str("</ul>\n");
    }
    s
}

/// Time per operation of every result, one bar per run side by side.
fn grouped_bars(runs: &[Run]) -> String {
    let mut keys: Vec<(String, BTreeMap<String, String>, String)> = Vec::new();
    for r in runs.iter().flat_map(|r| &r.results) {
        if !keys
            .iter()
            .any(|(e, p, _)| *e == r.experiment && *p == r.params)
        {
            keys.push((r.experiment.clone(), r.params.clone(), label(r)));
        }
    }
    let mut bars = Vec::new();
    for (experiment, params, name) in &keys {
        for (i, run) in runs.iter().enumerate() {
            let found = run
                .results
                .iter()
                .find(|r| r.experiment == *experiment && r.params == *params);
            let f = found.map(figures);
            let median = f.as_ref().and_then(|f| f.stats.as_ref()).map(|s| s.median);
            bars.push(Bar {
                label: if i == 0 { name.clone() } else { String::new() },
                value: median.filter(|m| *m > 0.0),
                whisker: f.as_ref().and_then(|f| f.ci),
                text: match (found, median) {
                    (_, Some(m)) => format!("{} · run {}", time_ns(m), run.id),
                    (Some(r), None) => format!("{} in run {}", r.status.as_str(), run.id),
                    (None, None) => format!("not in run {}", run.id),
                },
                title: format!(
                    "{name}, {}: {}",
                    run_name(run),
                    median.map_or("no samples".into(), time_ns)
                ),
                class: format!("s{}", i % 6),
            });
        }
    }
    let mut s = String::from(
        "<h3>Time per operation, side by side</h3>\n<p class=\"caption\">Median per run \
         (log scale), whisker: 95% CI. ",
    );
    for (i, run) in runs.iter().enumerate() {
        let _ = write!(
            s,
            "<span class=\"key s{}\"></span> {} ",
            i % 6,
            run_name(run)
        );
    }
    s.push_str("</p>\n");
    s.push_str(&charts::hbars(
        "compare-grouped",
        "time per operation per run, side by side",
        &bars,
        Scale::Log,
        &time_ns,
        charts::WIDTH,
    ));
    s.push('\n');
    s
}

// ---------------------------------------------------------------------------------------------
// Families

fn families_section(runs: &[Run], items: &[Vec<Item>]) -> String {
    let multi = runs.len() > 1;
    let mut s = String::new();
    for family in families(runs) {
        let members: Vec<&Item> = items
            .iter()
            .flatten()
            .filter(|i| family_of(&i.result.experiment) == family)
            .collect();
        // Variants in registry order, then run order; one row per run within a variant.
        let mut ordered = members.clone();
        ordered.sort_by_key(|i| {
            (
                experiment::REGISTRY
                    .iter()
                    .position(|e| e.name == i.result.experiment)
                    .unwrap_or(usize::MAX),
                label(i.result),
                i.run_index,
            )
        });
        let name = |i: &Item| {
            if multi {
                format!("{} (run {})", label(i.result), i.run_id)
            } else {
                label(i.result)
            }
        };
        let _ = write!(
            s,
            "<section class=\"family\" id=\"family-{f}\" data-family=\"{f}\">\n<h2>{f}</h2>\n",
            f = esc(&family)
        );
        s.push_str(&results_table(&ordered, &name));
        s.push_str("<div class=\"grid\">\n");
        for m in METRICS {
            s.push_str(&metric_chart(&family, m, &ordered, &name));
        }
        s.push_str("</div>\n");
        s.push_str(&distribution(&family, &ordered, &name));
        s.push_str(&sweeps(&family, &ordered, multi));
        s.push_str(&facts_and_loads(&ordered, &name));
        s.push_str("</section>\n");
    }
    s
}

fn results_table(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = String::from(
        "<table class=\"results\"><thead><tr><th>experiment</th><th>median</th><th>95% CI</th>\
         <th>samples</th><th>status</th><th>warnings</th></tr></thead><tbody>\n",
    );
    for i in items {
        let r = i.result;
        let median = i.figures.stats.as_ref().map(|st| st.median);
        let mut warnings: Vec<String> = Vec::new();
        if r.status != Status::Ok {
            warnings.push(format!(
                "{}: {}",
                r.status.as_str(),
                r.reason.as_deref().unwrap_or("no reason recorded")
            ));
        }
        for c in r.validation.iter().filter(|c| !c.ok) {
            warnings.push(format!("check failed: {} — {}", c.check, c.detail));
        }
        let _ = writeln!(
            s,
            "<tr class=\"{}\" data-result=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td><span class=\"status {}\">{}</span></td><td>{}</td></tr>",
            r.status.as_str(),
            esc(&label(r)),
            esc(&name(i)),
            median.map_or("–".into(), |m| format!("{} / {}", time_ns(m), esc(op(r)))),
            match (median, i.figures.ci) {
                (Some(m), Some((lo, hi))) => time_range_ns(lo, hi, m),
                _ => "–".into(),
            },
            r.samples.len(),
            r.status.as_str(),
            r.status.as_str(),
            warnings
                .iter()
                .map(|w| format!("<div class=\"warning\">{}</div>", esc(w)))
                .collect::<String>()
        );
    }
    s.push_str("</tbody></table>\n");
    s
}

fn op(r: &ExperimentResult) -> &str {
    r.unit.strip_prefix("ns/").unwrap_or(&r.unit)
}

fn metric_chart(
    family: &str,
    m: &MetricDef,
    items: &[&Item],
    name: &dyn Fn(&Item) -> String,
) -> String {
    let id = format!("{family}-{}", m.id);
    let fmt = metric_fmt(m);
    let mut figures: Vec<(&Item, Result<Option<f64>, String>)> = items
        .iter()
        .map(|i| (*i, metric_value(m, i.result, &i.figures)))
        .collect();
    // Results without samples (failed, unsupported) have nothing to show in any chart.
    figures.retain(|(i, _)| !i.result.samples.is_empty());
    let mut s = format!(
        "<figure class=\"metric\" data-metric=\"{}\" data-family=\"{}\"><figcaption>{}</figcaption>",
        m.id,
        esc(family),
        esc(m.title)
    );
    if figures.is_empty() {
        s.push_str("<p class=\"empty\">Nothing measured.</p></figure>\n");
        return s;
    }
    if figures.iter().all(|(_, v)| v.is_err()) {
        let mut reasons: Vec<String> = Vec::new();
        for (_, v) in &figures {
            if let Err(e) = v
                && !reasons.contains(e)
            {
                reasons.push(e.clone());
            }
        }
        let _ = writeln!(
            s,
            "<p class=\"unsupported\" data-unsupported=\"{}\">unsupported here: {}</p></figure>",
            esc(&id),
            esc(&reasons.join("; "))
        );
        return s;
    }
    let bars: Vec<Bar> = figures
        .iter()
        .map(|(i, v)| {
            let whisker = match m.kind {
                Kind::Time => i.figures.ci,
                _ => None,
            };
            let (value, text) = match v {
                Ok(Some(x)) => (Some(*x), fmt(*x)),
                Ok(None) => (None, "–".into()),
                Err(e) => (None, format!("unsupported here: {e}")),
            };
            Bar {
                label: name(i),
                value,
                whisker,
                text: truncate_text(&text, 60),
                title: format!("{}: {}", name(i), text),
                class: i.result.status.as_str().into(),
            }
        })
        .collect();
    let scale = match m.kind {
        Kind::Time => Scale::suited(bars.iter().filter_map(|b| b.value)),
        _ => Scale::Linear,
    };
    s.push_str(&charts::hbars(
        &id,
        &format!("{family}: {}", m.title),
        &bars,
        scale,
        &fmt,
        SMALL,
    ));
    if scale == Scale::Log {
        s.push_str("<p class=\"note\">log scale</p>");
    }
    s.push_str("</figure>\n");
    s
}

fn truncate_text(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

fn distribution(family: &str, items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut rows = Vec::new();
    let mut thinned = false;
    for i in items.iter().filter(|i| !i.result.samples.is_empty()) {
        let values: Vec<f64> = i.result.samples.iter().map(|s| s.ns_per_op).collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let n = values.len();
        let shown: Vec<f64> = if n > MAX_DOTS {
            thinned = true;
            (0..MAX_DOTS).map(|k| values[k * n / MAX_DOTS]).collect()
        } else {
            values
        };
        let (q1, median, q3) = (
            percentile(&sorted, 25.0),
            percentile(&sorted, 50.0),
            percentile(&sorted, 75.0),
        );
        let o = &i.figures.outliers;
        rows.push(Strip {
            label: name(i),
            title: format!(
                "{}: {} samples{}, quartiles {} / {} / {}, {} outliers (Tukey)",
                name(i),
                n,
                if n > MAX_DOTS {
                    format!(" ({MAX_DOTS} drawn)")
                } else {
                    String::new()
                },
                time_ns(q1),
                time_ns(median),
                time_ns(q3),
                o.total()
            ),
            shown,
            q1,
            median,
            q3,
        });
    }
    if rows.is_empty() {
        return String::new();
    }
    let scale = Scale::suited(rows.iter().flat_map(|r| r.shown.iter().copied()));
    let mut s = format!(
        "<figure class=\"distribution\" data-metric=\"distribution\" data-family=\"{}\">\
         <figcaption>Distribution of samples: time per operation of every sample{} — box: \
         quartiles, line: median{}</figcaption>",
        esc(family),
        if scale == Scale::Log {
            ", log scale"
        } else {
            ""
        },
        if thinned {
            format!(
                "; results with more than {MAX_DOTS} samples show {MAX_DOTS} of them, evenly \
                 spaced in run order (the box uses all)"
            )
        } else {
            String::new()
        }
    );
    s.push_str(&charts::strips(
        &format!("{family}-distribution"),
        &format!("{family}: distribution of samples"),
        &rows,
        scale,
        &time_ns,
    ));
    s.push_str("</figure>\n");
    s
}

/// Results of one experiment in one run that differ in exactly one numeric parameter, with at
/// least three values: drawn as a curve of the median against that parameter.
fn sweeps(family: &str, items: &[&Item], multi: bool) -> String {
    let mut s = String::new();
    let mut groups: Vec<((usize, &str), Vec<&Item>)> = Vec::new();
    for i in items.iter().filter(|i| i.figures.stats.is_some()) {
        let key = (i.run_index, i.result.experiment.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    for ((_, experiment), members) in groups {
        for curve in sweep_curves(&members) {
            let mut points = curve.points;
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            let run = if multi {
                format!(" (run {})", members[0].run_id)
            } else {
                String::new()
            };
            let series = if curve.series.is_empty() {
                String::new()
            } else {
                format!(", {}", curve.series)
            };
            let id = format!(
                "{family}-sweep-{experiment}-{}{}{}",
                curve.param,
                if curve.series.is_empty() {
                    String::new()
                } else {
                    format!("-{}", curve.series.replace([' ', '='], "-"))
                },
                members[0].run_id
            );
            let _ = write!(
                s,
                "<figure class=\"sweep\" data-metric=\"sweep\" data-family=\"{}\"><figcaption>{} \
                 against {}{}{}: median time per {} (whisker: 95% CI)</figcaption>",
                esc(family),
                esc(experiment),
                esc(&curve.param),
                esc(&series),
                esc(&run),
                esc(op(members[0].result))
            );
            s.push_str(&charts::curve(
                &id,
                &format!(
                    "{experiment}{series}: time per operation against {}",
                    curve.param
                ),
                &points,
                &curve.param,
                &time_ns,
            ));
            s.push_str("</figure>\n");
        }
    }
    s
}

/// The figures measured besides the timed operation (`Routine::facts`) and what each
/// background load recorded, as tables under the family's charts.
fn facts_and_loads(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = String::new();
    let with_facts: Vec<&&Item> = items
        .iter()
        .filter(|i| !i.result.facts.is_empty())
        .collect();
    if !with_facts.is_empty() {
        // One row per experiment, one column per figure (in order of first appearance);
        // a cell's tooltip is how that experiment measured it, and the legend below says it
        // once per figure.
        let mut columns: Vec<(&str, &str, &str)> = Vec::new();
        for f in with_facts.iter().flat_map(|i| &i.result.facts) {
            if !columns.iter().any(|(n, _, _)| *n == f.name) {
                columns.push((&f.name, &f.unit, &f.note));
            }
        }
        s.push_str(
            "<h3>Other figures</h3>\n<div class=\"wide\"><table class=\"facts\"><thead><tr>\
             <th>experiment</th>",
        );
        for (fact, unit, _) in &columns {
            let _ = write!(
                s,
                "<th>{}<br><span class=\"note\">{}</span></th>",
                esc(fact),
                esc(unit)
            );
        }
        s.push_str("</tr></thead><tbody>\n");
        for i in &with_facts {
            let _ = write!(s, "<tr><td>{}</td>", esc(&name(i)));
            for (fact, _, _) in &columns {
                match i.result.facts.iter().find(|f| f.name == *fact) {
                    Some(f) if f.value.is_finite() => {
                        let _ = write!(
                            s,
                            "<td title=\"{}\">{}</td>",
                            esc(&f.note),
                            esc(&sig3(f.value))
                        );
                    }
                    Some(f) => {
                        let _ = write!(s, "<td title=\"{}\">–</td>", esc(&f.note));
                    }
                    None => s.push_str("<td></td>"),
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table></div>\n<dl class=\"facts\">\n");
        for (fact, _, note) in &columns {
            let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", esc(fact), esc(note));
        }
        s.push_str("</dl>\n");
    }
    for i in items {
        let Some(load) = &i.result.load else {
            continue;
        };
        let _ = writeln!(
            s,
            "<details class=\"load\"><summary>{} ran beside load <code>{}</code></summary>\
             <table class=\"env\"><tbody>",
            esc(&name(i)),
            esc(&load.kind)
        );
        for (k, v) in &load.details {
            let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        s.push_str("</tbody></table></details>\n");
    }
    s
}

/// One curve of a sweep: the numeric parameter on the x axis, and the values of the other
/// parameters that differ (`order=random`), empty when none does.
struct Curve {
    param: String,
    series: String,
    points: Vec<Point>,
}

/// The curves among the results of one experiment in one run: exactly one differing parameter
/// must be numeric with at least three values; every combination of the other differing
/// parameters (prefault_sweep's `order`) is a curve of its own.
fn sweep_curves(members: &[&Item]) -> Vec<Curve> {
    if members.len() < 3 {
        return Vec::new();
    }
    // A parameter missing from a result (an older run) takes its default.
    let info = experiment::find(&members[0].result.experiment);
    let value = |m: &Item, k: &str| -> Option<String> {
        m.result
            .params
            .get(k)
            .cloned()
            .or_else(|| info.and_then(|i| i.param(k)).map(|p| p.default.to_string()))
    };
    let keys: std::collections::BTreeSet<&String> = members
        .iter()
        .flat_map(|m| m.result.params.keys())
        .collect();
    let differing: Vec<&String> = keys
        .into_iter()
        .filter(|k| members.iter().any(|m| value(m, k) != value(members[0], k)))
        .collect();
    let numeric = |k: &str| {
        members.iter().all(|m| {
            value(m, k)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .is_some_and(f64::is_finite)
        })
    };
    let numeric_keys: Vec<&&String> = differing.iter().filter(|k| numeric(k)).collect();
    let [param] = numeric_keys.as_slice() else {
        return Vec::new();
    };
    let others: Vec<&String> = differing.iter().copied().filter(|k| k != *param).collect();
    let mut curves: Vec<Curve> = Vec::new();
    for m in members {
        let series = others
            .iter()
            .map(|k| format!("{k}={}", value(m, k).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(" ");
        let (Some(x), Some(stats)) = (
            value(m, param).and_then(|v| v.trim().parse::<f64>().ok()),
            m.figures.stats.as_ref(),
        ) else {
            continue;
        };
        let point = Point {
            x,
            y: stats.median,
            whisker: m.figures.ci,
            title: format!("{param}={}: {}", sig3(x), time_ns(stats.median)),
        };
        match curves.iter_mut().find(|c| c.series == series) {
            Some(c) => c.points.push(point),
            None => curves.push(Curve {
                param: (**param).clone(),
                series,
                points: vec![point],
            }),
        }
    }
    curves.retain(|c| {
        let mut xs: Vec<f64> = c.points.iter().map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs.len() >= 3
    });
    curves
}

const CSS: &str = r#"
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg:#fff;--panel:#f6f8fb;--ok:#3a6fd8;--suspect:#d98a1c;--failed:#c23b3b;--derived:#7a4fc2}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:28px;margin:0 0 4px}
h2{font-size:21px;margin:36px 0 8px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:16px;margin:22px 0 6px}
.lead{color:var(--muted);margin:0 0 12px}
nav{font-size:14px;margin:8px 0 0;color:var(--muted)}
nav a{color:var(--ok);text-decoration:none}
table{border-collapse:collapse;font-size:13px;margin:8px 0;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
thead th{background:var(--panel);font-weight:600}
table.env tbody th{width:200px;color:var(--muted);font-weight:500}
table.env tr.differs td{background:#fff4d6}
td{font-variant-numeric:tabular-nums}
.caption,.note,figcaption{color:var(--muted);font-size:13px}
figure{margin:0;background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:10px 12px}
figcaption{font-weight:600;color:var(--fg);margin-bottom:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:14px;margin:14px 0}
figure.distribution,figure.sweep{margin:14px 0}
div.wide{overflow-x:auto}
table.facts td,table.facts th{white-space:nowrap}
dl.facts{font-size:13px;color:var(--muted);display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0 14px}
dl.facts dt{font-family:ui-monospace,monospace}
dl.facts dd{margin:0}
svg.chart{width:100%;height:auto;display:block;font-size:11px}
svg .axis{stroke:#8a93a3}
svg .grid{stroke:#e3e7ee}
svg .tick{fill:var(--muted)}
svg .label{fill:var(--fg)}
svg .value{fill:var(--fg)}
svg .bar{fill:var(--ok)}
svg .bar.suspect{fill:var(--suspect)}
svg .bar.failed{fill:var(--failed)}
svg .bar.derived{fill:var(--derived);fill-opacity:.75}
svg .bar.s0{fill:#3a6fd8}svg .bar.s1{fill:#e07b39}svg .bar.s2{fill:#2e9e6a}svg .bar.s3{fill:#a04fc2}svg .bar.s4{fill:#c23b3b}svg .bar.s5{fill:#6b7280}
svg .whisker{stroke:#1d2330;stroke-width:1.3;fill:none}
svg .box{fill:#dfe7f8;stroke:#8aa4dc}
svg .median{stroke:#1d2330;stroke-width:2}
svg .dots circle{fill:var(--ok);fill-opacity:.45}
svg .line{stroke:var(--ok);stroke-width:2;fill:none}
svg .point{fill:var(--ok)}
.unsupported{color:var(--muted);font-style:italic;margin:12px 0}
.empty{color:var(--muted)}
.status{font-weight:600}
.status.suspect{color:var(--suspect)}.status.failed{color:var(--failed)}.status.unsupported{color:var(--muted)}
.warning{color:#8a4b00;font-size:12px}
tr.slower td{background:#fde8e8}tr.faster td{background:#e6f6ec}
.key{display:inline-block;width:10px;height:10px;border-radius:2px;margin-left:8px}
.key.s0{background:#3a6fd8}.key.s1{background:#e07b39}.key.s2{background:#2e9e6a}.key.s3{background:#a04fc2}.key.s4{background:#c23b3b}.key.s5{background:#6b7280}
details{margin:6px 0;font-size:13px}
code{font-size:13px}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0.0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_700_000_000.0), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn twelve_metrics() {
        assert_eq!(metric_ids().len(), 12);
    }
}

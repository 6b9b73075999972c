//! From a command line to the list of experiment runs: which experiments, with which
//! parameters, under which name and beside which load.
//!
//! - A parameter given once (`--param size=4K`) pins it. A comma-separated list
//!   (`--param batch=1,8,64`) sweeps it: one result per value.
//! - A parameter an experiment declares in `ExperimentInfo::sweep` is swept over those values
//!   unless the user pinned it (`pagefault.prefault_sweep` measures every batch size by
//!   default).
//! - With `--quick`, `ExperimentInfo::quick_params` replace the defaults the user did not set.
//! - A suite (`--suite mmap-lab`) is a list of named configurations: an experiment, the
//!   parameters that define it, and optionally a load. The user's `--param` applies to every
//!   configuration, except a parameter that defines one.

use super::{ExperimentInfo, ParamKind, Params, find};
use crate::model::copies::{Copies, Mode};
use crate::model::error::UserError;

/// One experiment run to perform.
#[derive(Clone)]
pub struct Planned {
    pub info: &'static ExperimentInfo,
    pub params: Params,
    /// The suite's name for this configuration.
    pub label: Option<String>,
    /// The load the configuration names (`memory`), overriding the run's `--load`.
    pub load: Option<&'static str>,
}

/// A named list of configurations run together.
pub struct Suite {
    pub name: &'static str,
    pub summary: &'static str,
    pub configs: &'static [Config],
    /// The counts of copies every configuration is measured with when the user gives no
    /// `--copies` (`1,N`: one copy, then one per CPU, as UnixBench reports), if any.
    pub copies: Option<&'static str>,
}

/// One configuration of a suite.
pub struct Config {
    pub label: &'static str,
    pub experiment: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    pub load: Option<&'static str>,
}

/// Every suite oslab knows.
pub static SUITES: &[&Suite] = &[&MMAP_LAB, &UNIXBENCH, &FILEMICRO];

/// The classic mmap lab: six configurations of `mmap.access`, and three of them again under
/// memory pressure.
pub static MMAP_LAB: Suite = Suite {
    name: "mmap-lab",
    summary: "mmap.access in the nine configurations of the classic mmap lab: anonymous, \
              anonymous shared, file shared (sequential, random, populated, memset+msync), and \
              three of them again under --load memory",
    configs: &[
        Config {
            label: "anonymous",
            experiment: "mmap.access",
            params: &[("backing", "anon_private")],
            load: None,
        },
        Config {
            label: "anonymous shared",
            experiment: "mmap.access",
            params: &[("backing", "anon_shared")],
            load: None,
        },
        Config {
            label: "file shared",
            experiment: "mmap.access",
            params: &[("backing", "file_shared")],
            load: None,
        },
        Config {
            label: "file shared random",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("pattern", "random")],
            load: None,
        },
        Config {
            label: "file shared populate",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("populate", "true")],
            load: None,
        },
        Config {
            label: "file shared memset+msync",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("prepare", "memset_msync")],
            load: None,
        },
        Config {
            label: "anonymous, memory load",
            experiment: "mmap.access",
            params: &[("backing", "anon_private")],
            load: Some("memory"),
        },
        Config {
            label: "file shared, memory load",
            experiment: "mmap.access",
            params: &[("backing", "file_shared")],
            load: Some("memory"),
        },
        Config {
            label: "file shared populate, memory load",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("populate", "true")],
            load: Some("memory"),
        },
    ],
    copies: None,
};

/// UnixBench's System Benchmarks Index: its twelve tests, labelled as its report names them
/// (byte-unixbench's `Run`, the `index` set), in the order of its report.
pub static UNIXBENCH: Suite = Suite {
    name: "unixbench",
    summary: "UnixBench's System Benchmarks Index (byte-unixbench 5.1.3): its twelve tests with \
              its workloads, units and SPARCstation 20-61 baselines, and the index score",
    configs: &[
        Config {
            label: "Dhrystone 2 using register variables",
            experiment: "unixbench.dhrystone",
            params: &[],
            load: None,
        },
        Config {
            label: "Double-Precision Whetstone",
            experiment: "unixbench.whetstone",
            params: &[],
            load: None,
        },
        Config {
            label: "Execl Throughput",
            experiment: "unixbench.execl",
            params: &[],
            load: None,
        },
        Config {
            label: "File Copy 1024 bufsize 2000 maxblocks",
            experiment: "unixbench.file_copy",
            params: &[("bufsize", "1024"), ("maxblocks", "2000")],
            load: None,
        },
        Config {
            label: "File Copy 256 bufsize 500 maxblocks",
            experiment: "unixbench.file_copy",
            params: &[("bufsize", "256"), ("maxblocks", "500")],
            load: None,
        },
        Config {
            label: "File Copy 4096 bufsize 8000 maxblocks",
            experiment: "unixbench.file_copy",
            params: &[("bufsize", "4096"), ("maxblocks", "8000")],
            load: None,
        },
        Config {
            label: "Pipe Throughput",
            experiment: "unixbench.pipe",
            params: &[],
            load: None,
        },
        Config {
            label: "Pipe-based Context Switching",
            experiment: "unixbench.context1",
            params: &[],
            load: None,
        },
        Config {
            label: "Process Creation",
            experiment: "unixbench.spawn",
            params: &[],
            load: None,
        },
        Config {
            label: "Shell Scripts (1 concurrent)",
            experiment: "unixbench.shell",
            params: &[("concurrency", "1")],
            load: None,
        },
        Config {
            label: "Shell Scripts (8 concurrent)",
            experiment: "unixbench.shell",
            params: &[("concurrency", "8")],
            load: None,
        },
        Config {
            label: "System Call Overhead",
            experiment: "unixbench.syscall",
            params: &[],
            load: None,
        },
    ],
    copies: Some("1,N"),
};

/// Every planned configuration once per count of `copies` (configuration by configuration,
/// the counts in the order given), each recording its copies in its parameters
/// (`model::copies`). Threads are refused, in one line, for an experiment that cannot run
/// its copies that way.
pub fn with_copies(
    planned: Vec<Planned>,
    counts: &[u32],
    mode: Mode,
) -> Result<Vec<Planned>, UserError> {
    let mut out = Vec::with_capacity(planned.len() * counts.len());
    for p in planned {
        if mode == Mode::Threads
            && let Some(why) = super::thread_copies_refusal(p.info)
        {
            return Err(UserError::BadOption(format!(
                "--copy-mode threads: {why}; run its copies as processes"
            )));
        }
        for &count in counts {
            let mut map = p.params.as_map().clone();
            Copies { count, mode }.record(&mut map);
            out.push(Planned {
                params: Params::from_map(map),
                ..p.clone()
            });
        }
    }
    Ok(out)
}
/// Filebench's filemicro personalities at Filebench's defaults, one configuration each,
/// labelled with the workload file's name (docs/filemicro.md).
pub static FILEMICRO: Suite = Suite {
    name: "filemicro",
    summary: "Filebench's filemicro personalities (workloads/filemicro_*.f and openfiles.f) \
              at Filebench's defaults, one thread each; the report adds a Filebench-like \
              summary (ops/s, MB/s, ms/op, blocks read and written per op)",
    configs: &[
        Config {
            label: "filemicro_create (createandalloc)",
            experiment: "filemicro.create",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_createfiles",
            experiment: "filemicro.createfiles",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_createrand",
            experiment: "filemicro.createrand",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_delete",
            experiment: "filemicro.delete",
            params: &[],
            load: None,
        },
        Config {
            label: "openfiles",
            experiment: "filemicro.openfiles",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rread",
            experiment: "filemicro.rread",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rwrite",
            experiment: "filemicro.rwrite",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rwritedsync",
            experiment: "filemicro.rwritedsync",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rwritefsync",
            experiment: "filemicro.rwritefsync",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqread",
            experiment: "filemicro.seqread",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwrite",
            experiment: "filemicro.seqwrite",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwriterand",
            experiment: "filemicro.seqwriterand",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwriterandvargam",
            experiment: "filemicro.seqwriterandvargam",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwriterandvartab",
            experiment: "filemicro.seqwriterandvartab",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_statfile",
            experiment: "filemicro.statfile",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_writefsync",
            experiment: "filemicro.writefsync",
            params: &[],
            load: None,
        },
    ],
    copies: None,
};

pub fn find_suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().copied().find(|s| s.name == name)
}

/// Split `--param` values into lists: `a,b,c` is three values, except for a path, which may
/// hold a comma.
fn values<'a>(info: &ExperimentInfo, name: &str, value: &'a str) -> Vec<&'a str> {
    match info.param(name).map(|p| p.kind) {
        Some(ParamKind::Path) | None => vec![value],
        Some(_) => value.split(',').map(str::trim).collect(),
    }
}

/// The runs for `experiments` with the user's parameters (`given`, in command-line order; a
/// later one wins), each sweep expanded.
/// The most configurations one experiment's sweeps may give: each is measured for seconds,
/// and a few lines of `--param` lists multiply into millions (found by fuzzing the command
/// line: three lists of 250 values took gigabytes before a worker started).
pub const MAX_CONFIGURATIONS: usize = 1000;

pub fn expand(
    experiments: &[&'static ExperimentInfo],
    given: &[(String, String)],
    quick: bool,
) -> Result<Vec<Planned>, UserError> {
    let mut planned = Vec::new();
    for &info in experiments {
        planned.extend(expand_one(info, &[], given, quick, None, None)?);
    }
    Ok(planned)
}

/// The runs of a suite, in its order.
pub fn expand_suite(
    suite: &Suite,
    given: &[(String, String)],
    quick: bool,
) -> Result<Vec<Planned>, UserError> {
    let mut planned = Vec::new();
    for config in suite.configs {
        // A suite of another system's experiments says why they do not run here.
        let info =
            find(config.experiment).ok_or_else(|| match super::not_found(config.experiment) {
                UserError::NotOnThisSystem {
                    experiment,
                    system,
                    why,
                } => UserError::NotOnThisSystem {
                    experiment: format!("suite {} ({experiment})", suite.name),
                    system,
                    why,
                },
                _ => UserError::UnknownExperiment(format!(
                    "{} (in suite {})",
                    config.experiment, suite.name
                )),
            })?;
        if let Some((name, _)) = given
            .iter()
            .find(|(name, _)| config.params.iter().any(|(n, _)| n == name))
        {
            return Err(UserError::BadOption(format!(
                "--param {name}: the configurations of suite {} set it; run {} with --param \
                 instead of the suite",
                suite.name, config.experiment
            )));
        }
        planned.extend(expand_one(
            info,
            config.params,
            given,
            quick,
            Some(config.label),
            config.load,
        )?);
    }
    Ok(planned)
}

fn expand_one(
    info: &'static ExperimentInfo,
    fixed: &[(&str, &str)],
    given: &[(String, String)],
    quick: bool,
    label: Option<&str>,
    load: Option<&'static str>,
) -> Result<Vec<Planned>, UserError> {
    // Each parameter's values, with the last `--param` of a name winning.
    let mut axes: Vec<(&str, Vec<String>)> = Vec::new();
    for spec in info.params {
        let name = spec.name;
        let list: Vec<String> = if let Some((_, v)) = fixed.iter().find(|(n, _)| *n == name) {
            vec![v.to_string()]
        } else if let Some((_, v)) = given.iter().rev().find(|(n, _)| n == name) {
            values(info, name, v)
                .into_iter()
                .map(String::from)
                .collect()
        } else if let Some((_, list)) = info.sweep.iter().find(|(n, _)| *n == name) {
            list.iter().map(|v| v.to_string()).collect()
        } else if let Some((_, v)) = info.quick_params.iter().find(|(n, _)| quick && *n == name) {
            vec![v.to_string()]
        } else {
            vec![spec.default.to_string()]
        };
        if list.iter().any(String::is_empty) {
            return Err(UserError::BadParam {
                experiment: info.name.to_string(),
                name: name.to_string(),
                value: list.join(","),
                expected: "no empty value in the list".into(),
            });
        }
        axes.push((name, list));
    }
    // Declared sweeps vary outermost, in their declared order; then the others.
    let rank = |name: &str| {
        info.sweep
            .iter()
            .position(|(n, _)| *n == name)
            .unwrap_or(usize::MAX)
    };
    axes.sort_by_key(|(name, _)| rank(name));
    let configurations = axes
        .iter()
        .try_fold(1usize, |n, (_, list)| n.checked_mul(list.len()))
        .filter(|&n| n <= MAX_CONFIGURATIONS);
    if configurations.is_none() {
        let counts: Vec<String> = axes
            .iter()
            .filter(|(_, list)| list.len() > 1)
            .map(|(name, list)| format!("{} {name}", list.len()))
            .collect();
        return Err(UserError::BadOption(format!(
            "{}: sweeping {} gives more than {MAX_CONFIGURATIONS} configurations; sweep fewer \
             values at a time",
            info.name,
            counts.join(" × ")
        )));
    }

    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, list) in &axes {
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                list.iter().map(move |v| {
                    let mut c = combo.clone();
                    c.push((name.to_string(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|combo| {
            Ok(Planned {
                info,
                params: Params::resolve(info.name, info.params, &combo)?,
                label: label.map(String::from),
                load,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Found by fuzzing the command line: three 250-value lists planned 15 million runs.
    // Of the POSIX experiments, which Windows builds leave out.
    #[cfg(unix)]
    #[test]
    fn sweeps_are_bounded() {
        let info = find("pagefault.anon").unwrap();
        let list = |v: &str| vec![v; 250].join(",");
        let (order, populate, thp) = (list("seq"), list("none"), list("on"));
        let lists = given(&[("order", &order), ("populate", &populate), ("thp", &thp)]);
        let Err(err) = expand(&[info], &lists, false) else {
            panic!("750 values planned");
        };
        let err = err.to_string();
        assert!(err.contains("250 thp × 250 order × 250 populate"), "{err}");
        assert!(err.contains("more than 1000 configurations"), "{err}");
        let fits = given(&[("order", &list("seq")), ("thp", "on,off")]);
        assert_eq!(expand(&[info], &fits, false).unwrap().len(), 500);
    }

    // Of the POSIX experiments, which Windows builds leave out.
    #[cfg(unix)]
    #[test]
    fn a_list_sweeps_a_parameter() {
        let info = find("syscall.read").unwrap();
        let call = ("entry", "call");
        let planned = expand(&[info], &given(&[("size", "1,8, 64"), call]), false).unwrap();
        let bytes: Vec<&str> = planned.iter().map(|p| p.params.str("size")).collect();
        assert_eq!(bytes, ["1", "8", "64"]);
        let one = expand(
            &[info],
            &given(&[("size", "1,8"), ("size", "4"), call]),
            false,
        )
        .unwrap();
        assert_eq!(one.len(), 1, "the last --param of a name wins");
        let both = expand(&[info], &given(&[("size", "1,8")]), false).unwrap();
        let combos: Vec<(&str, &str)> = both
            .iter()
            .map(|p| (p.params.str("entry"), p.params.str("size")))
            .collect();
        assert_eq!(
            combos,
            [
                ("call", "1"),
                ("call", "8"),
                ("inline", "1"),
                ("inline", "8")
            ],
            "the declared sweep varies outermost"
        );
        assert!(expand(&[info], &given(&[("size", "1,,8")]), false).is_err());
        assert!(expand(&[info], &given(&[("size", "1,x")]), false).is_err());
    }

    #[test]
    fn no_parameters_means_one_run() {
        let info = find("syscall.function_call").unwrap();
        let planned = expand(&[info], &[], true).unwrap();
        assert_eq!(planned.len(), 1);
        assert!(planned[0].label.is_none());
    }

    // Of the POSIX experiments, which Windows builds leave out.
    #[cfg(unix)]
    #[test]
    fn syscall_rungs_are_measured_on_both_paths() {
        let rungs: Vec<_> = crate::experiment::REGISTRY
            .iter()
            .copied()
            .filter(|e| e.family() == "syscall" && e.param("entry").is_some())
            .collect();
        assert_eq!(
            rungs.len(),
            8,
            "every rung that enters the kernel but getppid_libc"
        );
        let planned = expand(&rungs, &[], true).unwrap();
        assert_eq!(planned.len(), 2 * rungs.len(), "each rung twice");
        for pair in planned.chunks(2) {
            assert_eq!(pair[0].info.name, pair[1].info.name);
            assert_eq!(pair[0].params.str("entry"), "call", "the headline first");
            assert_eq!(pair[1].params.str("entry"), "inline");
        }
        let libc = expand(&rungs, &given(&[("entry", "libc")]), false).unwrap();
        assert_eq!(libc.len(), rungs.len(), "a pinned path is measured once");
        let all = expand(&rungs, &given(&[("entry", "call,inline,libc")]), false).unwrap();
        assert_eq!(all.len(), 3 * rungs.len());
        assert!(expand(&rungs, &given(&[("entry", "trap")]), false).is_err());
        let fixed = find("syscall.function_call").unwrap();
        assert_eq!(expand(&[fixed], &[], false).unwrap().len(), 1);
    }

    // Of the POSIX experiments, which Windows builds leave out.
    #[cfg(unix)]
    #[test]
    fn suites_name_their_configurations() {
        for suite in SUITES {
            for config in suite.configs {
                let info = find(config.experiment)
                    .unwrap_or_else(|| panic!("{}: {}", suite.name, config.experiment));
                for (name, value) in config.params {
                    let spec = info
                        .param(name)
                        .unwrap_or_else(|| panic!("{}: no parameter {name}", config.label));
                    assert!(spec.kind.check(value).is_ok(), "{}", config.label);
                }
            }
            let labels: Vec<_> = suite.configs.iter().map(|c| c.label).collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(labels, unique, "labels are unique");
        }
        assert!(find_suite("mmap-lab").is_some());
        assert!(find_suite("nosuch").is_none());
    }
}

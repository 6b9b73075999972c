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

pub use super::suites::{Config, SUITES, Suite, Timing, find_suite};

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

/// The runs of a suite, in its order. `swap`: the machine has swap (or the run makes some); without it the configurations
/// whose load forbids swap (`swap=off`) are left out, being the same as their neighbours.
pub fn expand_suite(
    suite: &Suite,
    given: &[(String, String)],
    timing: Timing,
    swap: bool,
) -> Result<Vec<Planned>, UserError> {
    let quick = timing.quick;
    if let (Some(n), None) = (timing.passes, suite.passes) {
        return Err(UserError::BadOption(format!(
            "--passes {n}: suite {} is not sampled in timed passes; drop --passes (--suite \
             unixbench is)",
            suite.name
        )));
    }
    let mut planned = Vec::new();
    for config in suite.configs {
        // Without swap on the machine, a configuration that forbids it is the one beside it.
        if !swap && config.load.is_some_and(|l| l.ends_with("swap=off")) {
            continue;
        }
        let info = find(config.experiment).ok_or_else(|| {
            UserError::UnknownExperiment(format!("{} (in suite {})", config.experiment, suite.name))
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
        let mut configs = expand_one(
            info,
            config.params,
            given,
            quick,
            Some(config.label),
            config.load,
        )?;
        if let Some(passes) = suite.passes {
            for p in &mut configs {
                let mut map = p.params.as_map().clone();
                passes(info.name, timing).record(&mut map);
                p.params = Params::from_map(map);
            }
        }
        planned.extend(configs);
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

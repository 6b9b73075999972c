//! The path into the kernel on the ladder. A system-call rung is measured on two paths by
//! default (`entry=call`: the trap instruction in a called function, what programs pay, the
//! headline; `entry=inline`: the instruction inline in the timed loop, the floor) and on
//! libc's wrapper on request (`entry=libc`). The ladder shows one rung per call result, with
//! the other paths and the gap `call − inline` beside it, and the CPU's return-stack
//! mitigations, which make that gap (docs/syscall-path.md).

use std::collections::BTreeMap;

use crate::analysis::bootstrap::two_sample_ci;
use crate::analysis::processes::paired_ratio_interval;
use crate::analysis::result::{CI_RESAMPLES, CI_SEED, ResultFigures};
use crate::model::ExperimentResult;
use crate::model::env::Environment;
use crate::report::format::{time_ns, wrap};

/// The parameter that names the path.
pub const ENTRY: &str = "entry";

/// Experiments that are another experiment measured on a named path: the older name of a
/// configuration, which joins its rung like the configuration itself would.
const ALIASES: &[(&str, &str, &str)] = &[("syscall.getppid_libc", "syscall.getppid", "libc")];

/// The CPU vulnerabilities whose mitigations tax a return or an indirect call, and so the
/// called path: AMD's speculative return stack overflow ("Safe RET" makes every `ret` in the
/// kernel a call to a thunk), retbleed (untrained returns) and spectre v2 (retpolines).
pub const PATH_MITIGATIONS: &[&str] = &["spec_rstack_overflow", "retbleed", "spectre_v2"];

/// The gap between the called and the inline path of one rung.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    /// `call − inline`, ns per operation (medians).
    pub ns: f64,
    /// The gap as a share of the inline figure (0.5 = the called path costs 50% more).
    pub share: f64,
    /// 95% interval of the difference: from the ratios of the processes each round ran of the
    /// two paths (`paired`; `analysis::processes::paired_ratio_interval`), else the bootstrap
    /// of the difference of one process's medians.
    pub ci: Option<(f64, f64)>,
    pub paired: bool,
}

impl Gap {
    /// `+338 ns +51%`.
    pub fn text(&self) -> String {
        let sign = if self.ns >= 0.0 { "+" } else { "−" };
        let pct = (100.0 * self.share).abs();
        let digits = if pct >= 10.0 { 0 } else { 1 };
        format!("{sign}{} {sign}{pct:.digits$}%", time_ns(self.ns.abs()))
    }

    /// [`Gap::text`] and, when it comes from the rounds' pairs, its interval as shares of the
    /// inline median `inline`: `+4.00 ns +4.0% (+2.0…+6.3%)`.
    pub fn text_with(&self, inline: f64) -> String {
        match self.ci {
            Some((lo, hi)) if self.paired && inline > 0.0 => {
                let pct = |x: f64| {
                    let p = 100.0 * x / inline;
                    let sign = if p >= 0.0 { "+" } else { "−" };
                    format!("{sign}{:.1}", p.abs())
                };
                format!("{} ({}…{}%)", self.text(), pct(lo), pct(hi))
            }
            _ => self.text(),
        }
    }
}

/// The other paths measured for one rung.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Paths {
    /// The median on the inline path.
    pub inline: Option<f64>,
    /// The median through libc's wrapper.
    pub libc: Option<f64>,
    pub gap: Option<Gap>,
}

/// The rung a result belongs to: experiment, parameters other than the path, suite label.
type RungKey<'a> = (&'a str, BTreeMap<&'a str, &'a str>, Option<&'a str>);

/// A result's place on the ladder: the rung it belongs to (experiment, other parameters,
/// suite label) and its path (`None`: the experiment has no path parameter).
fn rung_key(r: &ExperimentResult) -> (RungKey<'_>, Option<&str>) {
    let (experiment, entry) = match ALIASES.iter().find(|(alias, _, _)| *alias == r.experiment) {
        Some((_, experiment, entry)) => (*experiment, Some(*entry)),
        None => (
            r.experiment.as_str(),
            r.params.get(ENTRY).map(String::as_str),
        ),
    };
    let others = r
        .params
        .iter()
        .filter(|(k, _)| k.as_str() != ENTRY)
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    ((experiment, others, r.label.as_deref()), entry)
}

/// What to do with one result on the ladder.
pub enum Place {
    /// A rung of its own, with the other paths found for it.
    Rung(Paths),
    /// Shown on the rung of its called path (index into the list given to [`arrange`]).
    Joined(usize),
}

/// Decide, for each of `figured` (the results on the ladder), whether it is a rung or joins
/// its called path's rung: a result on the inline or libc path joins the result of the same
/// experiment, parameters and suite label on the called path when the run has one.
pub fn arrange(figured: &[(&ExperimentResult, &ResultFigures)]) -> Vec<Place> {
    let keys: Vec<_> = figured.iter().map(|(r, _)| rung_key(r)).collect();
    let called = |key: &RungKey| {
        keys.iter()
            .position(|(k, entry)| k == key && *entry == Some("call"))
    };
    keys.iter()
        .enumerate()
        .map(|(i, (key, entry))| match *entry {
            Some("inline") | Some("libc") => match called(key) {
                Some(c) => Place::Joined(c),
                None => Place::Rung(Paths::default()),
            },
            Some("call") => {
                let sibling = |path: &str| {
                    keys.iter()
                        .position(|(k, e)| k == key && *e == Some(path))
                        .map(|j| figured[j])
                };
                Place::Rung(paths_of(figured[i], sibling("inline"), sibling("libc")))
            }
            _ => Place::Rung(Paths::default()),
        })
        .collect()
}

type Figured<'a> = (&'a ExperimentResult, &'a ResultFigures);

fn paths_of(call: Figured, inline: Option<Figured>, libc: Option<Figured>) -> Paths {
    let median = |f: &ResultFigures| f.stats.as_ref().map(|s| s.median);
    let inline_median = inline.and_then(|(_, f)| median(f));
    let gap = match (median(call.1), inline, inline_median) {
        (Some(c), Some((inline_result, inline_figures)), Some(i)) if i > 0.0 => {
            // From the rounds' pairs where the processes ran in rounds; else (one process)
            // from that process's samples.
            let paired = paired_ratio_interval(&inline_figures.rounds, &call.1.rounds)
                .map(|(lo, hi)| ((lo - 1.0) * i, (hi - 1.0) * i));
            let samples = || {
                let xs: Vec<f64> = call.0.samples.iter().map(|s| s.ns_per_op).collect();
                let ys: Vec<f64> = inline_result.samples.iter().map(|s| s.ns_per_op).collect();
                two_sample_ci(&xs, &ys, |x, y| x - y, 0.95, CI_RESAMPLES, CI_SEED)
            };
            Some(Gap {
                ns: c - i,
                share: (c - i) / i,
                paired: paired.is_some(),
                ci: paired.or_else(samples),
            })
        }
        _ => None,
    };
    Paths {
        inline: inline_median,
        libc: libc.and_then(|(_, f)| median(f)),
        gap,
    }
}

/// The state of the mitigations that tax the called path, as the kernel reports them.
pub fn mitigations(env: &Environment) -> Vec<(String, String)> {
    PATH_MITIGATIONS
        .iter()
        .filter_map(|name| {
            env.vulnerabilities
                .get(*name)
                .map(|state| (name.to_string(), state.clone()))
        })
        .collect()
}

/// The lines under the ladder that say what the path columns are and what this CPU's
/// mitigations are, when some rung has a gap.
pub fn footer(has_gap: bool, mitigations: &[(String, String)]) -> String {
    if !has_gap {
        return String::new();
    }
    let mut text = String::from(
        "median: the called path (entry=call: the system call made from a function, as every \
         program makes it); inline: the trap instruction inline in the measuring loop, the \
         floor; call − inline: what entering the kernel from inside a call costs here, as a \
         share of the floor, with its 95% interval from the rounds' pairs \
         (docs/syscall-path.md, docs/measurement.md).",
    );
    if mitigations.is_empty() {
        text.push_str(" The kernel reports no return-stack mitigation state.");
    } else {
        text.push_str(" The mitigations that tax it on this CPU:");
    }
    let mut out = wrap(&text, 96, "  ", "  ");
    out.push('\n');
    for (name, state) in mitigations {
        out.push_str(&wrap(&format!("{name}: {state}"), 96, "    ", "      "));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;

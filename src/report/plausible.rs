//! What an imported run must look like before it is stored: values a measurement can produce.
//! A fresh run passes these by construction; a hand-edited or damaged export may not, and a
//! bad value stored would poison every comparison with it (a time of 1.7e308 ns, a negative
//! fault count, an experiment this oslab cannot name).

use crate::analysis::processes::MAX_EARLIER_RUNS;
use crate::experiment;
use crate::model::{ExperimentResult, Run, Rusage, Status};

/// The longest sample oslab takes is seconds; a day of one batch is no measurement.
const MAX_ELAPSED_NS: f64 = 86_400e9;
/// Problems listed before the rest is summed up.
const MAX_LISTED: usize = 10;

/// Every problem of `run`, one line each (at most [`MAX_LISTED`], then how many more);
/// empty when it could have been measured.
pub fn problems(run: &Run) -> Vec<String> {
    let mut all = Vec::new();
    if run.results.is_empty() {
        all.push("the run has no results".to_string());
    }
    for (i, r) in run.results.iter().enumerate() {
        result_problems(r, &mut |p| {
            all.push(format!("result {} ({}): {p}", i + 1, r.experiment))
        });
    }
    if all.len() > MAX_LISTED {
        let more = all.len() - MAX_LISTED;
        all.truncate(MAX_LISTED);
        all.push(format!("… and {more} more"));
    }
    all
}

fn result_problems(r: &ExperimentResult, say: &mut dyn FnMut(String)) {
    // An experiment of another system's build (Windows has no fork experiments) is known
    // to the equivalence table: its runs compare as any other.
    if experiment::find(&r.experiment).is_none()
        && crate::model::equivalence::row(&r.experiment).is_none()
    {
        say("this oslab knows no such experiment (`oslab list` names them)".into());
    }
    if matches!(r.status, Status::Ok | Status::Suspect) && r.samples.is_empty() {
        say(format!("status {} but no samples", r.status.as_str()));
    }
    if r.earlier_medians.len() > MAX_EARLIER_RUNS {
        say(format!(
            "{} earlier runs' medians, where a run keeps at most {MAX_EARLIER_RUNS}",
            r.earlier_medians.len()
        ));
    }
    if let Some(m) = r
        .earlier_medians
        .iter()
        .find(|m| !(m.is_finite() && **m > 0.0 && **m <= MAX_ELAPSED_NS))
    {
        say(format!("an earlier run's median of {m} ns per operation"));
    }
    // What the harness may take off a sample's time per operation.
    let c = &r.calibration;
    let floor = -(c.loop_overhead_ns.unwrap_or(0.0) + c.baseline_ns.unwrap_or(0.0).max(0.0) + 1.0);
    for (k, s) in r.samples.iter().enumerate() {
        let k = k + 1;
        if s.ops == 0 {
            say(format!("sample {k} has 0 operations"));
        }
        if !(s.elapsed_ns.is_finite() && (0.0..=MAX_ELAPSED_NS).contains(&s.elapsed_ns)) {
            say(format!(
                "sample {k} took {} ns, which no batch can",
                s.elapsed_ns
            ));
        }
        if !s.ns_per_op.is_finite() || s.ns_per_op < floor {
            say(format!("sample {k} has {} ns per operation", s.ns_per_op));
        }
        let usages = [Some(&s.rusage), s.partner.as_ref(), s.children.as_ref()];
        if let Some(field) = usages.into_iter().flatten().find_map(negative_field) {
            say(format!("sample {k} has a negative {field}"));
        }
        if let Some((name, _)) = s
            .counters
            .iter()
            .find(|(_, v)| v.value.is_some_and(|x| !x.is_finite() || x < 0.0))
        {
            say(format!(
                "sample {k} has a negative or non-finite {name} count"
            ));
        }
    }
}

/// The first getrusage figure below zero: a delta of counters that only grow cannot be.
fn negative_field(r: &Rusage) -> Option<&'static str> {
    let values = r.values();
    Rusage::FIELDS
        .iter()
        .zip(values)
        .find_map(|(name, v)| (v < 0).then_some(*name))
}

#[cfg(test)]
mod tests;

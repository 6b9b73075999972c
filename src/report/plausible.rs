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

/// A day, in seconds: how far ahead of this machine's clock a run may have been stamped
/// (another machine's clock may run ahead; a year ahead is no clock).
const CLOCK_SLACK_S: f64 = 86_400.0;

/// Every problem of `run`, one line each (at most [`MAX_LISTED`], then how many more);
/// empty when it could have been measured.
pub fn problems(run: &Run) -> Vec<String> {
    let mut judge = Judge::new();
    judge.header(run.started_at, run.finished_at);
    for r in &run.results {
        judge.result(r);
    }
    judge.finish()
}

/// The checks of [`problems`] one part at a time, for a run read result by result (`oslab
/// import` streams its document): the header, then each result in order, then `finish`.
/// It keeps only the lines it will list, so its memory does not grow with the run.
pub struct Judge {
    now: f64,
    /// The header's lines, listed first.
    header: Vec<String>,
    listed: Vec<String>,
    more: usize,
    results: usize,
}

impl Judge {
    /// Times are judged against this machine's clock.
    pub fn new() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Self::at(now)
    }

    /// Times are judged against `now` (Unix seconds).
    pub fn at(now: f64) -> Self {
        Self {
            now,
            header: Vec::new(),
            listed: Vec::new(),
            more: 0,
            results: 0,
        }
    }

    fn say(&mut self, line: String) {
        if self.listed.len() < MAX_LISTED {
            self.listed.push(line);
        } else {
            self.more += 1;
        }
    }

    /// The run's own times: 1970 ≤ started ≤ finished ≤ a day from now. Its lines come
    /// first, whether it is called before the results or after them.
    pub fn header(&mut self, started_at: f64, finished_at: Option<f64>) {
        let latest = self.now + CLOCK_SLACK_S;
        if let Some(p) = time_problem("the run started", started_at, latest) {
            self.header.push(p);
        }
        if let Some(f) = finished_at {
            if let Some(p) = time_problem("the run finished", f, latest) {
                self.header.push(p);
            } else if started_at.is_finite() && f < started_at {
                self.header.push(format!(
                    "the run finished at {} before it started at {}",
                    seconds(f),
                    seconds(started_at)
                ));
            }
        }
    }

    /// The next result of the run.
    pub fn result(&mut self, r: &ExperimentResult) {
        self.results += 1;
        let i = self.results;
        let latest = self.now + CLOCK_SLACK_S;
        let mut lines = Vec::new();
        if let Some(p) = time_problem("started", r.started_at, latest) {
            lines.push(p);
        }
        result_problems(r, &mut |p| lines.push(p));
        for p in lines {
            self.say(format!("result {i} ({}): {p}", r.experiment));
        }
    }

    /// Every problem found, one line each (at most [`MAX_LISTED`], then how many more).
    pub fn finish(mut self) -> Vec<String> {
        if self.results == 0 {
            self.header.push("the run has no results".to_string());
        }
        self.header.append(&mut self.listed);
        self.listed = self.header;
        if self.listed.len() > MAX_LISTED {
            self.more += self.listed.len() - MAX_LISTED;
            self.listed.truncate(MAX_LISTED);
        }
        if self.more > 0 {
            self.listed.push(format!("… and {} more", self.more));
        }
        self.listed
    }
}

impl Default for Judge {
    fn default() -> Self {
        Self::new()
    }
}

/// Why `t` (Unix seconds) cannot be when `what` happened: before 1970, after `latest`, or
/// not a number.
fn time_problem(what: &str, t: f64, latest: f64) -> Option<String> {
    if !t.is_finite() || t < 0.0 {
        Some(format!("{what} at {} s, before 1970", seconds(t)))
    } else if t > latest {
        Some(format!(
            "{what} at {} s, more than a day after now ({} s)",
            seconds(t),
            seconds(latest - CLOCK_SLACK_S)
        ))
    } else {
        None
    }
}

/// A time in seconds as a line can hold it: 1e308 in its exponent form, not 309 digits.
fn seconds(t: f64) -> String {
    if t.is_finite() && t.abs() < 1e15 {
        format!("{t:.0}")
    } else {
        format!("{t:e}")
    }
}

/// A number as a line can hold it: 1.7e308 and 1e-300 in their exponent form.
fn compact(x: f64) -> String {
    if x == 0.0 || (x.is_finite() && (1e-3..1e15).contains(&x.abs())) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The time per operation the harness computes from a sample (`measure::sampler`):
/// `(elapsed_ns - timer overhead) / ops - (loop overhead + baseline)`.
fn expected_ns_per_op(c: &crate::model::Calibration, s: &crate::model::Sample) -> (f64, f64) {
    let ops = s.ops as f64;
    let subtract = c.loop_overhead_ns.unwrap_or(0.0) + c.baseline_ns.unwrap_or(0.0);
    let expected = (s.elapsed_ns - c.timer_overhead_ns) / ops - subtract;
    // Rounding is relative to the terms, not to their difference (which may be near 0).
    let scale = s.elapsed_ns.abs() / ops
        + c.timer_overhead_ns.abs() / ops
        + c.loop_overhead_ns.unwrap_or(0.0).abs()
        + c.baseline_ns.unwrap_or(0.0).abs();
    (expected, scale)
}

/// Relative agreement of a sample's ns_per_op with its elapsed_ns and ops.
const NS_PER_OP_TOLERANCE: f64 = 1e-6;

fn result_problems(r: &ExperimentResult, say: &mut dyn FnMut(String)) {
    // An experiment of another system's build (Windows has no fork experiments) is known
    // to the equivalence table: its runs compare as any other.
    if experiment::find(&r.experiment).is_none() && crate::experiment::find(&r.experiment).is_none()
    {
        say("this oslab knows no such experiment (`oslab list` names them)".into());
    }
    if matches!(r.status, Status::Ok | Status::Suspect) && r.samples.is_empty() {
        say(format!("status {} but no samples", r.status.as_str()));
    }
    let earlier = r.earlier_medians.len() + r.earlier_slow_medians.len();
    if earlier > MAX_EARLIER_RUNS {
        say(format!(
            "{earlier} earlier runs' medians, where a run keeps at most {MAX_EARLIER_RUNS}"
        ));
    }
    if let Some(m) = r
        .earlier_medians
        .iter()
        .chain(&r.earlier_slow_medians)
        .find(|m| !(m.is_finite() && **m > 0.0 && **m <= MAX_ELAPSED_NS))
    {
        say(format!("an earlier run's median of {m} ns per operation"));
    }
    if r.earlier_kernel_canaries.len() > r.earlier_medians.len() {
        say(format!(
            "{} earlier runs' kernel canaries for {} earlier runs",
            r.earlier_kernel_canaries.len(),
            r.earlier_medians.len()
        ));
    }
    if let Some(c) = r
        .earlier_kernel_canaries
        .iter()
        .find(|c| !(c.is_finite() && **c > 0.0 && **c <= MAX_ELAPSED_NS))
    {
        say(format!("an earlier run's kernel canary of {c} ns per call"));
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
        } else if s.ops > 0
            && (0.0..=MAX_ELAPSED_NS).contains(&s.elapsed_ns)
            && c.timer_overhead_ns.is_finite()
        {
            let (expected, scale) = expected_ns_per_op(c, s);
            // NaN (an infinite calibration) agrees with nothing.
            let agrees = (s.ns_per_op - expected).abs() <= NS_PER_OP_TOLERANCE * scale;
            if !agrees {
                say(format!(
                    "sample {k} has {} ns per operation where its elapsed_ns, ops and \
                     calibration give {}",
                    compact(s.ns_per_op),
                    compact(expected)
                ));
            }
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

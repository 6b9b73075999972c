//! `oslab profile`'s tables and JSON: for each profiled configuration, where its samples
//! were (the functions, and the parts of the kernel they belong to), what profiling cost, and
//! one table of every configuration's cost split into those parts — for the syscall ladder,
//! whether a call is dear for the kernel's entry and exit or for its work. Between two runs:
//! the functions whose share moved most.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::analysis::profile::{
    Bucket, bucket_shares, folded, function, share_changes, top_functions,
};
use crate::analysis::summarize;
use crate::model::profile::Profile;
use crate::model::{ExperimentResult, Run};
use crate::report::format::{Align, Table, time_ns};
use crate::report::names::label;
use crate::report::pool::{Pooled, pool};

/// Functions listed per configuration.
const TOP: usize = 8;

/// A configuration of a run and the profile one of its processes took.
pub struct Profiled<'a> {
    pub pooled: Pooled,
    pub result: &'a ExperimentResult,
    pub profile: &'a Profile,
}

impl Profiled<'_> {
    /// The cells of the configuration's row of the table of parts: its name, its cost (the
    /// pooled median) and each part's share of the samples, in [`Bucket::ALL`]'s order.
    pub fn parts_row(&self) -> Vec<String> {
        let shares = bucket_shares(&folded(self.profile));
        let cost = self
            .pooled
            .figures()
            .stats
            .map_or("–".to_string(), |s| time_ns(s.median));
        let mut row = vec![label(self.result), cost];
        row.extend(
            Bucket::ALL
                .iter()
                .map(|b| shares.get(b).map_or("–".to_string(), |&s| percent(s))),
        );
        row
    }
}

/// The profiled configurations of `run`, in run order.
pub fn profiled(run: &Run) -> Vec<Profiled<'_>> {
    pool(&run.results)
        .into_iter()
        .filter_map(|pooled| {
            let result = run
                .results
                .iter()
                .find(|r| pooled.is_of(r) && r.profile.is_some())?;
            Some(Profiled {
                profile: result.profile.as_ref()?,
                result,
                pooled,
            })
        })
        .collect()
}

/// The median time per operation of the profiled batches, and of the same process's timed
/// samples, both as timed (nothing subtracted), nanoseconds.
pub fn overhead(result: &ExperimentResult, profile: &Profile) -> Option<(f64, f64)> {
    let profiled = summarize(&profile.batch_ns_per_op)?.median;
    let plain: Vec<f64> = result
        .samples
        .iter()
        .filter(|s| s.ops > 0)
        .map(|s| s.elapsed_ns / s.ops as f64)
        .collect();
    Some((profiled, summarize(&plain)?.median))
}

/// The text `oslab profile` prints for a run.
pub fn render(run: &Run) -> String {
    let profiled = profiled(run);
    if profiled.is_empty() {
        return format!("run {} has no profiles\n", run.id);
    }
    let mut out = String::new();
    for p in &profiled {
        out.push_str(&section(p));
        out.push('\n');
    }
    out.push_str("Where the time goes (share of samples, by the function each was in)\n");
    out.push_str(&buckets_table(&profiled).render(2));
    out
}

fn section(p: &Profiled) -> String {
    let profile = p.profile;
    let mut out = format!("{}\n", label(p.result));
    let mut line = format!(
        "  {} samples of {} at {} Hz",
        profile.samples(),
        profile.event,
        profile.frequency_hz
    );
    if profile.lost > 0 {
        line.push_str(&format!(", {} lost (ring buffer full)", profile.lost));
    }
    if let Some((with, without)) = overhead(p.result, profile) {
        line.push_str(&format!(
            "; profiled {} per op against {} unprofiled ({:+.1}%)",
            time_ns(with),
            time_ns(without),
            (with / without - 1.0) * 100.0
        ));
    }
    out.push_str(&line);
    out.push('\n');
    if let Some(problem) = &profile.problem {
        out.push_str(&format!("  note: {problem}\n"));
    }
    let folded = folded(profile);
    let mut table = Table::new(&[
        ("function", Align::Left),
        ("part", Align::Left),
        ("share", Align::Right),
    ]);
    for (frame, share) in top_functions(&folded, TOP) {
        table.row(vec![
            function(&frame).to_string(),
            Bucket::of(&frame).name().to_string(),
            percent(share),
        ]);
    }
    out.push_str(&table.render(2));
    out
}

fn buckets_table(profiled: &[Profiled]) -> Table {
    let mut header: Vec<(&str, Align)> =
        vec![("configuration", Align::Left), ("cost", Align::Right)];
    header.extend(Bucket::ALL.iter().map(|b| (b.name(), Align::Right)));
    let mut table = Table::new(&header);
    for p in profiled {
        table.row(p.parts_row());
    }
    table
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// The JSON form of [`render`]: per configuration, the profile's figures, its bucket
/// shares, its top functions and its folded stacks.
pub fn json(run: &Run) -> Value {
    let configurations: Vec<Value> = profiled(run)
        .iter()
        .map(|p| {
            let folded = folded(p.profile);
            let shares: BTreeMap<&str, f64> = bucket_shares(&folded)
                .into_iter()
                .map(|(b, s)| (b.name(), s))
                .collect();
            let top: Vec<Value> = top_functions(&folded, TOP)
                .into_iter()
                .map(|(f, s)| json!({"function": function(&f), "part": Bucket::of(&f).name(), "share": s}))
                .collect();
            let (with, without) = overhead(p.result, p.profile).unzip();
            json!({
                "experiment": p.result.experiment,
                "params": p.result.params,
                "label": label(p.result),
                "median_ns": p.pooled.figures().stats.map(|s| s.median),
                "event": p.profile.event,
                "frequency_hz": p.profile.frequency_hz,
                "samples": p.profile.samples(),
                "lost": p.profile.lost,
                "profiled_ns_per_op": with,
                "unprofiled_ns_per_op": without,
                "problem": p.profile.problem,
                "parts": shares,
                "top_functions": top,
                "stacks": p.profile.stacks,
            })
        })
        .collect();
    json!({"run": run.id, "configurations": configurations})
}

/// The functions whose share moved most between two profiles of one configuration.
pub fn changes_table(before: &Profile, after: &Profile) -> Table {
    let mut table = Table::new(&[
        ("function", Align::Left),
        ("part", Align::Left),
        ("A", Align::Right),
        ("B", Align::Right),
        ("B − A", Align::Right),
    ]);
    for (frame, a, b) in share_changes(&folded(before), &folded(after), TOP) {
        table.row(vec![
            function(&frame).to_string(),
            Bucket::of(&frame).name().to_string(),
            percent(a),
            percent(b),
            format!("{:+.1} pts", (b - a) * 100.0),
        ]);
    }
    table
}

/// [`changes_table`] as JSON rows.
pub fn changes_json(before: &Profile, after: &Profile) -> Vec<Value> {
    share_changes(&folded(before), &folded(after), TOP)
        .into_iter()
        .map(|(f, a, b)| json!({"function": function(&f), "part": Bucket::of(&f).name(), "share_a": a, "share_b": b}))
        .collect()
}

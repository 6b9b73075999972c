//! Configurations of one run that differ in one parameter made to be compared — the path into
//! the kernel (`entry`: inline against call), transparent huge pages (`thp`: off against on),
//! where the partner runs (`placement`: same against cross CPU) — and their ratio's interval
//! from the rounds' pairs (`analysis::processes::paired_ratio_interval`): each round measured
//! both, in one process taking their samples in turn (`harness::duet`) or in two processes one
//! after the other, so what the host did in that round cancels in their ratio. Beside it the unpaired interval the same process medians give, so the table shows
//! what pairing bought. `show` prints it; the JSON document has it as `paired`.

use serde::Serialize;

use crate::analysis::processes::{paired_ratio_interval, ratio_between_interval};
use crate::model::pairs::{Compared, compared};
use crate::report::format::{Align, Table, sig3};
use crate::report::pool::Pooled;

/// One pair of configurations and their ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// The configuration's name without the compared parameter (`syscall.getppid`).
    pub configuration: String,
    pub parameter: &'static str,
    /// The baseline value and the other (`inline`, `call`).
    pub a: &'static str,
    pub b: &'static str,
    /// The ratio of the pooled medians, b / a.
    pub ratio: f64,
    /// From the rounds both measured; `None` with fewer than two.
    pub paired: Option<(f64, f64)>,
    /// From the two sets of process medians as if unpaired (Welch on their logarithms).
    pub unpaired: Option<(f64, f64)>,
    /// The rounds both measured.
    pub rounds: usize,
    /// Of those, the rounds that measured both in one process, their samples taken in turn
    /// (`harness::duet`).
    pub in_one_process: usize,
}

/// Every pair of `pooled` configurations of one experiment and label that differ only in one
/// of `model::pairs::PAIRS`'s parameters.
pub fn pairs(pooled: &[Pooled]) -> Vec<Pair> {
    let mut out = Vec::new();
    for a in pooled {
        let found = pooled.iter().find_map(|b| {
            let (ra, rb) = (&a.result, &b.result);
            (ra.experiment == rb.experiment && ra.label == rb.label)
                .then(|| compared(&ra.params, &rb.params))
                .flatten()
                .map(|c| (b, c))
        });
        if let Some(pair) = found.and_then(|(b, c)| pair(a, b, c)) {
            out.push(pair);
        }
    }
    out
}

fn pair(a: &Pooled, b: &Pooled, c: Compared) -> Option<Pair> {
    // The pooled medians alone: the intervals `figures` resamples for are not needed here.
    let (ma, mb) = (a.median()?, b.median()?);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let ratio = mb / ma;
    let both: Vec<usize> = (0..a.rounds.len().min(b.rounds.len()))
        .filter(|&i| a.rounds[i].is_some() && b.rounds[i].is_some())
        .collect();
    let mut params = a.result.params.clone();
    params.remove(c.parameter);
    Some(Pair {
        configuration: crate::report::names::label_of(
            &a.result.experiment,
            &params,
            a.result.label.as_deref(),
        ),
        parameter: c.parameter,
        a: c.a,
        b: c.b,
        ratio,
        paired: paired_ratio_interval(&a.rounds, &b.rounds),
        unpaired: ratio_between_interval(ratio, &a.kept(), &b.kept()),
        rounds: both.len(),
        in_one_process: both
            .iter()
            .filter(|&&i| a.duet.get(i) == Some(&true) && b.duet.get(i) == Some(&true))
            .count(),
    })
}

/// An interval of a ratio as the tables print it (`0.971 – 1.145`), `–` without one.
pub fn range(r: Option<(f64, f64)>) -> String {
    r.map_or("–".into(), |(lo, hi)| format!("{lo:.3} – {hi:.3}"))
}

/// The section of `show`; empty without pairs measured in two rounds or more.
pub fn section(pooled: &[Pooled]) -> String {
    let pairs: Vec<Pair> = pairs(pooled)
        .into_iter()
        .filter(|p| p.paired.is_some())
        .collect();
    if pairs.is_empty() {
        return String::new();
    }
    let mut table = Table::new(&[
        ("configuration", Align::Left),
        ("b / a", Align::Left),
        ("ratio", Align::Right),
        ("paired 95%", Align::Right),
        ("unpaired 95%", Align::Right),
        ("rounds", Align::Right),
        ("in one process", Align::Right),
    ]);
    for p in &pairs {
        table.row(vec![
            p.configuration.clone(),
            format!("{}={} / {}", p.parameter, p.b, p.a),
            sig3(p.ratio),
            range(p.paired),
            range(p.unpaired),
            p.rounds.to_string(),
            p.in_one_process.to_string(),
        ]);
    }
    format!(
        "\nPaired within the run (each round measured both, in one process taking their samples \
         in turn, or in two processes one after the other: the ratio of their medians, round \
         by round, cancels what the host did in that round; unpaired: the same medians as two \
         independent sets)\n\n{}",
        table.render(2)
    )
}

/// The JSON form of the pairs (`paired` in the run document).
pub fn document(pooled: &[Pooled]) -> serde_json::Value {
    serde_json::to_value(pairs(pooled)).unwrap_or_default()
}

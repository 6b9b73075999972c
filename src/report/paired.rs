//! Configurations of one run that differ in one parameter made to be compared — the path into
//! the kernel (`entry`: inline against call), transparent huge pages (`thp`: off against on),
//! where the partner runs (`placement`: same against cross CPU) — and their ratio's interval
//! from the rounds' pairs (`analysis::processes::paired_ratio_interval`): each round ran one
//! process of both, one after the other, so what the host did in that round cancels in their
//! ratio. Beside it the unpaired interval the same process medians give, so the table shows
//! what pairing bought. `show` prints it; the JSON document has it as `paired`.

use serde::Serialize;

use crate::analysis::processes::{paired_ratio_interval, ratio_between_interval};
use crate::report::format::{Align, Table, sig3};
use crate::report::pool::Pooled;

/// The parameters whose values are compared within a run, each with its baseline value first.
const PAIRS: &[(&str, &str, &str)] = &[
    ("entry", "inline", "call"),
    ("thp", "off", "on"),
    ("placement", "same", "cross"),
];

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
}

/// Every pair of `pooled` configurations that differ only in one of [`PAIRS`]'s parameters.
pub fn pairs(pooled: &[Pooled]) -> Vec<Pair> {
    let mut out = Vec::new();
    for a in pooled {
        for &(parameter, a_value, b_value) in PAIRS {
            if a.result.params.get(parameter).map(String::as_str) != Some(a_value) {
                continue;
            }
            let Some(b) = pooled.iter().find(|b| partner(a, b, parameter, b_value)) else {
                continue;
            };
            if let Some(pair) = pair(a, b, parameter, (a_value, b_value)) {
                out.push(pair);
            }
        }
    }
    out
}

/// Whether `b` is `a` with `parameter` set to `value` instead.
fn partner(a: &Pooled, b: &Pooled, parameter: &str, value: &str) -> bool {
    let (ra, rb) = (&a.result, &b.result);
    ra.experiment == rb.experiment
        && ra.label == rb.label
        && rb.params.get(parameter).map(String::as_str) == Some(value)
        && ra.params.len() == rb.params.len()
        && ra
            .params
            .iter()
            .all(|(k, v)| k == parameter || rb.params.get(k) == Some(v))
}

fn pair(
    a: &Pooled,
    b: &Pooled,
    parameter: &'static str,
    (a_value, b_value): (&'static str, &'static str),
) -> Option<Pair> {
    // The pooled medians alone: the intervals `figures` resamples for are not needed here.
    let (ma, mb) = (a.median()?, b.median()?);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let ratio = mb / ma;
    let rounds = a
        .rounds
        .iter()
        .zip(&b.rounds)
        .filter(|(x, y)| x.is_some() && y.is_some())
        .count();
    let mut params = a.result.params.clone();
    params.remove(parameter);
    Some(Pair {
        configuration: crate::report::names::label_of(
            &a.result.experiment,
            &params,
            a.result.label.as_deref(),
        ),
        parameter,
        a: a_value,
        b: b_value,
        ratio,
        paired: paired_ratio_interval(&a.rounds, &b.rounds),
        unpaired: ratio_between_interval(ratio, &a.kept(), &b.kept()),
        rounds,
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
    ]);
    for p in &pairs {
        table.row(vec![
            p.configuration.clone(),
            format!("{}={} / {}", p.parameter, p.b, p.a),
            sig3(p.ratio),
            range(p.paired),
            range(p.unpaired),
            p.rounds.to_string(),
        ]);
    }
    format!(
        "\nPaired within the run (each round ran one process of both, one after the other: the \
         ratio of their medians, round by round, cancels what the host did in that round; \
         unpaired: the same medians as two independent sets)\n\n{}",
        table.render(2)
    )
}

/// The JSON form of the pairs (`paired` in the run document).
pub fn document(pooled: &[Pooled]) -> serde_json::Value {
    serde_json::to_value(pairs(pooled)).unwrap_or_default()
}

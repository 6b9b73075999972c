//! UnixBench's System Benchmarks Index from oslab's results (`oslab run --suite unixbench`).
//!
//! UnixBench (byte-unixbench 5.1.3, `pgms/index.base`) scores each test as its result in its
//! own unit divided by the result of a SPARCstation 20-61 ("George", 1995) in that unit,
//! times 10, and the System Benchmarks Index Score as the geometric mean of the twelve
//! tests' indexes. With several copies (`--copies N`: N workers of a configuration at once),
//! a test's result is the copies' total throughput, N × the unit of the pooled median, as
//! UnixBench sums its copies' counts; one index table and score per number of copies.
//!
//! One oslab operation is one UnixBench loop (`experiment::unixbench`), so the conversion
//! from the median time per operation is exact: lps = 1e9/ns, lpm = 60e9/ns, MWIPS =
//! 1e10/ns (10 million Whetstone instructions per pass), KBps = bufsize/1024 × 1e9/ns.

use serde_json::{Value, json};

use crate::experiment::suites::{Config, UNIXBENCH};
use crate::model::ExperimentResult;
use crate::model::passes::Passes;
use crate::report::format::{Align, Table};
use crate::report::pool::Pooled;

/// The work of one Whetstone pass (`unixbench.whetstone`'s operation) in millions of
/// Whetstone instructions: whets.c's MWIPS is passes × 100 / (10 × seconds), so one pass
/// (x100 = 100) is 10 of them.
pub const WHETSTONE_MWI_PER_PASS: f64 = 10.0;

/// UnixBench's unit of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Loops per second.
    Lps,
    /// Loops per minute (the shell scripts).
    Lpm,
    /// Kilobytes (1024 bytes) copied per second, one loop copying `bufsize` bytes.
    KBps,
    /// Millions of Whetstone instructions per second, one pass being 10 of them.
    Mwips,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Lps => "lps",
            Unit::Lpm => "lpm",
            Unit::KBps => "KBps",
            Unit::Mwips => "MWIPS",
        }
    }

    /// The value in this unit of one copy whose loop takes `ns_per_op`; `bufsize` is the
    /// file copy's bytes per loop (ignored by the other units).
    pub fn of(self, ns_per_op: f64, bufsize: f64) -> f64 {
        let per_second = 1e9 / ns_per_op;
        match self {
            Unit::Lps => per_second,
            Unit::Lpm => 60.0 * per_second,
            Unit::KBps => per_second * bufsize / 1024.0,
            Unit::Mwips => per_second * WHETSTONE_MWI_PER_PASS,
        }
    }
}

/// One test of UnixBench's index: a configuration of `--suite unixbench` (its label, the
/// experiment and the parameters that make it this test) with UnixBench's name, unit and
/// baseline for it.
#[derive(Debug)]
pub struct Test {
    pub config: &'static Config,
    /// UnixBench's name for it (`index.base`, `Run`).
    pub program: &'static str,
    pub unit: Unit,
    /// The SPARCstation 20-61's result in `unit` (`pgms/index.base`).
    pub baseline: f64,
}

impl Test {
    /// As UnixBench's report names it (and `--suite unixbench` labels it).
    pub fn label(&self) -> &'static str {
        self.config.label
    }

    pub fn experiment(&self) -> &'static str {
        self.config.experiment
    }
}

/// The `n`th configuration of `--suite unixbench` as UnixBench's test `program`.
const fn test(n: usize, program: &'static str, unit: Unit, baseline: f64) -> Test {
    Test {
        config: &UNIXBENCH.configs[n],
        program,
        unit,
        baseline,
    }
}

/// UnixBench's index tests in the order of its report, with their baselines.
pub static TESTS: &[Test] = &[
    test(0, "dhry2reg", Unit::Lps, 116_700.0),
    test(1, "whetstone-double", Unit::Mwips, 55.0),
    test(2, "execl", Unit::Lps, 43.0),
    test(3, "fstime", Unit::KBps, 3960.0),
    test(4, "fsbuffer", Unit::KBps, 1655.0),
    test(5, "fsdisk", Unit::KBps, 5800.0),
    test(6, "pipe", Unit::Lps, 12_440.0),
    test(7, "context1", Unit::Lps, 4000.0),
    test(8, "spawn", Unit::Lps, 126.0),
    test(9, "shell1", Unit::Lpm, 42.4),
    test(10, "shell8", Unit::Lpm, 6.0),
    test(11, "syscall", Unit::Lps, 15_000.0),
];

/// The harness parameter a `--copies N` result carries (absent: one copy).
pub const COPIES_PARAM: &str = "copies";

/// The test a result measures, if it is one of the index's.
pub fn test_of(r: &ExperimentResult) -> Option<&'static Test> {
    TESTS.iter().find(|t| {
        t.experiment() == r.experiment
            && t.config
                .params
                .iter()
                .all(|(k, v)| r.params.get(*k).map(String::as_str) == Some(*v))
    })
}

/// The test UnixBench names `program` (`fsdisk`: File Copy 4096), as its `Run` takes it.
pub fn test_named(program: &str) -> Option<&'static Test> {
    TESTS.iter().find(|t| t.program == program)
}

/// How many copies ran at once for `r`.
pub fn copies_of(r: &ExperimentResult) -> u32 {
    r.params
        .get(COPIES_PARAM)
        .and_then(|c| c.parse().ok())
        .filter(|&c| c > 0)
        .unwrap_or(1)
}

/// A configuration's figures, as the index needs them.
#[derive(Debug, Clone)]
pub struct Entry {
    pub test: &'static Test,
    pub copies: u32,
    /// Pooled median time per loop of one copy, and where a rerun's falls (95%).
    pub median_ns: f64,
    pub ci_ns: Option<(f64, f64)>,
    pub status: String,
    /// The file copy's bytes per loop.
    pub bufsize: f64,
    /// UnixBench's statistic over the timed passes, as the time per loop of one copy, when
    /// the configuration was sampled in passes (`model::passes`); the result then comes
    /// from it.
    pub passes: Option<PassesFigure>,
}

/// UnixBench's statistic of a configuration sampled in timed passes.
#[derive(Debug, Clone, Copy)]
pub struct PassesFigure {
    pub passes: Passes,
    /// The passes kept (the best two thirds).
    pub kept: usize,
    /// The copies' geometric-mean rate, as the time per loop of one copy.
    pub ns: f64,
}

/// UnixBench's statistic (its `Run`'s `combinePassResults`) over passes given as each copy's
/// time per loop, pass by pass: each pass's rate is the copies' loops per second summed; the
/// lowest third of the passes (`int(n/3)`, by that rate) is dropped and the rest's rates are
/// averaged geometrically. Returned as the time per loop of one copy, with the passes kept;
/// `None` without a complete pass.
pub fn unixbench_statistic(copies: &[Vec<f64>]) -> Option<(f64, usize)> {
    let passes = copies.iter().map(Vec::len).min()?;
    let mut rates: Vec<f64> = (0..passes)
        .map(|k| copies.iter().map(|c| 1e9 / c[k]).sum::<f64>())
        .collect();
    rates.sort_by(f64::total_cmp);
    let kept = &rates[passes / 3..];
    let rate = geometric_mean(kept)?;
    Some((copies.len() as f64 * 1e9 / rate, kept.len()))
}

impl Entry {
    /// The copies' total in UnixBench's unit.
    pub fn value(&self) -> f64 {
        self.total_of(self.passes.map_or(self.median_ns, |p| p.ns))
    }

    /// The copies' total in UnixBench's unit from oslab's pooled median.
    pub fn median_value(&self) -> f64 {
        self.total_of(self.median_ns)
    }

    /// The copies' total in UnixBench's unit when one copy's loop takes `ns`.
    fn total_of(&self, ns: f64) -> f64 {
        self.copies as f64 * self.test.unit.of(ns, self.bufsize)
    }

    /// The value's interval: a slower loop (the interval's high end) is a lower value.
    pub fn value_range(&self) -> Option<(f64, f64)> {
        let (lo, hi) = self.ci_ns?;
        Some((self.total_of(hi), self.total_of(lo)))
    }

    pub fn index(&self) -> f64 {
        self.value() / self.test.baseline * 10.0
    }
}

/// One index table: the tests measured with one number of copies.
#[derive(Debug, Clone)]
pub struct Group {
    pub copies: u32,
    /// In the order of UnixBench's report.
    pub entries: Vec<Entry>,
    /// The labels of the index's tests not measured with this number of copies.
    pub missing: Vec<&'static str>,
}

impl Group {
    /// The System Benchmarks Index Score: the geometric mean of the indexes, only when
    /// every test of the index was measured (and gave a positive figure).
    pub fn score(&self) -> Option<f64> {
        if !self.missing.is_empty() {
            return None;
        }
        geometric_mean(&self.entries.iter().map(Entry::index).collect::<Vec<_>>())
    }

    pub fn title(&self) -> String {
        match self.copies {
            1 => "1 copy".to_string(),
            n => format!("{n} copies"),
        }
    }
}

/// The geometric mean of positive finite values; `None` for none, or any other.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let mean_log = values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64;
    Some(mean_log.exp())
}

/// The entry of a pooled configuration, if it is an index test that measured something.
pub fn entry(p: &Pooled) -> Option<Entry> {
    let test = test_of(&p.result)?;
    let f = p.figures();
    let median_ns = f.stats.as_ref()?.median;
    let bufsize = p
        .result
        .params
        .get("bufsize")
        .and_then(|b| b.parse().ok())
        .unwrap_or(0.0);
    let passes = Passes::of(&p.result.params).and_then(|passes| {
        let (ns, kept) = unixbench_statistic(&p.per_process())?;
        Some(PassesFigure { passes, kept, ns })
    });
    Some(Entry {
        test,
        copies: copies_of(&p.result),
        median_ns,
        ci_ns: f.ci,
        status: crate::report::names::status_text(&p.result),
        bufsize,
        passes,
    })
}

/// The entries grouped by number of copies (fewest first), each group in the report's
/// order with the tests it lacks.
pub fn groups(entries: &[Entry]) -> Vec<Group> {
    let mut copies: Vec<u32> = entries.iter().map(|e| e.copies).collect();
    copies.sort_unstable();
    copies.dedup();
    copies
        .into_iter()
        .map(|n| {
            let mut group = Group {
                copies: n,
                entries: Vec::new(),
                missing: Vec::new(),
            };
            for t in TESTS {
                match entries
                    .iter()
                    .find(|e| e.copies == n && e.test.label() == t.label())
                {
                    Some(e) => group.entries.push(e.clone()),
                    None => group.missing.push(t.label()),
                }
            }
            group
        })
        .collect()
}

/// The index tables of a run's pooled configurations; empty when it measured none.
pub fn of(pooled: &[Pooled]) -> Vec<Group> {
    groups(&pooled.iter().filter_map(entry).collect::<Vec<_>>())
}

/// UnixBench's number format: one decimal.
fn one_decimal(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "–".to_string()
    }
}

/// The text section: one table per number of copies, then its score. Empty without
/// UnixBench results.
pub fn section(pooled: &[Pooled]) -> String {
    let groups = of(pooled);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nUnixBench (System Benchmarks Index; baseline: SPARCstation 20-61 = 10.0)\n",
    );
    for g in &groups {
        out.push_str(&format!("\n  {}\n", g.title()));
        out.push_str(&table(g).render(2));
        if g.entries.iter().any(|e| e.passes.is_some()) {
            out.push_str(PASSES_NOTE);
        }
        match g.score() {
            Some(score) => out.push_str(&format!(
                "  System Benchmarks Index Score ({}): {}\n",
                g.title(),
                one_decimal(score)
            )),
            None => out.push_str(&format!(
                "  System Benchmarks Index Score ({}): not computed, {} of {} tests missing: {}\n",
                g.title(),
                g.missing.len(),
                TESTS.len(),
                g.missing.join("; ")
            )),
        }
    }
    out
}

fn table(g: &Group) -> Table {
    use crate::report::format::{time_ns, time_range_ns};
    let mut t = Table::new(&[
        ("test", Align::Left),
        ("result", Align::Right),
        ("unit", Align::Left),
        ("baseline", Align::Right),
        ("index", Align::Right),
        ("passes", Align::Right),
        ("from median", Align::Right),
        ("median", Align::Right),
        ("rerun 95%", Align::Right),
        ("status", Align::Left),
    ]);
    for e in &g.entries {
        t.row(vec![
            e.test.label().to_string(),
            one_decimal(e.value()),
            e.test.unit.name().to_string(),
            one_decimal(e.test.baseline),
            one_decimal(e.index()),
            e.passes.map_or("–".into(), |p| {
                format!("{} of {}×{}s", p.kept, p.passes.count, p.passes.seconds)
            }),
            one_decimal(e.median_value()),
            time_ns(e.median_ns),
            e.ci_ns
                .map_or("–".into(), |(lo, hi)| time_range_ns(lo, hi, e.median_ns)),
            e.status.clone(),
        ]);
    }
    t
}

/// What the table's columns are, when some result comes from timed passes.
const PASSES_NOTE: &str = "  result: UnixBench's statistic, the geometric mean of the best two \
thirds of its timed passes (passes: kept of count × seconds)\n  from median: oslab's pooled \
median in the same unit, its time per loop and rerun interval beside it\n";

/// The JSON figures: `null` without UnixBench results, else one object per number of
/// copies.
pub fn document(pooled: &[Pooled]) -> Value {
    let groups = of(pooled);
    if groups.is_empty() {
        return Value::Null;
    }
    let docs: Vec<Value> = groups
        .iter()
        .map(|g| {
            json!({
                "copies": g.copies,
                "tests": g.entries.iter().map(|e| json!({
                    "test": e.test.label(),
                    "program": e.test.program,
                    "experiment": e.test.experiment(),
                    "median_ns": e.median_ns,
                    "ci_low_ns": e.ci_ns.map(|c| c.0),
                    "ci_high_ns": e.ci_ns.map(|c| c.1),
                    "value": e.value(),
                    "passes": e.passes.map(|p| p.passes.name()),
                    "passes_kept": e.passes.map(|p| p.kept),
                    "median_value": e.median_value(),
                    "value_low": e.value_range().map(|r| r.0),
                    "value_high": e.value_range().map(|r| r.1),
                    "unit": e.test.unit.name(),
                    "baseline": e.test.baseline,
                    "index": e.index(),
                    "status": e.status,
                })).collect::<Vec<_>>(),
                "missing": g.missing,
                "score": g.score(),
            })
        })
        .collect();
    Value::Array(docs)
}

#[cfg(test)]
mod tests;

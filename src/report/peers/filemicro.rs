//! The Filebench-like summary of `oslab run --suite filemicro`: per personality, what
//! Filebench's "IO Summary" prints (ops/s, MB/s, ms/op) with oslab's 95% interval, plus the
//! proof Filebench does not give: the blocks each op made the device read and the blocks it
//! dirtied for writing (getrusage `inblock`/`oublock` per op, 512-byte units).
//!
//! ms/op is oslab's median time per op; ops/s counts ops as Filebench's IO Summary does, one
//! per I/O flowop executed (`experiment::filemicro::flowops_per_op` × 1e3 / ms/op: createfiles'
//! create, write and close are three), and MB/s is the op's bytes
//! (`experiment::filemicro::bytes_per_op`) × 1e3 / ms/op / 10⁶. Pure: pooled results in, text
//! or JSON out.

use serde_json::{Value, json};

use crate::experiment::Params;
use crate::experiment::filemicro::{bytes_per_op, filebench_workload, flowops_per_op};
use crate::report::format::{Align, Table, sig3};
use crate::report::pool::Pooled;

/// One personality's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The suite's label, else Filebench's workload name.
    pub personality: String,
    pub experiment: String,
    /// Filebench's ops (I/O flowops executed) per op here.
    pub flowops_per_op: f64,
    /// Filebench's ops per second.
    pub ops_per_s: Option<f64>,
    pub mb_per_s: Option<f64>,
    pub ms_per_op: Option<f64>,
    /// Where a rerun's median falls, 95%, in ms/op.
    pub ms_ci: Option<(f64, f64)>,
    /// Blocks (512 bytes) read from the device per op.
    pub inblock: Option<f64>,
    /// Blocks (512 bytes) dirtied for writing per op.
    pub oublock: Option<f64>,
    pub status: String,
}

/// The lines of the filemicro results among `pooled`, in their order.
pub fn lines(pooled: &[Pooled]) -> Vec<Line> {
    pooled
        .iter()
        .filter_map(|p| {
            let r = &p.result;
            let params = Params::from_map(r.params.clone());
            let bytes = bytes_per_op(&r.experiment, &params)?;
            let flowops = flowops_per_op(&r.experiment, &params)?;
            let f = p.figures();
            let ns = f.stats.as_ref().map(|s| s.median).filter(|m| *m > 0.0);
            let ops = ns.map(|ns| 1e9 / ns);
            Some(Line {
                personality: r
                    .label
                    .clone()
                    .or_else(|| filebench_workload(&r.experiment))
                    .unwrap_or_else(|| r.experiment.clone()),
                experiment: r.experiment.clone(),
                flowops_per_op: flowops,
                ops_per_s: ops.map(|o| o * flowops),
                mb_per_s: ops.map(|o| o * bytes / 1e6),
                ms_per_op: ns.map(|ns| ns / 1e6),
                ms_ci: f.ci.map(|(lo, hi)| (lo / 1e6, hi / 1e6)),
                inblock: ns.and(f.rusage.get("inblock").copied()),
                oublock: ns.and(f.rusage.get("oublock").copied()),
                status: r.status.as_str().to_string(),
            })
        })
        .collect()
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), sig3)
}

/// The summary as text; empty when the run has no filemicro result.
pub fn render(pooled: &[Pooled]) -> String {
    let lines = lines(pooled);
    if lines.is_empty() {
        return String::new();
    }
    let mut table = Table::new(&[
        ("personality", Align::Left),
        ("ops/s", Align::Right),
        ("MB/s", Align::Right),
        ("ops per op", Align::Right),
        ("ms/op", Align::Right),
        ("rerun 95% (ms)", Align::Right),
        ("rd blk/op", Align::Right),
        ("wr blk/op", Align::Right),
        ("status", Align::Left),
    ]);
    for l in &lines {
        table.row(vec![
            l.personality.clone(),
            num(l.ops_per_s),
            num(l.mb_per_s),
            sig3(l.flowops_per_op),
            num(l.ms_per_op),
            l.ms_ci.map_or_else(
                || "–".to_string(),
                |(lo, hi)| format!("{} – {}", sig3(lo), sig3(hi)),
            ),
            num(l.inblock),
            num(l.oublock),
            l.status.clone(),
        ]);
    }
    let mut out = String::from(
        "\nFilebench's filemicro workloads, measured by oslab (one thread each; ops counted as \
         Filebench counts them; beside Filebench's own figures: docs/filemicro.md)\n\n",
    );
    out.push_str(&table.render(2));
    out.push_str(
        "\n  ms/op: median time per op here (docs/filemicro.md says what one op is); ops/s: \
         Filebench's ops (I/O flowops executed) per second,\n  ops per op × 1000 / ms/op \
         (createfiles: create, write, close); MB/s = bytes per op × 1000 / ms/op / 10^6.\n  \
         rd/wr blk/op: getrusage inblock/oublock per op in 512-byte blocks: what the op read from \
         the device,\n  and the page-cache pages it dirtied for the device (written by its fsync \
         or O_DSYNC, or later by writeback).\n",
    );
    out
}

/// The same figures for `--json`: one object per personality; `None` when the run has none.
pub fn document(pooled: &[Pooled]) -> Option<Value> {
    let lines = lines(pooled);
    if lines.is_empty() {
        return None;
    }
    Some(Value::Array(
        lines
            .iter()
            .map(|l| {
                json!({
                    "personality": l.personality,
                    "experiment": l.experiment,
                    "flowops_per_op": l.flowops_per_op,
                    "ops_per_s": l.ops_per_s,
                    "mb_per_s": l.mb_per_s,
                    "ms_per_op": l.ms_per_op,
                    "ms_ci_low": l.ms_ci.map(|c| c.0),
                    "ms_ci_high": l.ms_ci.map(|c| c.1),
                    "inblock_per_op": l.inblock,
                    "oublock_per_op": l.oublock,
                    "status": l.status,
                })
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExperimentResult;
    use crate::report::pool::pool;

    /// Twenty samples of 1000 ops near `ns_per_op`, each op dirtying 16 blocks.
    fn result(experiment: &str, params: &[(&str, &str)], ns_per_op: f64) -> ExperimentResult {
        let values: Vec<f64> = (0..20).map(|i| ns_per_op + i as f64).collect();
        let mut r = ExperimentResult::from_values(experiment, params, &values, 1000);
        r.label = experiment
            .strip_prefix("filemicro.")
            .map(|name| format!("filemicro_{name}"));
        for s in &mut r.samples {
            s.rusage.oublock = 16_000;
        }
        r
    }

    #[test]
    fn figures_follow_filebench_units() {
        let results = vec![
            result("filemicro.seqread", &[("iosize", "1M")], 1e6),
            result("filemicro.statfile", &[("nfiles", "10")], 1e3),
            result("fs.read", &[], 1e3),
        ];
        let pooled = pool(&results);
        let l = lines(&pooled);
        assert_eq!(l.len(), 2, "only filemicro results");
        let seq = &l[0];
        assert_eq!(seq.personality, "filemicro_seqread");
        assert!((seq.ms_per_op.unwrap() - 1.0).abs() < 0.01);
        assert!((seq.ops_per_s.unwrap() - 1000.0).abs() < 10.0);
        assert!((seq.mb_per_s.unwrap() - 1048.576).abs() < 11.0);
        assert_eq!(seq.oublock, Some(16.0));
        assert_eq!(l[1].mb_per_s, Some(0.0));
        let text = render(&pooled);
        for column in [
            "ops/s",
            "MB/s",
            "ms/op",
            "rd blk/op",
            "wr blk/op",
            "filemicro_statfile",
        ] {
            assert!(text.contains(column), "{column} in {text}");
        }
        let doc = document(&pooled).unwrap();
        assert_eq!(doc.as_array().unwrap().len(), 2);
        assert!(render(&pool(&results[2..])).is_empty());
        assert!(document(&pool(&results[2..])).is_none());
    }

    /// Filebench counts each I/O flowop: createfiles' loop is three ops, openfiles' two, and
    /// writefsync's fsync is one more per `writeiters` appends. Unlabelled results (run by
    /// name, not through the suite) still carry Filebench's workload name.
    #[test]
    fn ops_are_counted_as_filebench_counts_them() {
        let mut results = vec![
            result("filemicro.createfiles", &[("filesize", "1K")], 1e4),
            result("filemicro.openfiles", &[("nfiles", "10")], 1e4),
            result("filemicro.writefsync", &[("writeiters", "1024")], 1e4),
        ];
        results[1].label = None;
        let l = lines(&pool(&results));
        let ops: Vec<f64> = l.iter().map(|l| l.ops_per_s.unwrap()).collect();
        assert!((ops[0] - 3e5).abs() < 3e3, "{ops:?}");
        assert!((ops[1] - 2e5).abs() < 2e3, "{ops:?}");
        assert!((ops[2] - 1e5 * 1025.0 / 1024.0).abs() < 1e3, "{ops:?}");
        assert_eq!(l[1].personality, "openfiles");
        assert!(
            (l[0].mb_per_s.unwrap() - 102.4).abs() < 2.0,
            "bytes per file, not per op"
        );
    }
}

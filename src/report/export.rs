//! `oslab export`: a whole run as one versioned JSON document (to move it to another machine,
//! read back by `oslab import`), or one CSV row per sample (for spreadsheets and pandas).
//! The formats are described in docs/json.md.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::model::{ExperimentResult, Run, Rusage};
use crate::report::pool::process_numbers;

mod stream;
pub use stream::{Sink, StreamError, Streamed, read_stream};

/// The `format` field of an export document.
pub const FORMAT: &str = "oslab-run";
/// The newest `format_version` this build writes and reads. A change that an older oslab
/// would misread (a renamed or re-meant field) raises it; added fields do not.
pub const FORMAT_VERSION: u64 = 1;

/// The export document: the format marker, then the run exactly as the model serialises it,
/// so reading it back is `serde_json::from_value::<Run>`.
pub fn json_document(run: &Run) -> Value {
    json!({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "exported_by": format!("oslab {}", env!("CARGO_PKG_VERSION")),
        "run": run,
    })
}

/// Why a file cannot be imported; each renders as the end of one error line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    #[error("is not JSON ({0}); pass a file written by `oslab export --format json`")]
    NotJson(String),
    #[error(
        "is not an oslab run export (format {0}, expected \"{FORMAT}\"); pass a file written by \
         `oslab export --format json`"
    )]
    WrongFormat(String),
    #[error(
        "has format_version {found}, this oslab reads up to {FORMAT_VERSION}; upgrade oslab to \
         import it"
    )]
    TooNew { found: String },
    #[error("holds a malformed run ({0}); export it again")]
    BadRun(String),
    #[error("cannot be read ({0}); check the file and its disk")]
    Unreadable(String),
}

/// Read an export document back into a `Run` (its id is the exporting database's), every
/// result in memory: for documents of a known, small size (tests, the fuzz targets);
/// `oslab import` streams with [`read_stream`].
pub fn read_document(text: &str) -> Result<Run, ReadError> {
    struct Collect(Vec<ExperimentResult>);
    impl Sink for Collect {
        type Error = std::convert::Infallible;
        fn results_begin(&mut self, _: Option<&Run>) {}
        fn result(&mut self, r: ExperimentResult) -> Result<(), Self::Error> {
            self.0.push(r);
            Ok(())
        }
    }
    let mut all = Collect(Vec::new());
    match read_stream(text.as_bytes(), &mut all) {
        Ok(streamed) => Ok(Run {
            results: all.0,
            ..streamed.header
        }),
        Err(StreamError::Read(e)) => Err(e),
        Err(StreamError::Sink(never)) => match never {},
    }
}

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

/// One row per sample: run_id, experiment, params (`k=v;k=v`), label (a suite's name for the
/// configuration), process (which of the configuration's `--repeat` worker processes took it,
/// from 1), sample, ops, elapsed_ns,
/// ns_per_op, every getrusage field, then one column per counter name that appears anywhere
/// in the run (its multiplexing-scaled value; empty when not counted in that sample).
pub fn csv(run: &Run) -> String {
    let counters: BTreeSet<&str> = run
        .results
        .iter()
        .flat_map(|r| &r.samples)
        .flat_map(|s| s.counters.keys().map(String::as_str))
        .collect();
    let mut header: Vec<String> = [
        "run_id",
        "experiment",
        "params",
        "label",
        "process",
        "sample",
        "ops",
        "elapsed_ns",
        "ns_per_op",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    header.extend(Rusage::FIELDS.iter().map(|f| f.to_string()));
    header.extend(counters.iter().map(|c| c.to_string()));
    let mut out = csv_line(&header);
    for (r, (process, _)) in run.results.iter().zip(process_numbers(&run.results)) {
        let params = r
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";");
        for (idx, s) in r.samples.iter().enumerate() {
            let mut row = vec![
                run.id.to_string(),
                r.experiment.clone(),
                params.clone(),
                r.label.clone().unwrap_or_default(),
                process.to_string(),
                idx.to_string(),
                s.ops.to_string(),
                number(s.elapsed_ns),
                number(s.ns_per_op),
            ];
            row.extend(
                Rusage::FIELDS
                    .iter()
                    .map(|f| s.rusage.get(f).unwrap_or(0).to_string()),
            );
            row.extend(counters.iter().map(|c| {
                s.counters
                    .get(*c)
                    .and_then(|v| v.value)
                    .map(number)
                    .unwrap_or_default()
            }));
            out.push_str(&csv_line(&row));
        }
    }
    out
}

/// A float as Rust prints it (shortest text that reads back exactly); empty for NaN.
fn number(x: f64) -> String {
    if x.is_finite() {
        x.to_string()
    } else {
        String::new()
    }
}

/// One CSV record (RFC 4180): a field with a comma, quote or line break is quoted, quotes
/// doubled.
fn csv_line(fields: &[String]) -> String {
    let mut line = fields
        .iter()
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        let line = csv_line(&["a".into(), "b,c".into(), "say \"x\"".into()]);
        assert_eq!(line, "a,\"b,c\",\"say \"\"x\"\"\"\n");
    }

    #[test]
    fn refusals() {
        assert!(matches!(read_document("{"), Err(ReadError::NotJson(_))));
        assert_eq!(
            read_document(r#"{"format": "other", "format_version": 1}"#),
            Err(ReadError::WrongFormat("\"other\"".into()))
        );
        assert_eq!(
            read_document(r#"{"format": "oslab-run", "format_version": 2, "run": {}}"#),
            Err(ReadError::TooNew { found: "2".into() })
        );
        assert!(matches!(
            read_document(r#"{"format": "oslab-run", "format_version": 1, "run": {}}"#),
            Err(ReadError::BadRun(_))
        ));
    }
}

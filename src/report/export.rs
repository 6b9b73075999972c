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

/// Why [`write_document`] stopped: the output failed, or reading the next result did.
#[derive(Debug)]
pub enum WriteError<E> {
    Io(std::io::Error),
    Source(E),
}

/// Write the export document of a run to `out`, byte for byte what [`json_document`]
/// pretty-printed gives (and a final line break), its results read one at a time from
/// `results`: memory holds the header and one result, not the run. `header` is the run
/// without its results.
pub fn write_document<E, I>(
    out: impl std::io::Write,
    header: &Run,
    results: I,
) -> Result<(), WriteError<E>>
where
    I: Iterator<Item = Result<ExperimentResult, E>>,
{
    use std::cell::RefCell;
    let to_io = |e: serde_json::Error| WriteError::Io(std::io::Error::other(e));
    let Value::Object(fields) = serde_json::to_value(header).map_err(to_io)? else {
        return Err(to_io(serde::de::Error::custom("a run is not an object")));
    };
    let doc = Streaming {
        fields: &fields,
        results: RefCell::new(results),
        failed: RefCell::new(None),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let written = serde_json::to_writer_pretty(&mut out, &doc);
    if let Some(e) = doc.failed.into_inner() {
        return Err(WriteError::Source(e));
    }
    written.map_err(|e| match e.io_error_kind() {
        Some(_) => WriteError::Io(e.into()),
        None => to_io(e),
    })?;
    use std::io::Write as _;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(WriteError::Io)
}

/// The document of [`write_document`], serialised as the `Value` of [`json_document`] is:
/// keys in order, the run's `results` drawn from the iterator as they are written.
struct Streaming<'a, E, I> {
    fields: &'a serde_json::Map<String, Value>,
    results: std::cell::RefCell<I>,
    failed: std::cell::RefCell<Option<E>>,
}

struct RunFields<'s, 'a, E, I>(&'s Streaming<'a, E, I>);
struct Results<'s, 'a, E, I>(&'s Streaming<'a, E, I>);

impl<E, I: Iterator<Item = Result<ExperimentResult, E>>> serde::Serialize for Streaming<'_, E, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry(
            "exported_by",
            &format!("oslab {}", env!("CARGO_PKG_VERSION")),
        )?;
        map.serialize_entry("format", FORMAT)?;
        map.serialize_entry("format_version", &FORMAT_VERSION)?;
        map.serialize_entry("run", &RunFields(self))?;
        map.end()
    }
}

impl<E, I: Iterator<Item = Result<ExperimentResult, E>>> serde::Serialize
    for RunFields<'_, '_, E, I>
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.fields.len()))?;
        for (key, value) in self.0.fields {
            if key == "results" {
                map.serialize_entry(key, &Results(self.0))?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl<E, I: Iterator<Item = Result<ExperimentResult, E>>> serde::Serialize
    for Results<'_, '_, E, I>
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(None)?;
        let mut results = self.0.results.borrow_mut();
        for next in &mut *results {
            match next {
                // As a `Value`, as `json_document` writes it (its maps' keys sorted).
                Ok(result) => seq
                    .serialize_element(&serde_json::to_value(&result).map_err(S::Error::custom)?)?,
                Err(e) => {
                    *self.0.failed.borrow_mut() = Some(e);
                    return Err(S::Error::custom("reading a result failed"));
                }
            }
        }
        seq.end()
    }
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
    #[error(
        "holds {what} of more than {limit_mb} MB, where the largest a run gives is a few MB; \
         nothing was imported (export the run again from the database that holds it)"
    )]
    TooLarge { what: String, limit_mb: u64 },
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

    /// The streamed document is the `Value` one, byte for byte.
    #[test]
    fn a_streamed_document_is_the_whole_one() {
        use crate::store::tests::{run, syscall_result};
        for n in [0, 1, 3] {
            let r = run(Some("t"), 1.5, vec![syscall_result(); n]);
            let header = Run {
                results: Vec::new(),
                ..r.clone()
            };
            let mut out = Vec::new();
            let results = r.results.iter().cloned().map(Ok::<_, ()>);
            write_document(&mut out, &header, results).unwrap();
            let whole = serde_json::to_string_pretty(&json_document(&r)).unwrap() + "\n";
            assert_eq!(String::from_utf8(out).unwrap(), whole, "{n} results");
        }
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

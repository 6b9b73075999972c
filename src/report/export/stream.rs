//! Reading an export document as a stream (`oslab import`): the run's fields other than
//! `results` are kept (they are small), each result is read whole and handed to a [`Sink`],
//! then dropped, so memory holds one result at a time, whatever the document's size.

use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer as _};
use serde_json::{Map, Value};

use super::{FORMAT, FORMAT_VERSION, ReadError, one_line};
use crate::model::{ExperimentResult, Run};

/// Where the results of a streamed document go, in document order.
pub trait Sink {
    type Error;
    /// `results` begins. `before` is the run as read so far (no results), when the fields
    /// before `results` make a run (in a document `oslab export` wrote, every other field
    /// comes first).
    fn results_begin(&mut self, before: Option<&Run>);
    /// The next result; an error stops the reading.
    fn result(&mut self, result: ExperimentResult) -> Result<(), Self::Error>;
}

/// What a streamed document held besides its results.
#[derive(Debug)]
pub struct Streamed {
    /// The run without its results.
    pub header: Run,
    /// How many results were handed to the sink.
    pub results: usize,
    /// Whether `results` was the last field of the run: `before` was the whole header.
    pub results_last: bool,
}

/// Why a streamed document stopped: it cannot be read, or the sink said stop.
#[derive(Debug)]
pub enum StreamError<E> {
    Read(ReadError),
    Sink(E),
}

/// Read the export document from `reader`, results to `sink`.
pub fn read_stream<R: Read, S: Sink>(
    reader: R,
    sink: &mut S,
) -> Result<Streamed, StreamError<S::Error>> {
    let mut state = State {
        sink,
        sink_error: None,
        format_error: None,
        object: false,
        format: None,
        version: None,
        run: None,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = (&mut de)
        .deserialize_map(Document(&mut state))
        .and_then(|()| de.end());
    if let Some(e) = state.sink_error.take() {
        return Err(StreamError::Sink(e));
    }
    if let Some(e) = state.format_error.take() {
        return Err(StreamError::Read(e));
    }
    if let Err(e) = parsed {
        let text = one_line(&e.to_string());
        return Err(StreamError::Read(match e.classify() {
            serde_json::error::Category::Data if !state.object => {
                ReadError::WrongFormat("missing".into())
            }
            serde_json::error::Category::Data => ReadError::BadRun(text),
            serde_json::error::Category::Io => ReadError::Unreadable(text),
            _ => ReadError::NotJson(text),
        }));
    }
    check_format(&state.format, &state.version).map_err(StreamError::Read)?;
    state
        .run
        .ok_or_else(|| StreamError::Read(ReadError::BadRun("no \"run\" field".into())))
}

fn check_format(format: &Option<Value>, version: &Option<Value>) -> Result<(), ReadError> {
    match format {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(other) => return Err(ReadError::WrongFormat(other.to_string())),
        None => return Err(ReadError::WrongFormat("missing".into())),
    }
    match version.as_ref().and_then(Value::as_u64) {
        Some(v) if (1..=FORMAT_VERSION).contains(&v) => Ok(()),
        _ => Err(ReadError::TooNew {
            found: version
                .as_ref()
                .map_or_else(|| "missing".into(), Value::to_string),
        }),
    }
}

struct State<'s, S: Sink> {
    sink: &'s mut S,
    sink_error: Option<S::Error>,
    /// A format refused before the run was read (its fields came first).
    format_error: Option<ReadError>,
    /// Whether the document is an object at all.
    object: bool,
    format: Option<Value>,
    version: Option<Value>,
    run: Option<Streamed>,
}

/// The document's top-level object.
struct Document<'a, 's, S: Sink>(&'a mut State<'s, S>);

impl<'de, S: Sink> Visitor<'de> for Document<'_, '_, S> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an oslab export document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let state = self.0;
        state.object = true;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => state.format = Some(map.next_value()?),
                "format_version" => state.version = Some(map.next_value()?),
                "run" if state.run.is_some() => {
                    return Err(de::Error::custom("duplicate field `run`"));
                }
                "run" => {
                    // A document that says what it is first is refused before its run is read.
                    let known = match (&state.format, &state.version) {
                        (Some(_), Some(_)) => check_format(&state.format, &state.version),
                        (Some(f), None) if f.as_str() != Some(FORMAT) => {
                            check_format(&state.format, &state.version)
                        }
                        _ => Ok(()),
                    };
                    if let Err(e) = known {
                        state.format_error = Some(e);
                        return Err(de::Error::custom("refused"));
                    }
                    let run = map.next_value_seed(RunSeed {
                        sink: &mut *state.sink,
                        error: &mut state.sink_error,
                    })?;
                    state.run = Some(run);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The `run` object: every field but `results` kept as JSON, results streamed.
struct RunSeed<'a, S: Sink> {
    sink: &'a mut S,
    error: &'a mut Option<S::Error>,
}

impl<'de, S: Sink> DeserializeSeed<'de> for RunSeed<'_, S> {
    type Value = Streamed;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Streamed, D::Error> {
        d.deserialize_map(self)
    }
}

/// The run as read so far, with no results.
fn header(fields: &Map<String, Value>) -> Result<Run, serde_json::Error> {
    let mut fields = fields.clone();
    fields.insert("results".into(), Value::Array(Vec::new()));
    Run::deserialize(Value::Object(fields))
}

impl<'de, S: Sink> Visitor<'de> for RunSeed<'_, S> {
    type Value = Streamed;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a run")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Streamed, A::Error> {
        let mut fields = Map::new();
        let mut results: Option<usize> = None;
        let mut results_last = true;
        while let Some(key) = map.next_key::<String>()? {
            if key == "results" {
                if results.is_some() {
                    return Err(de::Error::custom("duplicate field `results`"));
                }
                self.sink.results_begin(header(&fields).ok().as_ref());
                results = Some(map.next_value_seed(Results {
                    sink: &mut *self.sink,
                    error: &mut *self.error,
                })?);
            } else {
                if fields.contains_key(&key) {
                    return Err(de::Error::custom(format!("duplicate field `{key}`")));
                }
                results_last &= results.is_none();
                let value = map.next_value::<Value>()?;
                fields.insert(key, value);
            }
        }
        let results = results.ok_or_else(|| de::Error::missing_field("results"))?;
        let header = header(&fields).map_err(de::Error::custom)?;
        Ok(Streamed {
            header,
            results,
            results_last,
        })
    }
}

/// The `results` array, each element to the sink.
struct Results<'a, S: Sink> {
    sink: &'a mut S,
    error: &'a mut Option<S::Error>,
}

impl<'de, S: Sink> DeserializeSeed<'de> for Results<'_, S> {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: Sink> Visitor<'de> for Results<'_, S> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of results")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(result) = seq.next_element::<ExperimentResult>()? {
            n += 1;
            if let Err(e) = self.sink.result(result) {
                *self.error = Some(e);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(n)
    }
}

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

/// The most bytes one value of the document may take: a result (its samples, profile…), or
/// one field of the run. The largest result a run gives (5,000 samples with every counter, a
/// profile) is a few MB; a value larger than this is refused before it is held in memory, so
/// memory stays bounded whatever the file holds.
pub const MAX_VALUE_BYTES: u64 = 64 << 20;

/// Read the export document from `reader`, results to `sink`.
pub fn read_stream<R: Read, S: Sink>(
    reader: R,
    sink: &mut S,
) -> Result<Streamed, StreamError<S::Error>> {
    read_bounded(reader, sink, MAX_VALUE_BYTES)
}

/// Bytes read so far and where the value being read began: the reader refuses to read a
/// value past `limit` bytes.
struct Count {
    read: std::cell::Cell<u64>,
    mark: std::cell::Cell<u64>,
    limit: u64,
    /// Set when the reader refused: the value was too large.
    over: std::cell::Cell<bool>,
}

impl Count {
    /// A value begins here.
    fn mark(&self) {
        self.mark.set(self.read.get());
    }
}

struct Counted<R> {
    inner: R,
    count: std::rc::Rc<Count>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let c = &self.count;
        let left = (c.mark.get() + c.limit).saturating_sub(c.read.get());
        if left == 0 {
            c.over.set(true);
            return Err(std::io::Error::other("a value too large"));
        }
        let room = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..room])?;
        c.read.set(c.read.get() + n as u64);
        Ok(n)
    }
}

fn read_bounded<R: Read, S: Sink>(
    reader: R,
    sink: &mut S,
    limit: u64,
) -> Result<Streamed, StreamError<S::Error>> {
    let count = std::rc::Rc::new(Count {
        read: std::cell::Cell::new(0),
        mark: std::cell::Cell::new(0),
        limit,
        over: std::cell::Cell::new(false),
    });
    let reader = Counted {
        inner: reader,
        count: count.clone(),
    };
    let mut state = State {
        count: count.clone(),
        reading: "the document".into(),
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
        if count.over.get() {
            return Err(StreamError::Read(ReadError::TooLarge {
                what: state.reading.clone(),
                limit_mb: limit >> 20,
            }));
        }
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
    count: std::rc::Rc<Count>,
    /// What was being read: said when a value is too large.
    reading: String,
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
            state.count.mark();
            state.reading = format!("field {key:?}");
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
                    let run = map.next_value_seed(RunSeed(Reading {
                        sink: &mut *state.sink,
                        error: &mut state.sink_error,
                        count: &state.count,
                        reading: &mut state.reading,
                    }))?;
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

/// What the run and its results are read with: the sink, where its error is kept, the byte
/// count and what is being read.
struct Reading<'a, S: Sink> {
    sink: &'a mut S,
    error: &'a mut Option<S::Error>,
    count: &'a Count,
    reading: &'a mut String,
}

impl<S: Sink> Reading<'_, S> {
    fn reborrow(&mut self) -> Reading<'_, S> {
        Reading {
            sink: &mut *self.sink,
            error: &mut *self.error,
            count: self.count,
            reading: &mut *self.reading,
        }
    }

    /// Marks the bytes read so far as one value's and says what the next one is.
    fn next(&mut self, what: String) {
        self.count.mark();
        *self.reading = what;
    }
}

/// The `run` object: every field but `results` kept as JSON, results streamed.
struct RunSeed<'a, S: Sink>(Reading<'a, S>);

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
        let mut r = self.0;
        let mut fields = Map::new();
        let mut results: Option<usize> = None;
        let mut results_last = true;
        while let Some(key) = map.next_key::<String>()? {
            r.next(format!("the run's field {key:?}"));
            if key == "results" {
                if results.is_some() {
                    return Err(de::Error::custom("duplicate field `results`"));
                }
                r.sink.results_begin(header(&fields).ok().as_ref());
                results = Some(map.next_value_seed(Results(r.reborrow()))?);
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
struct Results<'a, S: Sink>(Reading<'a, S>);

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
        let mut r = self.0;
        let mut n = 0;
        loop {
            r.next(format!("result {}", n + 1));
            let Some(result) = seq.next_element::<ExperimentResult>()? else {
                break;
            };
            n += 1;
            if let Err(e) = r.sink.result(result) {
                *r.error = Some(e);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(usize);
    impl Sink for Count {
        type Error = ();
        fn results_begin(&mut self, _: Option<&Run>) {}
        fn result(&mut self, _: ExperimentResult) -> Result<(), ()> {
            self.0 += 1;
            Ok(())
        }
    }

    /// A value larger than the limit is refused, named, before it is held; the rest reads.
    #[test]
    fn a_value_past_the_limit_is_refused_by_name() {
        use crate::store::tests::{run, syscall_result};
        let doc = super::super::json_document(&run(None, 1.0, vec![syscall_result(); 3]));
        let text = doc.to_string();
        let one = serde_json::to_string(&doc["run"]["results"][0])
            .unwrap()
            .len() as u64;
        let mut n = Count(0);
        let got = read_bounded(text.as_bytes(), &mut n, one + 64).map(|s| s.results);
        assert_eq!(got.ok(), Some(3));
        let mut n = Count(0);
        match read_bounded(text.as_bytes(), &mut n, one / 2) {
            Err(StreamError::Read(ReadError::TooLarge { what, .. })) => {
                assert_eq!(what, "result 1");
            }
            other => panic!("{other:?}"),
        }
        let mut tag = doc.clone();
        tag["run"]["tag"] = "x".repeat(2 * one as usize).into();
        let mut n = Count(0);
        match read_bounded(tag.to_string().as_bytes(), &mut n, one + 64) {
            Err(StreamError::Read(ReadError::TooLarge { what, .. })) => {
                assert_eq!(what, "the run's field \"tag\"");
            }
            other => panic!("{other:?}"),
        }
    }
}

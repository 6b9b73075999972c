//! Rows → model records: rebuilds a `Run` exactly as it was stored (results in their stored
//! order, samples in index order, each sample's counters back in its map).
//!
//! A value the model cannot take (a negative count, an unknown status, JSON that does not
//! parse) is reported as a rusqlite conversion error from inside the row closure, and
//! `StoreError::from_sqlite` turns it into `StoreError::Corrupt` with the path.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row};
use serde::de::DeserializeOwned;

use super::RunSummary;
use super::columns::{count, json};
use super::error::{During, StoreError};
use super::query::rows;
use super::schema;
use crate::model::{
    Calibration, Check, ClockInfo, CounterStatus, CounterValue, ExperimentResult, Fact, ProbeCount,
    Run, Rusage, Sample, Status, StopReason,
};

pub(super) fn run(conn: &Connection, path: &Path, run_id: i64) -> Result<Run, StoreError> {
    let mut run = header(conn, path, run_id)?;
    run.results = results(conn, path, run_id)?;
    Ok(run)
}

/// The run without its results: when, how and where it measured.
pub(super) fn header(conn: &Connection, path: &Path, run_id: i64) -> Result<Run, StoreError> {
    const OP: &str = "reading a run";
    let found = conn
        .prepare_cached(schema::SELECT_RUN)
        .during(path, OP)?
        .query_row([run_id], |row| {
            Ok(Run {
                id: row.get(0)?,
                // NULL only while schema 6's step fills it in.
                uuid: row.get::<_, Option<String>>(12)?.unwrap_or_default(),
                started_at: real(row, 1)?,
                finished_at: row.get(2)?,
                tag: row.get(3)?,
                oslab_version: row.get(4)?,
                settings: json(row, 5)?,
                clock: ClockInfo {
                    source: row.get(6)?,
                    reason: row.get(7)?,
                    tsc_hz: row.get(8)?,
                    overhead_ns: real(row, 9)?,
                    resolution_ns: real(row, 10)?,
                },
                environment: json(row, 11)?,
                results: Vec::new(),
            })
        })
        .optional()
        .during(path, OP)?;
    found.ok_or_else(|| StoreError::NoSuchRun {
        path: path.to_path_buf(),
        run_id,
    })
}

/// The results of `run_id` in order, each with its database id, without what it holds per
/// sample, check, fact or counter (see [`complete`]): little memory whatever the run's size.
pub(super) fn result_rows(
    conn: &Connection,
    path: &Path,
    run_id: i64,
) -> Result<Vec<(i64, ExperimentResult)>, StoreError> {
    const OP: &str = "reading results";
    let rows: Vec<(i64, ExperimentResult)> =
        rows(conn, path, (schema::SELECT_RESULTS, OP), [run_id], |row| {
            let result = ExperimentResult {
                experiment: row.get(1)?,
                params: json(row, 2)?,
                unit: row.get(3)?,
                status: status(row, 4)?,
                reason: row.get(5)?,
                stop_reason: stop_reason(row, 6)?,
                calibration: Calibration {
                    ops_per_sample: count(row, 7)?,
                    timer_overhead_ns: real(row, 8)?,
                    loop_overhead_ns: row.get(9)?,
                    baseline_ns: row.get(14)?,
                    warmup_ns: real(row, 10)?,
                    cpus: json(row, 11)?,
                },
                samples: Vec::new(),
                probes: Vec::new(),
                counters: Vec::new(),
                validation: Vec::new(),
                facts: Vec::new(),
                label: row.get(16)?,
                load: optional_json(row, 17)?,
                earlier_medians: optional_json(row, 18)?.unwrap_or_default(),
                emulation: row.get(19)?,
                earlier_slow_medians: optional_json(row, 20)?.unwrap_or_default(),
                earlier_kernel_canaries: optional_json(row, 21)?.unwrap_or_default(),
                profile: None,
                other_cpus_busy: row.get(15)?,
                started_at: real(row, 12)?,
                duration_s: real(row, 13)?,
            };
            Ok((row.get(0)?, result))
        })?;
    Ok(rows)
}

fn results(
    conn: &Connection,
    path: &Path,
    run_id: i64,
) -> Result<Vec<ExperimentResult>, StoreError> {
    result_rows(conn, path, run_id)?
        .into_iter()
        .map(|(id, result)| complete(conn, path, id, result))
        .collect()
}

/// Result `result_id` (a row of [`result_rows`]) with its samples, probes, counter statuses,
/// checks, facts and profile.
pub(super) fn complete(
    conn: &Connection,
    path: &Path,
    result_id: i64,
    mut result: ExperimentResult,
) -> Result<ExperimentResult, StoreError> {
    result.samples = samples(conn, path, result_id)?;
    result.probes = probe_counts(conn, path, result_id)?;
    result.counters = counter_statuses(conn, path, result_id)?;
    result.validation = validations(conn, path, result_id)?;
    result.facts = facts(conn, path, result_id)?;
    result.profile = super::profile::read(conn, path, result_id)?;
    Ok(result)
}

fn samples(conn: &Connection, path: &Path, result_id: i64) -> Result<Vec<Sample>, StoreError> {
    const OP: &str = "reading samples";
    let rows: Vec<(i64, Sample)> = rows(
        conn,
        path,
        (schema::SELECT_SAMPLES, OP),
        [result_id],
        |row| {
            let sample = Sample {
                ops: count(row, 1)?,
                elapsed_ns: real(row, 2)?,
                ns_per_op: real(row, 3)?,
                rusage: rusage_at(row, 4)?,
                partner: None,
                children: None,
                counters: BTreeMap::new(),
            };
            Ok((row.get(0)?, sample))
        },
    )?;
    let (indices, mut samples): (Vec<i64>, Vec<Sample>) = rows.into_iter().unzip();

    let at = Attach {
        conn,
        path,
        result_id,
        indices: &indices,
    };
    at.rows(
        (schema::SELECT_SAMPLE_COUNTERS, "reading counter values"),
        &mut samples,
        counter_value_at,
        |name| format!("counter {name}"),
        |sample, name, value| {
            sample.counters.insert(name, value);
        },
    )?;
    at.rows(
        (
            schema::SELECT_SAMPLE_RUSAGE,
            "reading partner and children figures",
        ),
        &mut samples,
        rusage_at,
        |who| format!("the {who}'s figures"),
        |sample, who, rusage| match who.as_str() {
            "partner" => sample.partner = Some(rusage),
            _ => sample.children = Some(rusage),
        },
    )?;
    Ok(samples)
}

/// The nine getrusage-shaped columns of a row, from column `first` on.
fn rusage_at(row: &Row<'_>, first: usize) -> rusqlite::Result<Rusage> {
    Ok(Rusage {
        utime_us: row.get(first)?,
        stime_us: row.get(first + 1)?,
        maxrss_kb: row.get(first + 2)?,
        minflt: row.get(first + 3)?,
        majflt: row.get(first + 4)?,
        inblock: row.get(first + 5)?,
        oublock: row.get(first + 6)?,
        nvcsw: row.get(first + 7)?,
        nivcsw: row.get(first + 8)?,
    })
}

/// Where stored sample `sample_idx` sits among `indices`. The foreign keys make a row without
/// its sample impossible unless the file was written with them off: say so (`detail`) rather
/// than drop the row.
fn sample_position(
    indices: &[i64],
    sample_idx: i64,
    path: &Path,
    what: &str,
    detail: impl FnOnce() -> String,
) -> Result<usize, StoreError> {
    indices
        .binary_search(&sample_idx)
        .map_err(|_| StoreError::Corrupt {
            path: path.to_path_buf(),
            what: what.to_string(),
            detail: detail(),
        })
}

/// Rows of one result's samples, each filed into its sample by the stored index.
struct Attach<'a> {
    conn: &'a Connection,
    path: &'a Path,
    result_id: i64,
    /// Each sample's stored index, ascending.
    indices: &'a [i64],
}

impl Attach<'_> {
    /// Every row of `query` for the result, whose columns are the sample's index, a name
    /// and what `value` reads from column 2 on, given to `put` with the sample it belongs
    /// to; `missing` says what a row of that name is, for the error of one without its
    /// sample. One query per result for all its rows, rather than one per sample: a result
    /// can have thousands of samples. Rows come sorted by sample index, as `indices` is.
    fn rows<V>(
        &self,
        (sql, op): (&str, &'static str),
        samples: &mut [Sample],
        value: impl Fn(&Row<'_>, usize) -> rusqlite::Result<V>,
        missing: impl Fn(&str) -> String,
        mut put: impl FnMut(&mut Sample, String, V),
    ) -> Result<(), StoreError> {
        let path = self.path;
        let mut stmt = self.conn.prepare_cached(sql).during(path, op)?;
        let rows = stmt
            .query_map([self.result_id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    value(row, 2)?,
                ))
            })
            .during(path, op)?;
        for row in rows {
            let (sample_idx, name, value) = row.during(path, op)?;
            let position = sample_position(self.indices, sample_idx, path, op, || {
                format!(
                    "{} of result {} has no sample {sample_idx}",
                    missing(&name),
                    self.result_id
                )
            })?;
            put(&mut samples[position], name, value);
        }
        Ok(())
    }
}

fn counter_statuses(
    conn: &Connection,
    path: &Path,
    result_id: i64,
) -> Result<Vec<CounterStatus>, StoreError> {
    const OP: &str = "reading counter statuses";
    rows(
        conn,
        path,
        (schema::SELECT_COUNTER_STATUS, OP),
        [result_id],
        |row| {
            Ok(CounterStatus {
                name: row.get(0)?,
                supported: row.get(1)?,
                reason: row.get(2)?,
            })
        },
    )
}

fn probe_counts(
    conn: &Connection,
    path: &Path,
    result_id: i64,
) -> Result<Vec<ProbeCount>, StoreError> {
    const OP: &str = "reading probe counts";
    rows(
        conn,
        path,
        (schema::SELECT_PROBE_COUNTS, OP),
        [result_id],
        |row| {
            Ok(ProbeCount {
                name: row.get(0)?,
                ops: count(row, 1)?,
                count: counter_value_at(row, 2)?,
            })
        },
    )
}

fn facts(conn: &Connection, path: &Path, result_id: i64) -> Result<Vec<Fact>, StoreError> {
    const OP: &str = "reading facts";
    rows(conn, path, (schema::SELECT_FACTS, OP), [result_id], |row| {
        Ok(Fact {
            name: row.get(0)?,
            value: real(row, 1)?,
            unit: row.get(2)?,
            note: row.get(3)?,
        })
    })
}

fn validations(conn: &Connection, path: &Path, result_id: i64) -> Result<Vec<Check>, StoreError> {
    const OP: &str = "reading validation checks";
    rows(
        conn,
        path,
        (schema::SELECT_VALIDATIONS, OP),
        [result_id],
        |row| {
            Ok(Check {
                check: row.get(0)?,
                ok: row.get(1)?,
                detail: row.get(2)?,
            })
        },
    )
}

pub(super) fn summaries(conn: &Connection, path: &Path) -> Result<Vec<RunSummary>, StoreError> {
    const OP: &str = "listing runs";
    rows(conn, path, (schema::LIST_RUNS, OP), [], |row| {
        Ok(RunSummary {
            id: row.get(0)?,
            started_at: real(row, 1)?,
            finished_at: row.get(2)?,
            tag: row.get(3)?,
            results: count(row, 4)?.try_into().unwrap_or(usize::MAX),
            hostname: row.get(5)?,
            kernel_release: row.get(6)?,
        })
    })
}

/// The ids a query of one id column returns, in its order.
pub(super) fn ids(
    conn: &Connection,
    path: &Path,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<i64>, StoreError> {
    const OP: &str = "looking up runs";
    rows(conn, path, (sql, OP), params, |row| row.get(0))
}

/// The single id a query like `LATEST_RUN` returns, if any.
pub(super) fn optional_id(
    conn: &Connection,
    path: &Path,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Option<i64>, StoreError> {
    const OP: &str = "looking up a run";
    conn.prepare_cached(sql)
        .during(path, OP)?
        .query_row(params, |row| row.get(0))
        .optional()
        .during(path, OP)
}

/// The four columns of a counter's value, from column `first` on.
fn counter_value_at(row: &Row<'_>, first: usize) -> rusqlite::Result<CounterValue> {
    Ok(CounterValue {
        value: row.get(first)?,
        raw: count(row, first + 1)?,
        enabled_ns: count(row, first + 2)?,
        running_ns: count(row, first + 3)?,
    })
}

/// A non-optional `f64` column. SQLite stores NaN as NULL, so NULL reads back as NaN.
fn real(row: &Row<'_>, idx: usize) -> rusqlite::Result<f64> {
    Ok(row.get::<_, Option<f64>>(idx)?.unwrap_or(f64::NAN))
}

/// A nullable JSON column: `None` for NULL.
fn optional_json<T: DeserializeOwned>(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = row.get(idx)?;
    text.map(|text| {
        serde_json::from_str(&text)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
    })
    .transpose()
}

fn status(row: &Row<'_>, idx: usize) -> rusqlite::Result<Status> {
    let text: String = row.get(idx)?;
    Status::parse(&text).ok_or_else(|| unknown(idx, "status", &text))
}

fn stop_reason(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<StopReason>> {
    let text: Option<String> = row.get(idx)?;
    text.map(|text| StopReason::parse(&text).ok_or_else(|| unknown(idx, "stop reason", &text)))
        .transpose()
}

fn unknown(idx: usize, what: &str, text: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        idx,
        Type::Text,
        format!("unknown {what} {text:?}").into(),
    )
}

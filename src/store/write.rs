//! Model records → rows. Every function takes the open transaction as a `&Connection`, so the
//! caller decides what is committed together (a whole run in `begin_run`, one experiment in
//! `add_result`). Statements are prepared through the connection's cache: one result can hold
//! tens of thousands of sample-counter rows, and re-parsing the SQL for each would dominate.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::columns::{int, optional_list, position_of, to_json};
use super::error::{During, StoreError};
use super::query::insert_each;
use super::schema;
use crate::model::env::Environment;
use crate::model::{ExperimentResult, Run, Sample};

/// The id of the row holding `env`, inserting it if no identical environment is stored yet.
/// Most runs on one machine share an environment, so this keeps one copy of the JSON.
pub(super) fn environment_id(
    conn: &Connection,
    path: &Path,
    env: &Environment,
) -> Result<i64, StoreError> {
    // serde_json writes struct fields in declaration order and `BTreeMap`s sorted, so the same
    // environment always gives the same text: the text is its canonical form.
    let json = to_json(path, "the environment", env)?;
    let hash = format!("{:016x}", fnv1a64(json.as_bytes()));
    let found: Option<i64> = conn
        .prepare_cached(schema::FIND_ENVIRONMENT)
        .during(path, "looking up the environment")?
        .query_row(params![hash, json], |row| row.get(0))
        .optional()
        .during(path, "looking up the environment")?;
    if let Some(id) = found {
        return Ok(id);
    }
    conn.prepare_cached(schema::INSERT_ENVIRONMENT)
        .during(path, "storing the environment")?
        .execute(params![hash, json])
        .during(path, "storing the environment")?;
    Ok(conn.last_insert_rowid())
}

/// Inserts the run row itself (not its results) and returns its id; `run.id` is ignored, the
/// database assigns ids.
pub(super) fn insert_run(
    conn: &Connection,
    path: &Path,
    run: &Run,
    environment_id: i64,
    uuid: &str,
) -> Result<i64, StoreError> {
    let settings = to_json(path, "the run settings", &run.settings)?;
    // A run made without an identity (a test's, a library caller's) gets one here: every
    // stored run has one.
    let uuid = if uuid.is_empty() {
        crate::model::identity::new_run_uuid()
    } else {
        uuid.to_string()
    };
    conn.prepare_cached(schema::INSERT_RUN)
        .during(path, "storing the run")?
        .execute(params![
            run.started_at,
            run.finished_at,
            run.tag,
            run.oslab_version,
            settings,
            run.clock.source,
            run.clock.reason,
            run.clock.tsc_hz,
            run.clock.overhead_ns,
            run.clock.resolution_ns,
            environment_id,
            uuid,
        ])
        .during(path, "storing the run")?;
    Ok(conn.last_insert_rowid())
}

pub(super) fn run_exists(conn: &Connection, path: &Path, run_id: i64) -> Result<bool, StoreError> {
    conn.prepare_cached(schema::RUN_EXISTS)
        .during(path, "looking up the run")?
        .query_row([run_id], |row| row.get(0))
        .during(path, "looking up the run")
}

/// The position the next result of `run_id` takes, so results load in the order they were
/// measured.
pub(super) fn next_position(
    conn: &Connection,
    path: &Path,
    run_id: i64,
) -> Result<i64, StoreError> {
    conn.prepare_cached(schema::NEXT_POSITION)
        .during(path, "numbering the result")?
        .query_row([run_id], |row| row.get(0))
        .during(path, "numbering the result")
}

/// Inserts one experiment's result with its samples, their counters, the counter statuses
/// and the validation checks.
pub(super) fn insert_result(
    conn: &Connection,
    path: &Path,
    run_id: i64,
    position: i64,
    result: &ExperimentResult,
) -> Result<(), StoreError> {
    const OP: &str = "storing a result";
    let calibration = &result.calibration;
    conn.prepare_cached(schema::INSERT_RESULT)
        .during(path, OP)?
        .execute(params![
            run_id,
            position,
            result.experiment,
            to_json(path, "the parameters", &result.params)?,
            result.unit,
            result.status.as_str(),
            result.reason,
            result.stop_reason.map(|s| s.as_str()),
            int(path, "ops_per_sample", calibration.ops_per_sample)?,
            calibration.timer_overhead_ns,
            calibration.loop_overhead_ns,
            calibration.warmup_ns,
            to_json(path, "the pinned CPUs", &calibration.cpus)?,
            result.started_at,
            result.duration_s,
            calibration.baseline_ns,
            result.other_cpus_busy,
            result.label,
            result
                .load
                .as_ref()
                .map(|l| to_json(path, "the load record", l))
                .transpose()?,
            optional_list(path, "the earlier runs' medians", &result.earlier_medians)?,
            result.emulation,
            optional_list(
                path,
                "the medians of the earlier runs in slow phases",
                &result.earlier_slow_medians,
            )?,
            optional_list(
                path,
                "the earlier runs' kernel canaries",
                &result.earlier_kernel_canaries,
            )?,
        ])
        .during(path, OP)?;
    let result_id = conn.last_insert_rowid();

    for (idx, sample) in result.samples.iter().enumerate() {
        insert_sample(conn, path, result_id, position_of(idx), sample)?;
    }

    insert_counters(conn, path, result_id, result)?;
    insert_checks_and_facts(conn, path, result_id, result)?;
    if let Some(profile) = &result.profile {
        super::profile::insert(conn, path, result_id, profile)?;
    }
    Ok(())
}

/// The counters' statuses and the probe counts of stored result `result_id`.
fn insert_counters(
    conn: &Connection,
    path: &Path,
    result_id: i64,
    result: &ExperimentResult,
) -> Result<(), StoreError> {
    insert_each(
        conn,
        path,
        (schema::INSERT_COUNTER_STATUS, "storing counter statuses"),
        &result.counters,
        |position, status| {
            Ok((
                result_id,
                position,
                &status.name,
                status.supported,
                &status.reason,
            ))
        },
    )?;
    insert_each(
        conn,
        path,
        (schema::INSERT_PROBE_COUNT, "storing probe counts"),
        &result.probes,
        |position, probe| {
            let c = &probe.count;
            Ok((
                result_id,
                position,
                &probe.name,
                int(path, "a probe's operations", probe.ops)?,
                c.value,
                int(path, "a counter's raw count", c.raw)?,
                int(path, "a counter's enabled time", c.enabled_ns)?,
                int(path, "a counter's running time", c.running_ns)?,
            ))
        },
    )
}

/// The validation checks and the facts of stored result `result_id`.
fn insert_checks_and_facts(
    conn: &Connection,
    path: &Path,
    result_id: i64,
    result: &ExperimentResult,
) -> Result<(), StoreError> {
    insert_each(
        conn,
        path,
        (schema::INSERT_VALIDATION, "storing validation checks"),
        &result.validation,
        |position, check| Ok((result_id, position, &check.check, check.ok, &check.detail)),
    )?;
    insert_each(
        conn,
        path,
        (schema::INSERT_FACT, "storing facts"),
        &result.facts,
        |position, fact| {
            Ok((
                result_id, position, &fact.name, fact.value, &fact.unit, &fact.note,
            ))
        },
    )
}

fn insert_sample(
    conn: &Connection,
    path: &Path,
    result_id: i64,
    idx: i64,
    sample: &Sample,
) -> Result<(), StoreError> {
    const OP: &str = "storing samples";
    let r = &sample.rusage;
    conn.prepare_cached(schema::INSERT_SAMPLE)
        .during(path, OP)?
        .execute(params![
            result_id,
            idx,
            int(path, "ops", sample.ops)?,
            sample.elapsed_ns,
            sample.ns_per_op,
            r.utime_us,
            r.stime_us,
            r.maxrss_kb,
            r.minflt,
            r.majflt,
            r.inblock,
            r.oublock,
            r.nvcsw,
            r.nivcsw,
        ])
        .during(path, OP)?;

    let others = [("partner", &sample.partner), ("children", &sample.children)];
    for (who, rusage) in others {
        let Some(r) = rusage else { continue };
        conn.prepare_cached(schema::INSERT_SAMPLE_RUSAGE)
            .during(path, "storing partner and children figures")?
            .execute(params![
                result_id,
                idx,
                who,
                r.utime_us,
                r.stime_us,
                r.maxrss_kb,
                r.minflt,
                r.majflt,
                r.inblock,
                r.oublock,
                r.nvcsw,
                r.nivcsw,
            ])
            .during(path, "storing partner and children figures")?;
    }

    insert_each(
        conn,
        path,
        (schema::INSERT_SAMPLE_COUNTER, "storing counter values"),
        &sample.counters,
        |_, (name, counter)| {
            Ok((
                result_id,
                idx,
                name,
                counter.value,
                int(path, "a counter's raw count", counter.raw)?,
                int(path, "a counter's enabled time", counter.enabled_ns)?,
                int(path, "a counter's running time", counter.running_ns)?,
            ))
        },
    )
}

/// FNV-1a, 64-bit (Fowler, Noll, Vo; draft-eastlake-fnv). Chosen because it is stable across
/// Rust releases and platforms (std's `DefaultHasher` promises neither) and needs no crate;
/// it only narrows the search, the JSON comparison decides, so collisions are harmless.
fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::fnv1a64;

    /// Published FNV-1a 64 test vectors (draft-eastlake-fnv, section 6 / test suite).
    #[test]
    fn fnv1a64_matches_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}

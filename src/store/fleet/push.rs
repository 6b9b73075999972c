//! Writing a run into the fleet store: the run's row, then its results, samples and figures
//! with binary COPY, all in one transaction.

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{Json, ToSql, Type};
use serde_json::Value;

use super::error::{FleetError, classify};
use super::{Fleet, schema};
use crate::model::{ExperimentResult, Run};

/// One configuration's figure as every view of oslab prints it (its median and interval,
/// from `report::pool`), stored so the fleet view needs no samples. Computed by the caller:
/// the store does not do statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFigure {
    /// Experiment, parameters and suite label: equal for the same configuration anywhere.
    pub config: String,
    /// How tables name it (`report::names::label`).
    pub name: String,
    pub experiment: String,
    pub unit: String,
    /// `ok`, `suspect`, `failed`…: as the result's status is written.
    pub status: String,
    pub processes: usize,
    pub median: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// What pushing one run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Stored as this run id of the fleet store.
    New(i64),
    /// The store had it already (from this machine or another, the same fingerprint), as
    /// this id.
    AlreadyThere(i64),
}

/// A run's parts as the store keeps them: the header and each result without its samples.
/// The samples are written from the run as they are sent, one at a time, not copied into
/// JSON values first (a run of 200 MB would take several times that).
struct Parts {
    header: Value,
    results: Vec<Value>,
}

fn split(run: &Run) -> Result<Parts, serde_json::Error> {
    let header = serde_json::to_value(Run {
        id: run.id,
        uuid: run.uuid.clone(),
        started_at: run.started_at,
        finished_at: run.finished_at,
        tag: run.tag.clone(),
        oslab_version: run.oslab_version.clone(),
        settings: run.settings.clone(),
        clock: run.clock.clone(),
        environment: run.environment.clone(),
        results: Vec::new(),
    })?;
    let results = run
        .results
        .iter()
        .map(|r| {
            serde_json::to_value(ExperimentResult {
                samples: Vec::new(),
                ..r.clone()
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Parts { header, results })
}

impl Fleet {
    /// Store `run` unless the store has its UUID already. One transaction: a push cut short
    /// (the connection lost, oslab killed) leaves nothing of the run, and the next push
    /// stores it whole.
    pub fn push(&mut self, run: &Run, figures: &[ConfigFigure]) -> Result<Pushed, FleetError> {
        let uuid = uuid::Uuid::try_parse(&run.uuid)
            .map_err(|e| self.data("reading the run's identity", format!("{:?}: {e}", run.uuid)))?;
        let parts = split(run).map_err(|e| self.data("writing the run as JSON", e))?;
        let print = crate::store::fingerprint(run);
        let shown = self.target.shown().to_string();
        let secret = self.target.password();
        let what = format!("pushing run {}", run.id);
        let fail = |e: postgres::Error| classify(&e, &shown, secret.as_deref(), &what);
        let mut tx = self.client.transaction().map_err(fail)?;
        let Some(id) = insert_run(&mut tx, run, uuid, &parts.header, &print).map_err(fail)? else {
            let row = tx.query_one(schema::FIND_RUN, &[&uuid]).map_err(fail)?;
            tx.commit().map_err(fail)?;
            let (id, theirs): (i64, Option<String>) = (row.get(0), row.get(1));
            return self.same_run(run, id, theirs, &print);
        };
        copy_rows(&mut tx, id, run, &parts, figures).map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(Pushed::New(id))
    }

    /// The store holds `run`'s UUID as `id`, of fingerprint `theirs`: the same run (already
    /// there), or another one under the same identity, refused as `oslab import` refuses it.
    /// A run pushed before the store kept fingerprints is read back to compare, and its
    /// fingerprint kept.
    fn same_run(
        &mut self,
        run: &Run,
        id: i64,
        theirs: Option<String>,
        print: &str,
    ) -> Result<Pushed, FleetError> {
        let theirs = match theirs {
            Some(theirs) => theirs,
            None => {
                let theirs = crate::store::fingerprint(&self.load_run(id)?);
                if theirs == print {
                    self.client
                        .execute(schema::SET_FINGERPRINT, &[&id, &theirs])
                        .map_err(|e| self.fail(&e, "keeping a run's fingerprint"))?;
                }
                theirs
            }
        };
        if theirs == print {
            return Ok(Pushed::AlreadyThere(id));
        }
        Err(FleetError::UuidConflict {
            target: self.shown().to_string(),
            uuid: run.uuid.clone(),
            id,
        })
    }
}

/// The run's row; `None` when the store has its UUID already.
fn insert_run(
    tx: &mut postgres::Transaction<'_>,
    run: &Run,
    uuid: uuid::Uuid,
    header: &Value,
    print: &str,
) -> Result<Option<i64>, postgres::Error> {
    let env = &run.environment;
    let row = tx.query_opt(
        schema::INSERT_RUN,
        &[
            &uuid,
            &run.started_at,
            &run.finished_at,
            &run.tag,
            &run.oslab_version,
            &env.machine,
            &env.hostname,
            &env.os,
            &env.os_release,
            &env.kernel_release,
            &env.arch,
            &env.cpu_model,
            &Json(header),
            &print,
        ],
    )?;
    Ok(row.map(|r| r.get(0)))
}

/// One binary COPY: `sql`'s columns of `types`, the rows `write` gives.
fn copy(
    tx: &mut postgres::Transaction<'_>,
    sql: &str,
    types: &[Type],
    write: impl FnOnce(&mut BinaryCopyInWriter<'_>) -> Result<(), postgres::Error>,
) -> Result<(), postgres::Error> {
    let mut writer = BinaryCopyInWriter::new(tx.copy_in(sql)?, types);
    write(&mut writer)?;
    writer.finish().map(drop)
}

/// The run's results, samples and figures, each table in one COPY.
fn copy_rows(
    tx: &mut postgres::Transaction<'_>,
    id: i64,
    run: &Run,
    parts: &Parts,
    figures: &[ConfigFigure],
) -> Result<(), postgres::Error> {
    use Type as T;
    copy(
        tx,
        schema::COPY_RESULTS,
        &[T::INT8, T::INT4, T::JSONB],
        |w| {
            for (position, doc) in parts.results.iter().enumerate() {
                w.write(&[&id, &(position as i32), &Json(doc)])?;
            }
            Ok(())
        },
    )?;
    let types = [T::INT8, T::INT4, T::INT4, T::FLOAT8, T::JSONB];
    copy(tx, schema::COPY_SAMPLES, &types, |w| {
        for (position, result) in (0_i32..).zip(&run.results) {
            for (idx, sample) in (0_i32..).zip(&result.samples) {
                w.write(&[&id, &position, &idx, &sample.ns_per_op, &Json(sample)])?;
            }
        }
        Ok(())
    })?;
    let types = [
        T::INT8,
        T::INT4,
        T::TEXT,
        T::TEXT,
        T::TEXT,
        T::TEXT,
        T::TEXT,
        T::INT4,
        T::FLOAT8,
        T::FLOAT8,
        T::FLOAT8,
    ];
    copy(tx, schema::COPY_FIGURES, &types, |w| {
        for (position, f) in figures.iter().enumerate() {
            let processes = i32::try_from(f.processes).unwrap_or(i32::MAX);
            let row: [&(dyn ToSql + Sync); 11] = [
                &id,
                &(position as i32),
                &f.config,
                &f.name,
                &f.experiment,
                &f.unit,
                &f.status,
                &processes,
                &f.median,
                &f.low,
                &f.high,
            ];
            w.write(&row)?;
        }
        Ok(())
    })
}

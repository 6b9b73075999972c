//! Reading runs back from the fleet store, whole (as `oslab export` would write them) or as
//! the figures the fleet view groups.

use postgres::types::Json;
use serde_json::Value;

use super::{Fleet, schema};
use crate::model::Run;
use crate::store::RunSummary;

/// One configuration's figure in one run, with the fields of the run the fleet view groups
/// by.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetFigure {
    pub run_id: i64,
    pub run_uuid: String,
    /// The hashed machine id; the host name where a run has none.
    pub machine: String,
    pub hostname: Option<String>,
    pub os: String,
    pub kernel: Option<String>,
    pub cpu: Option<String>,
    pub arch: String,
    pub tag: Option<String>,
    pub config: String,
    pub name: String,
    pub unit: String,
    pub status: String,
    pub median: Option<f64>,
}

impl Fleet {
    /// The run stored as `id`, every field as it was pushed; `NoSuchRun` when there is none.
    pub fn load_run(&mut self, id: i64) -> Result<Run, FleetError> {
        let what = "reading a run";
        let header = self
            .client
            .query_opt(schema::SELECT_HEADER, &[&id])
            .map_err(|e| self.fail(&e, what))?;
        let Some(header) = header else {
            return Err(FleetError::NoSuchRun {
                target: self.shown().to_string(),
                which: id.to_string(),
            });
        };
        let Json(mut doc): Json<Value> = header.get(0);
        let mut results: Vec<Value> = self
            .client
            .query(schema::SELECT_RESULTS, &[&id])
            .map_err(|e| self.fail(&e, what))?
            .iter()
            .map(|row| row.get::<_, Json<Value>>(0).0)
            .collect();
        for row in self
            .client
            .query(schema::SELECT_SAMPLES, &[&id])
            .map_err(|e| self.fail(&e, what))?
        {
            let position: i32 = row.get(0);
            let Json(sample): Json<Value> = row.get(1);
            let Some(Value::Array(list)) = usize::try_from(position)
                .ok()
                .and_then(|p| results.get_mut(p))
                .and_then(|r| r.get_mut("samples"))
            else {
                return Err(self.data(
                    what,
                    format!("a sample of result {position}, which is not there"),
                ));
            };
            list.push(sample);
        }
        doc["results"] = Value::Array(results);
        let mut run: Run = serde_json::from_value(doc).map_err(|e| self.data(what, e))?;
        run.id = id;
        Ok(run)
    }

    /// The most recently started run.
    pub fn latest_run_id(&mut self) -> Result<Option<i64>, FleetError> {
        self.one_id(schema::LATEST_RUN, &[])
    }

    /// The most recently started run carrying `tag`.
    pub fn run_id_for_tag(&mut self, tag: &str) -> Result<Option<i64>, FleetError> {
        self.one_id(schema::LATEST_RUN_WITH_TAG, &[&tag])
    }

    /// The run with this UUID (as `show --json` prints it).
    pub fn run_id_for_uuid(&mut self, uuid: &str) -> Result<Option<i64>, FleetError> {
        self.one_id(schema::RUN_BY_UUID, &[&uuid])
    }

    fn one_id(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Option<i64>, FleetError> {
        let row = self
            .client
            .query_opt(sql, params)
            .map_err(|e| self.fail(&e, "looking up runs"))?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Every run, oldest first.
    pub fn list_runs(&mut self) -> Result<Vec<RunSummary>, FleetError> {
        let rows = self
            .client
            .query(schema::LIST_RUNS, &[])
            .map_err(|e| self.fail(&e, "listing runs"))?;
        Ok(rows
            .iter()
            .map(|r| RunSummary {
                id: r.get(0),
                started_at: r.get::<_, Option<f64>>(1).unwrap_or(f64::NAN),
                finished_at: r.get(2),
                tag: r.get(3),
                results: usize::try_from(r.get::<_, i64>(4)).unwrap_or(0),
                hostname: r.get(5),
                kernel_release: r.get(6),
            })
            .collect())
    }

    /// Every configuration's figure of every run, by configuration, then run.
    pub fn figures(&mut self) -> Result<Vec<FleetFigure>, FleetError> {
        let rows = self
            .client
            .query(schema::FLEET_FIGURES, &[])
            .map_err(|e| self.fail(&e, "reading the fleet's figures"))?;
        Ok(rows
            .iter()
            .map(|r| {
                let hostname: Option<String> = r.get(3);
                FleetFigure {
                    run_id: r.get(0),
                    run_uuid: r.get(1),
                    machine: r
                        .get::<_, Option<String>>(2)
                        .or_else(|| hostname.clone().map(|h| format!("host:{h}")))
                        .unwrap_or_else(|| "unknown".into()),
                    hostname,
                    os: r.get(4),
                    kernel: r.get(5),
                    cpu: r.get(6),
                    arch: r.get(7),
                    tag: r.get(8),
                    config: r.get(9),
                    name: r.get(10),
                    unit: r.get(11),
                    status: r.get(12),
                    median: r.get(13),
                }
            })
            .collect())
    }
}

use super::FleetError;

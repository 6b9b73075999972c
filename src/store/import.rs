//! Storing a run exported on another machine (`oslab import`), once.
//!
//! A run is identified by its UUID, and one exported before runs had UUIDs by its fingerprint: FNV-1a 128 of its canonical JSON with the id set to
//! 0 (serde writes struct fields in declaration order and maps sorted, so the same run always
//! gives the same text). The `imports` table maps fingerprints to the local run ids, so a file
//! imported twice is found; a local run exported and imported back into its own database is
//! found by recomputing the fingerprint of the local runs with the same start time.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::error::{During, StoreError};
use super::{Store, read, schema, write};
use crate::model::Run;

/// What `import_run` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// Stored as a new run with this id.
    New(i64),
    /// The same run was imported before, as this run.
    AlreadyImported(i64),
    /// The same run is already in this database, measured here (exported and brought back).
    AlreadyStored(i64),
    /// `stop` said to stop before the import was committed: nothing was stored.
    Stopped,
}

/// The identity of a run independent of the database it is in: 32 hex digits.
pub fn fingerprint(run: &Run) -> String {
    let anonymous = Run {
        id: 0,
        uuid: String::new(),
        ..run.clone()
    };
    // Serialising a `Run` cannot fail: every map key is a string.
    let json = serde_json::to_string(&anonymous).unwrap_or_default();
    format!("{:032x}", fnv1a128(json.as_bytes()))
}

/// FNV-1a, 128-bit (Fowler, Noll, Vo; draft-eastlake-fnv): 64 bits would make an accidental
/// collision between two different runs merely unlikely; 128 makes it negligible.
fn fnv1a128(bytes: &[u8]) -> u128 {
    const OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    })
}

impl Store {
    /// Store `run` (with its environment and every result, `run.id` ignored) unless the same
    /// run is already here; all in one transaction, so a failure stores nothing. `stop` is
    /// asked before each result and before the commit (Ctrl-C): when it says yes, the
    /// transaction is rolled back and nothing is stored.
    pub fn import_run(
        &mut self,
        run: &Run,
        stop: &dyn Fn() -> bool,
    ) -> Result<Imported, StoreError> {
        let print = fingerprint(run);
        let uuid = if run.uuid.is_empty() {
            crate::model::identity::run_uuid_from_fingerprint(&print).unwrap_or_default()
        } else {
            run.uuid.clone()
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .during(&self.path, "starting an import")?;
        let same: Option<i64> = tx
            .prepare_cached(schema::FIND_RUN_UUID)
            .during(&self.path, "looking for the same run")?
            .query_row([&uuid], |row| row.get(0))
            .optional()
            .during(&self.path, "looking for the same run")?;
        let known: Option<i64> = tx
            .prepare_cached(schema::FIND_IMPORT)
            .during(&self.path, "looking up earlier imports")?
            .query_row([&print], |row| row.get(0))
            .optional()
            .during(&self.path, "looking up earlier imports")?;
        match (known, same) {
            (Some(id), _) => return Ok(Imported::AlreadyImported(id)),
            (None, Some(id)) if fingerprint(&read::run(&tx, &self.path, id)?) == print => {
                return Ok(Imported::AlreadyStored(id));
            }
            (None, Some(id)) => {
                return Err(StoreError::UuidConflict {
                    path: self.path.clone(),
                    uuid,
                    run_id: id,
                });
            }
            (None, None) => {}
        }
        let candidates: Vec<i64> = tx
            .prepare_cached(schema::RUNS_STARTED_AT)
            .during(&self.path, "looking for the same run")?
            .query_map([run.started_at], |row| row.get(0))
            .during(&self.path, "looking for the same run")?
            .collect::<Result<_, _>>()
            .during(&self.path, "looking for the same run")?;
        for id in candidates {
            if fingerprint(&read::run(&tx, &self.path, id)?) == print {
                return Ok(Imported::AlreadyStored(id));
            }
        }
        let environment_id = write::environment_id(&tx, &self.path, &run.environment)?;
        let run_id = write::insert_run(&tx, &self.path, run, environment_id, &uuid)?;
        for (position, result) in (0_i64..).zip(&run.results) {
            if stop() {
                return Ok(Imported::Stopped); // dropping `tx` rolls back
            }
            write::insert_result(&tx, &self.path, run_id, position, result)?;
        }
        if stop() {
            return Ok(Imported::Stopped);
        }
        tx.prepare_cached(schema::INSERT_IMPORT)
            .during(&self.path, "recording the import")?
            .execute(params![print, run_id])
            .during(&self.path, "recording the import")?;
        tx.commit().during(&self.path, "committing the import")?;
        Ok(Imported::New(run_id))
    }
}

#[cfg(test)]
mod tests {
    use super::fnv1a128;

    /// Published FNV-1a 128 test vectors (draft-eastlake-fnv, test suite).
    #[test]
    fn fnv1a128_matches_reference_vectors() {
        assert_eq!(fnv1a128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(fnv1a128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }
}

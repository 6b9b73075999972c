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
use crate::model::{ExperimentResult, Run};

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

/// [`fingerprint`] of a run met one result at a time (a streamed import): the same text
/// hashed in the same order, the header's JSON up to its `results` array, then each result.
pub struct Fingerprinting {
    hash: u128,
    results: usize,
}

impl Fingerprinting {
    /// `header` is the run without its results (any it has are left out).
    pub fn new(header: &Run) -> Self {
        let anonymous = Run {
            id: 0,
            uuid: String::new(),
            results: Vec::new(),
            ..header.clone()
        };
        // `results` is the run's last field: its text ends `"results":[]}`.
        let json = serde_json::to_string(&anonymous).unwrap_or_default();
        let open = json.strip_suffix("]}").unwrap_or(&json);
        Self {
            hash: fnv1a128_from(OFFSET_BASIS, open.as_bytes()),
            results: 0,
        }
    }

    /// The run's next result.
    pub fn result(&mut self, result: &ExperimentResult) {
        if self.results > 0 {
            self.hash = fnv1a128_from(self.hash, b",");
        }
        self.results += 1;
        // Written straight into the hash: no copy of the result's text is kept.
        let _ = serde_json::to_writer(&mut *self, result);
    }

    pub fn finish(self) -> String {
        format!("{:032x}", fnv1a128_from(self.hash, b"]}"))
    }
}

impl std::io::Write for Fingerprinting {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.hash = fnv1a128_from(self.hash, bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;

/// FNV-1a, 128-bit (Fowler, Noll, Vo; draft-eastlake-fnv): 64 bits would make an accidental
/// collision between two different runs merely unlikely; 128 makes it negligible.
fn fnv1a128(bytes: &[u8]) -> u128 {
    fnv1a128_from(OFFSET_BASIS, bytes)
}

/// FNV-1a 128 continued from `hash` over `bytes`.
fn fnv1a128_from(hash: u128, bytes: &[u8]) -> u128 {
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(hash, |hash, &byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    })
}

/// What [`Store::import_begin`] found: the run is here already, or its import has begun.
pub enum Begin<'a> {
    Done(Imported),
    Importing(Importing<'a>),
}

/// An import under way: the run's row written in an open transaction, its results added one
/// at a time. Dropped without [`Importing::commit`], it stores nothing.
pub struct Importing<'a> {
    tx: rusqlite::Transaction<'a>,
    path: &'a std::path::Path,
    run_id: i64,
    position: i64,
    print: String,
}

impl Importing<'_> {
    /// The run's next result.
    pub fn result(&mut self, result: &ExperimentResult) -> Result<(), StoreError> {
        write::insert_result(&self.tx, self.path, self.run_id, self.position, result)?;
        self.position += 1;
        Ok(())
    }

    /// Record the import and commit: the run is stored whole, as this id.
    pub fn commit(self) -> Result<i64, StoreError> {
        self.tx
            .prepare_cached(schema::INSERT_IMPORT)
            .during(self.path, "recording the import")?
            .execute(params![self.print, self.run_id])
            .during(self.path, "recording the import")?;
        self.tx
            .commit()
            .during(self.path, "committing the import")?;
        Ok(self.run_id)
    }
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
        let mut importing = match self.import_begin(run, &fingerprint(run))? {
            Begin::Done(done) => return Ok(done),
            Begin::Importing(importing) => importing,
        };
        for result in &run.results {
            if stop() {
                return Ok(Imported::Stopped); // dropping the transaction rolls back
            }
            importing.result(result)?;
        }
        if stop() {
            return Ok(Imported::Stopped);
        }
        importing.commit().map(Imported::New)
    }

    /// Begin importing the run of `header` (its results are not looked at), whose
    /// [`fingerprint`] is `print`: `Done` when the same run is here already, else its row
    /// written in a transaction for its results to follow.
    pub fn import_begin(&mut self, header: &Run, print: &str) -> Result<Begin<'_>, StoreError> {
        let path = &self.path;
        let uuid = if header.uuid.is_empty() {
            crate::model::identity::run_uuid_from_fingerprint(print).unwrap_or_default()
        } else {
            header.uuid.clone()
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .during(path, "starting an import")?;
        if let Some(done) = same_run(&tx, path, print, &uuid, header.started_at)? {
            return Ok(Begin::Done(done));
        }
        let environment_id = write::environment_id(&tx, path, &header.environment)?;
        let run_id = write::insert_run(&tx, path, header, environment_id, &uuid)?;
        Ok(Begin::Importing(Importing {
            tx,
            path,
            run_id,
            position: 0,
            print: print.to_string(),
        }))
    }
}

/// The run of fingerprint `print` and identity `uuid` if the database has it (imported
/// before, or measured here and exported); an error when `uuid` is another run's.
fn same_run(
    tx: &rusqlite::Transaction<'_>,
    path: &std::path::Path,
    print: &str,
    uuid: &str,
    started_at: f64,
) -> Result<Option<Imported>, StoreError> {
    let same: Option<i64> = tx
        .prepare_cached(schema::FIND_RUN_UUID)
        .during(path, "looking for the same run")?
        .query_row([uuid], |row| row.get(0))
        .optional()
        .during(path, "looking for the same run")?;
    let known: Option<i64> = tx
        .prepare_cached(schema::FIND_IMPORT)
        .during(path, "looking up earlier imports")?
        .query_row([print], |row| row.get(0))
        .optional()
        .during(path, "looking up earlier imports")?;
    match (known, same) {
        (Some(id), _) => return Ok(Some(Imported::AlreadyImported(id))),
        (None, Some(id)) if stored_fingerprint(tx, path, id)? == print => {
            return Ok(Some(Imported::AlreadyStored(id)));
        }
        (None, Some(id)) => {
            return Err(StoreError::UuidConflict {
                path: path.to_path_buf(),
                uuid: uuid.to_string(),
                run_id: id,
            });
        }
        (None, None) => {}
    }
    let candidates: Vec<i64> = super::query::rows(
        tx,
        path,
        (schema::RUNS_STARTED_AT, "looking for the same run"),
        [started_at],
        |row| row.get(0),
    )?;
    for id in candidates {
        if stored_fingerprint(tx, path, id)? == print {
            return Ok(Some(Imported::AlreadyStored(id)));
        }
    }
    Ok(None)
}

/// The fingerprint of stored run `id`.
fn stored_fingerprint(
    conn: &rusqlite::Connection,
    path: &std::path::Path,
    id: i64,
) -> Result<String, StoreError> {
    Ok(fingerprint(&read::run(conn, path, id)?))
}

#[cfg(test)]
mod tests {
    use super::{Fingerprinting, fingerprint, fnv1a128};
    use crate::store::tests::{run, syscall_result};

    /// A run hashed result by result gives the fingerprint of the whole run.
    #[test]
    fn fingerprinting_one_result_at_a_time_is_the_fingerprint() {
        for n in [0, 1, 3] {
            let r = run(Some("t"), 1.5, vec![syscall_result(); n]);
            let mut f = Fingerprinting::new(&r);
            for result in &r.results {
                f.result(result);
            }
            assert_eq!(f.finish(), fingerprint(&r), "{n} results");
        }
    }

    /// Published FNV-1a 128 test vectors (draft-eastlake-fnv, test suite).
    #[test]
    fn fnv1a128_matches_reference_vectors() {
        assert_eq!(fnv1a128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(fnv1a128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }
}

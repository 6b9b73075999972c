//! Deciding whether a file may be used, and bringing its schema up to date.
//!
//! The rule is "look before writing": everything that can refuse a file (not SQLite, another
//! program's database, a schema from a newer oslab) is decided from a read of the header and
//! `sqlite_schema` before the first write, so a refused file is left byte-for-byte as it was.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::error::{During, StoreError};
use super::schema::{
    APPLICATION_ID, INSPECT, MIGRATIONS, RUNS_WITHOUT_UUID, SCHEMA_VERSION, SET_RUN_UUID,
};

/// What the file says about itself before oslab touches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub application_id: i32,
    pub user_version: i64,
    /// Tables, indexes, views and triggers in `sqlite_schema`.
    pub objects: i64,
}

pub(super) fn inspect(conn: &Connection, path: &Path) -> Result<Header, StoreError> {
    conn.query_row(INSPECT, [], |row| {
        Ok(Header {
            application_id: row.get(0)?,
            user_version: row.get(1)?,
            objects: row.get(2)?,
        })
    })
    .during(path, "reading the database header")
}

/// Refuses a file oslab must not write to. `Ok(())` means it is ours (at any schema this build
/// knows) or blank.
///
/// A blank file has application_id 0 and no schema objects: a new or 0-byte file, or an
/// SQLite file nobody has put anything into. A non-zero application_id that is not ours is
/// refused even without tables, because another program has claimed the file.
pub(super) fn admit(header: Header, path: &Path) -> Result<(), StoreError> {
    let ours = header.application_id == APPLICATION_ID;
    let blank = header.application_id == 0 && header.objects == 0;
    if !ours && !blank {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            application_id: header.application_id,
            objects: header.objects,
        });
    }
    if header.user_version > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: header.user_version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Applies the migration steps the file lacks, each in its own IMMEDIATE transaction, and
/// returns the schema version found before the first step ran (`None` if none was needed).
///
/// A file that is already current is not written, not even locked for writing, so `show`
/// works on a read-only copy. Each step re-reads the header under the write lock: another
/// oslab may have created or migrated the same file meanwhile, and then the step is skipped
/// rather than applied twice.
pub(super) fn migrate(
    conn: &mut Connection,
    path: &Path,
    header: Header,
) -> Result<Option<i64>, StoreError> {
    if header.user_version == SCHEMA_VERSION && header.application_id == APPLICATION_ID {
        return Ok(None);
    }
    let mut migrated_from = None;
    for (step, sql) in MIGRATIONS.iter().enumerate() {
        let target = i64::try_from(step).map_or(i64::MAX, |s| s + 1);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .during(path, "locking the database to update its schema")?;
        let now = inspect(&tx, path)?;
        admit(now, path)?;
        if now.user_version >= target {
            continue; // dropping `tx` rolls back an empty transaction
        }
        migrated_from.get_or_insert(now.user_version);
        tx.execute_batch(sql)
            .during(path, "updating the database schema")?;
        // With the last step, not with schema 6's (which adds `runs.uuid`): a run is read
        // whole, with the columns of every step (the step that crossed 6 may have been
        // committed alone, before a crash).
        if target == SCHEMA_VERSION {
            fill_run_uuids(&tx, path)?;
        }
        // Both header fields are part of page 1, so they change atomically with the tables:
        // a crash leaves either the old schema and version or the new ones.
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .during(path, "updating the database schema")?;
        tx.pragma_update(None, "user_version", target)
            .during(path, "updating the database schema")?;
        tx.commit().during(path, "updating the database schema")?;
    }
    Ok(migrated_from)
}

/// Schema 6's second half, done with the newest step: each run stored before it and still
/// without one gets the UUID of its fingerprint
/// (`model::identity::run_uuid_from_fingerprint`), the one `oslab import` gives the same run
/// exported before schema 6, so neither copy can be pushed as a second run.
fn fill_run_uuids(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    const OP: &str = "giving the stored runs their identities";
    let ids: Vec<i64> =
        super::query::rows(conn, path, (RUNS_WITHOUT_UUID, OP), [], |row| row.get(0))?;
    for id in ids {
        let run = super::read::run(conn, path, id)?;
        let uuid = crate::model::identity::run_uuid_from_fingerprint(&super::fingerprint(&run))
            .unwrap_or_else(crate::model::identity::new_run_uuid);
        conn.execute(SET_RUN_UUID, rusqlite::params![id, uuid])
            .during(path, OP)?;
    }
    Ok(())
}

//! The fleet store: many machines' runs in one PostgreSQL database (`oslab push`, and
//! `--store` on `show`, `compare`, `report` and `export`).
//!
//! The local SQLite file stays the store every run is written to first; a fleet store takes
//! copies. A run's identity is its UUID (`model::identity`): pushing is idempotent because
//! the server holds each UUID once, and a run goes in one transaction, so a push cut short
//! leaves the whole run or none of it. Layout: `target.rs` finds the server, `schema.rs` holds
//! every statement, `push.rs` writes, `read.rs` reads.

mod error;
mod push;
mod read;
mod schema;
mod target;

pub use error::FleetError;
pub use push::{ConfigFigure, Pushed};
pub use read::FleetFigure;
pub use target::{Target, mask_url};

use error::classify;

/// An open connection to a fleet store whose schema is current.
pub struct Fleet {
    client: postgres::Client,
    target: Target,
    store_id: String,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("target", &self.target.shown())
            .finish_non_exhaustive()
    }
}

impl Fleet {
    /// Connect, and create or update the schema (under the advisory lock). A server whose
    /// schema is newer than this build's, or whose `oslab.meta` is another program's, is
    /// refused before anything is written.
    pub fn connect(target: Target) -> Result<Fleet, FleetError> {
        let tls = target.connector()?;
        let mut client = target.config.connect(tls).map_err(|e| {
            classify(
                &e,
                target.shown(),
                target.password().as_deref(),
                "connecting",
            )
        })?;
        migrate(&mut client, &target)?;
        let store_id = store_id(&mut client, &target)?;
        Ok(Fleet {
            client,
            target,
            store_id,
        })
    }

    /// The store as printed, its password masked.
    pub fn shown(&self) -> &str {
        self.target.shown()
    }

    /// The server's own identity (made with its schema): what a local file remembers of the
    /// stores it pushed to, instead of their URLs.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    fn fail(&self, e: &postgres::Error, what: &str) -> FleetError {
        classify(
            e,
            self.target.shown(),
            self.target.password().as_deref(),
            what,
        )
    }

    fn data(&self, what: &str, detail: impl std::fmt::Display) -> FleetError {
        FleetError::Data {
            target: self.target.shown().to_string(),
            what: what.to_string(),
            detail: detail.to_string(),
        }
    }
}

/// Bring the schema up to date. The version is read first without a lock (the common case:
/// current, nothing to do); otherwise under the advisory lock, read again in a transaction
/// begun after the lock was granted, so of many clients arriving at a new server at once one
/// creates the schema and the others find it made. (The lock is the session's, not the
/// transaction's: a transaction already open when another's schema commits may still resolve
/// names from its stale catalog cache and try to create the tables again.)
fn migrate(client: &mut postgres::Client, target: &Target) -> Result<(), FleetError> {
    let fail = |e: postgres::Error, what: &str| {
        classify(&e, target.shown(), target.password().as_deref(), what)
    };
    if version(client, target)? == schema::SCHEMA_VERSION {
        return Ok(());
    }
    client
        .execute("SELECT pg_advisory_lock($1)", &[&schema::MIGRATION_LOCK])
        .map_err(|e| fail(e, "locking the schema"))?;
    let migrated = (|| {
        let mut tx = client
            .transaction()
            .map_err(|e| fail(e, "updating the schema"))?;
        let found = version(&mut tx, target)?;
        for (step, sql) in schema::MIGRATIONS.iter().enumerate().skip(found as usize) {
            tx.batch_execute(sql)
                .map_err(|e| fail(e, "updating the schema"))?;
            tx.execute(schema::SET_VERSION, &[&(step as i64 + 1).to_string()])
                .map_err(|e| fail(e, "updating the schema"))?;
        }
        tx.commit().map_err(|e| fail(e, "updating the schema"))
    })();
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&schema::MIGRATION_LOCK])
        .map_err(|e| fail(e, "unlocking the schema"));
    migrated.and(unlocked.map(drop))
}

/// The schema version (0 for a database without oslab's tables); refuses a newer one.
fn version(client: &mut impl postgres::GenericClient, target: &Target) -> Result<i64, FleetError> {
    let fail = |e: postgres::Error| {
        classify(
            &e,
            target.shown(),
            target.password().as_deref(),
            "reading the schema version",
        )
    };
    let has_meta: bool = client
        .query_one(schema::HAS_META, &[])
        .map_err(fail)?
        .get(0);
    let foreign = || FleetError::Foreign {
        target: target.shown().to_string(),
    };
    let found: Option<String> = if has_meta {
        // Another program's table of the same name, whatever its columns, is refused before
        // a query naming oslab's columns could fail on it or a migration collide with it.
        let shaped: bool = client
            .query_one(schema::META_IS_OURS, &[])
            .map_err(fail)?
            .get(0);
        let application: Option<String> = if shaped {
            client
                .query_opt(schema::READ_APPLICATION, &[])
                .map_err(fail)?
                .map(|row| row.get(0))
        } else {
            None
        };
        if application.as_deref() != Some("oslab") {
            return Err(foreign());
        }
        // oslab writes the version in the same transaction: a table without it is not ours.
        let version: Option<String> = client
            .query_opt(schema::READ_VERSION, &[])
            .map_err(fail)?
            .map(|row| row.get(0));
        Some(version.ok_or_else(foreign)?)
    } else {
        None
    };
    let found = match found {
        None => 0,
        Some(v) => v.parse::<i64>().map_err(|_| foreign())?,
    };
    if found > schema::SCHEMA_VERSION {
        return Err(FleetError::TooNew {
            target: target.shown().to_string(),
            found,
            supported: schema::SCHEMA_VERSION,
        });
    }
    Ok(found)
}

fn store_id(client: &mut postgres::Client, target: &Target) -> Result<String, FleetError> {
    let rows = client.query(schema::META, &[]).map_err(|e| {
        classify(
            &e,
            target.shown(),
            target.password().as_deref(),
            "reading the store's identity",
        )
    })?;
    let get = |key: &str| {
        rows.iter()
            .find(|r| r.get::<_, String>(0) == key)
            .map(|r| r.get::<_, String>(1))
    };
    match (get("application").as_deref(), get("store_id")) {
        (Some("oslab"), Some(id)) => Ok(id),
        _ => Err(FleetError::Foreign {
            target: target.shown().to_string(),
        }),
    }
}

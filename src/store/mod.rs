//! The results database: one SQLite file holding every run, its environment, every raw
//! sample with its rusage and counters, and the validation of each result.
//!
//! Why SQLite: embedded (no server to install on the machine being measured), one file to
//! copy between machines, transactions so that each experiment is committed as soon as it
//! finishes and an interrupted run keeps what it measured (DESIGN.md, `store/`).
//!
//! Layout: `schema.rs` holds every SQL statement and the migrations, `open.rs` decides whether
//! a file may be used, `write.rs` and `read.rs` map records to rows and back, through
//! `query.rs`'s two shapes (a query's rows, an insert per item).

mod columns;
mod error;
pub mod fleet;
mod import;
mod open;
mod profile;
mod pushes;
mod query;
mod read;
mod schema;
mod write;

#[cfg(test)]
pub(crate) mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

pub use error::StoreError;
use error::{BUSY_TIMEOUT_S, During};
pub use import::{Begin, Fingerprinting, Imported, Importing, fingerprint};

use crate::model::{ExperimentResult, Run};

/// One line of a run listing: enough to pick a run without loading its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub started_at: f64,
    pub finished_at: Option<f64>,
    pub tag: Option<String>,
    /// Number of experiment results stored so far.
    pub results: usize,
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    migrated_from: Option<i64>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Statements prepared once per connection and reused: the writer uses about ten, the reader
/// about ten more; rusqlite's default cache of 16 would evict some on every result.
const STATEMENT_CACHE: usize = 32;

impl Store {
    /// Open or create. Creates the file (not its parent directory: error naming the directory
    /// if it is missing).
    ///
    /// A new or empty file gets the current schema. A file that is not SQLite, another
    /// program's database, or one written by a newer oslab is refused without being changed.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(no_directory(path, dir)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(no_directory(path, dir));
            }
            Err(source) => {
                return Err(StoreError::Io {
                    path: dir.to_path_buf(),
                    source,
                });
            }
        }
        not_a_file(path)?;
        let existed = path.try_exists().unwrap_or(true);
        let opened = Store::connect(path, OpenFlags::SQLITE_OPEN_CREATE).and_then(|store| {
            store.check_pages()?;
            Ok(store)
        });
        if opened.is_err() && !existed {
            // A file this call created and could not set up (a full disk) holds nothing: it
            // goes, instead of staying behind as an empty "database". Only while still empty,
            // in case another oslab created the same file meanwhile and wrote to it.
            if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(path);
            }
        }
        opened
    }

    /// Before writing into a file: SQLite's `PRAGMA quick_check` (every page and record
    /// well-formed; linear in the file's size, milliseconds for a year of runs). New results
    /// written into a damaged file could be lost with it, so a damaged file is refused.
    fn check_pages(&self) -> Result<(), StoreError> {
        const OP: &str = "checking the database's pages";
        let findings: Vec<String> = query::rows(
            &self.conn,
            &self.path,
            ("PRAGMA quick_check(3)", OP),
            [],
            |row| row.get(0),
        )?;
        match findings.as_slice() {
            [ok] if ok == "ok" => Ok(()),
            _ => Err(StoreError::Corrupt {
                path: self.path.clone(),
                what: OP.to_string(),
                detail: findings.join("; ").replace('\n', " "),
            }),
        }
    }

    /// Open an existing database only (for `show`): a missing file is `StoreError::Missing`.
    ///
    /// The file is opened without SQLite's create flag, so a race with a deletion cannot leave
    /// an empty database behind either.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        match path.try_exists() {
            Ok(true) => {
                not_a_file(path)?;
                Store::connect(path, OpenFlags::empty())
            }
            Ok(false) => Err(StoreError::Missing {
                path: path.to_path_buf(),
            }),
            Err(source) => Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    fn connect(path: &Path, extra: OpenFlags) -> Result<Store, StoreError> {
        // No SQLITE_OPEN_URI: a --db path that happens to start with `file:` is a file name.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra;
        let mut conn = Connection::open_with_flags(path, flags).during(path, "opening")?;
        // Two oslab processes on one file (a `show` during a `run`) wait for each other's
        // short transactions instead of failing at once with SQLITE_BUSY.
        conn.busy_timeout(Duration::from_secs(BUSY_TIMEOUT_S))
            .during(path, "setting the lock timeout")?;
        conn.execute_batch(schema::CONNECTION_SETUP)
            .during(path, "enabling foreign keys")?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);

        let header = open::inspect(&conn, path)?;
        // Opening for reading only (no CREATE flag) must not turn an empty file into a
        // database: it holds no runs, which is what `Missing` says.
        if !extra.contains(OpenFlags::SQLITE_OPEN_CREATE)
            && header.objects == 0
            && header.application_id == 0
        {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        open::admit(header, path)?;
        let migrated_from = open::migrate(&mut conn, path, header)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            migrated_from,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version this open upgraded the file from (`Some(0)` for a file it created),
    /// or `None` if the file was already current: lets the CLI say "created PATH".
    pub fn migrated_from(&self) -> Option<i64> {
        self.migrated_from
    }

    /// Insert the run row (with its environment, settings, clock; results may be empty) and
    /// return its id.
    ///
    /// Results the run already carries are stored too, in order and in the same transaction,
    /// so importing a finished run is a single call. `run.id` is ignored.
    pub fn begin_run(&mut self, run: &Run) -> Result<i64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .during(&self.path, "starting a run")?;
        let environment_id = write::environment_id(&tx, &self.path, &run.environment)?;
        let run_id = write::insert_run(&tx, &self.path, run, environment_id, &run.uuid)?;
        for (position, result) in (0_i64..).zip(&run.results) {
            write::insert_result(&tx, &self.path, run_id, position, result)?;
        }
        tx.commit().during(&self.path, "committing the run")?;
        Ok(run_id)
    }

    /// Store one experiment's result with all its samples, counters and checks in ONE
    /// transaction, committed at once (so Ctrl-C keeps what was measured).
    ///
    /// On any error nothing of this result is stored: the transaction rolls back when dropped.
    pub fn add_result(&mut self, run_id: i64, result: &ExperimentResult) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .during(&self.path, "starting to store a result")?;
        if !write::run_exists(&tx, &self.path, run_id)? {
            return Err(StoreError::NoSuchRun {
                path: self.path.clone(),
                run_id,
            });
        }
        let position = write::next_position(&tx, &self.path, run_id)?;
        write::insert_result(&tx, &self.path, run_id, position, result)?;
        tx.commit().during(&self.path, "committing a result")
    }

    pub fn finish_run(&mut self, run_id: i64, finished_at: f64) -> Result<(), StoreError> {
        let changed = self
            .conn
            .prepare_cached(schema::FINISH_RUN)
            .during(&self.path, "finishing the run")?
            .execute(rusqlite::params![run_id, finished_at])
            .during(&self.path, "finishing the run")?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun {
                path: self.path.clone(),
                run_id,
            });
        }
        Ok(())
    }

    /// The run exactly as stored; `StoreError::NoSuchRun` if there is none with this id.
    ///
    /// Read in one transaction so a result committed by a concurrent `oslab run` cannot
    /// appear halfway through.
    pub fn load_run(&self, run_id: i64) -> Result<Run, StoreError> {
        let tx = self
            .conn
            .unchecked_transaction()
            .during(&self.path, "starting to read a run")?;
        let run = read::run(&tx, &self.path, run_id)?;
        tx.finish().during(&self.path, "reading a run")?;
        Ok(run)
    }

    /// Run `run_id` to read a result at a time (`oslab export`): its header (`results`
    /// empty), and the results in order, each read when asked for, all in one read
    /// transaction as [`Store::load_run`] reads.
    pub fn read_run(&self, run_id: i64) -> Result<(Run, RunReader<'_>), StoreError> {
        let tx = self
            .conn
            .unchecked_transaction()
            .during(&self.path, "starting to read a run")?;
        let header = read::header(&tx, &self.path, run_id)?;
        let rows = read::result_rows(&tx, &self.path, run_id)?.into_iter();
        Ok((
            header,
            RunReader {
                tx,
                path: &self.path,
                rows,
            },
        ))
    }

    /// A run without its results (`results` empty): when, how and where it measured.
    pub fn load_run_header(&self, run_id: i64) -> Result<Run, StoreError> {
        read::header(&self.conn, &self.path, run_id)
    }

    /// The ids of the runs stored before run `run_id`, newest first, at most `limit`.
    pub fn run_ids_before(&self, run_id: i64, limit: usize) -> Result<Vec<i64>, StoreError> {
        read::ids(
            &self.conn,
            &self.path,
            schema::RUN_IDS_BEFORE,
            [run_id, i64::try_from(limit).unwrap_or(i64::MAX)],
        )
    }

    /// The most recently started run.
    pub fn latest_run_id(&self) -> Result<Option<i64>, StoreError> {
        read::optional_id(&self.conn, &self.path, schema::LATEST_RUN, [])
    }

    /// The most recently started run carrying `tag`.
    pub fn run_id_for_tag(&self, tag: &str) -> Result<Option<i64>, StoreError> {
        read::optional_id(&self.conn, &self.path, schema::LATEST_RUN_WITH_TAG, [tag])
    }

    /// The run with this UUID.
    pub fn run_id_for_uuid(&self, uuid: &str) -> Result<Option<i64>, StoreError> {
        read::optional_id(&self.conn, &self.path, schema::FIND_RUN_UUID, [uuid])
    }

    /// Every run, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        read::summaries(&self.conn, &self.path)
    }
}

fn no_directory(path: &Path, dir: &Path) -> StoreError {
    StoreError::NoDirectory {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
    }
}

/// Refuses a path that exists and is not a regular file (a device, a pipe, a directory; a
/// symbolic link is followed) before SQLite opens it: it would put its journal beside it
/// (`/dev/null-journal`).
fn not_a_file(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// The results of a run read one at a time ([`Store::read_run`]).
pub struct RunReader<'a> {
    tx: rusqlite::Transaction<'a>,
    path: &'a Path,
    rows: std::vec::IntoIter<(i64, ExperimentResult)>,
}

impl Iterator for RunReader<'_> {
    type Item = Result<ExperimentResult, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (id, result) = self.rows.next()?;
        Some(read::complete(&self.tx, self.path, id, result))
    }
}

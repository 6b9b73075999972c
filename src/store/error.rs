//! What can go wrong with the results database, each as one line that names the file and
//! what to do about it (DESIGN.md: "bad input gets one clear error line naming the fix").

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// How long a connection waits for another oslab process's lock before giving up.
pub(super) const BUSY_TIMEOUT_S: u64 = 5;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `open` does not create directories: a mistyped `--db` should not leave a tree behind.
    #[error(
        "cannot create database {}: directory {} does not exist; create it or pass another --db",
        path.display(),
        dir.display()
    )]
    NoDirectory { path: PathBuf, dir: PathBuf },

    #[error("no database at {}; run `oslab run` first or pass --db", path.display())]
    Missing { path: PathBuf },

    #[error(
        "{} is not an SQLite database (it was left untouched); pass --db with an oslab database",
        path.display()
    )]
    NotSqlite { path: PathBuf },

    #[error(
        "{} is another program's SQLite database (application_id {application_id:#010x}, \
         {objects} schema objects; it was left untouched); pass --db with an oslab database",
        path.display()
    )]
    Foreign {
        path: PathBuf,
        application_id: i32,
        objects: i64,
    },

    #[error(
        "{} was written by a newer oslab (schema {found}, this build reads up to {supported}); \
         upgrade oslab or use another --db",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    #[error(
        "no run {run_id} in {}; `oslab show --list` lists the stored runs",
        path.display()
    )]
    NoSuchRun { path: PathBuf, run_id: i64 },

    /// An imported run whose identity the database holds with other content: the document
    /// was edited after export. Storing it would make two runs of one UUID.
    #[error(
        "the run to import has UUID {uuid}, which {} holds as run {run_id} with other content \
         (edited after export?); remove the document's \"uuid\" to import it as a new run",
        path.display()
    )]
    UuidConflict {
        path: PathBuf,
        uuid: String,
        run_id: i64,
    },

    #[error(
        "database {} stayed locked by another process for {BUSY_TIMEOUT_S} s; wait for the \
         other oslab to finish or pass another --db",
        path.display()
    )]
    Locked { path: PathBuf },

    #[error(
        "database {} is corrupt ({what}: {detail}); nothing was written to it: restore it \
         from a copy, recover what it holds with `sqlite3 {} .recover | sqlite3 NEW.db`, or \
         pass another --db",
        path.display(),
        path.display()
    )]
    Corrupt {
        path: PathBuf,
        what: String,
        detail: String,
    },

    #[error(
        "database {}: {op} failed: the disk is full; free space or pass another --db",
        path.display()
    )]
    Full { path: PathBuf, op: &'static str },

    /// SQLite integers are signed 64-bit; a `u64` above `i64::MAX` cannot be stored as a
    /// number, and wrapping it would store a wrong one.
    #[error(
        "cannot store {what} = {value} in {}: above SQLite's integer limit 2^63-1; no real \
         measurement is that large, so report this oslab bug",
        path.display()
    )]
    OutOfRange {
        path: PathBuf,
        what: &'static str,
        value: u64,
    },

    /// Serialising a model value to JSON cannot fail for today's types (all map keys are
    /// strings); the variant exists so a future type that can fail is reported, not unwrapped.
    #[error("cannot encode {what} for {}: {detail}; report this oslab bug", path.display())]
    Encode {
        path: PathBuf,
        what: &'static str,
        detail: String,
    },

    #[error(
        "database {}: {op} failed: {}; check the file's permissions and the free disk space, \
         or pass another --db",
        path.display(),
        one_line(source)
    )]
    Sqlite {
        path: PathBuf,
        op: &'static str,
        source: rusqlite::Error,
    },

    #[error("cannot look at {}: {source}; check the path and its permissions", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    /// `--db /dev/null`: SQLite would make `/dev/null-journal` beside it.
    #[error(
        "{} is not a regular file (it was left untouched); pass --db with a file path",
        path.display()
    )]
    NotAFile { path: PathBuf },

    /// SQLite says "disk I/O error" for a write refused with EFBIG; under a file-size limit
    /// that limit is the likely cause, and what the user can change.
    #[error(
        "database {}: {op} failed: disk I/O error under a file-size limit (ulimit -f) of \
         {limit} bytes; raise it (`ulimit -f unlimited`) or pass another --db",
        path.display()
    )]
    FileSizeLimit {
        path: PathBuf,
        op: &'static str,
        limit: u64,
    },
}

/// Keeps the promise of one line per error even if SQLite's message has a newline in it.
fn one_line(e: &rusqlite::Error) -> String {
    e.to_string().replace('\n', " ")
}

impl StoreError {
    /// Sorts a rusqlite error into the variant the user can act on: "not a database" and
    /// "busy" have their own fixes, a value the model cannot take means the file is damaged,
    /// and everything else is reported with the operation that failed.
    pub(super) fn from_sqlite(path: &Path, op: &'static str, source: rusqlite::Error) -> Self {
        let path = path.to_path_buf();
        match source.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => return StoreError::NotSqlite { path },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                return StoreError::Locked { path };
            }
            Some(ErrorCode::DiskFull) => return StoreError::Full { path, op },
            Some(ErrorCode::SystemIoFailure) => {
                if let Some(limit) = crate::platform::interrupt::file_size_limit() {
                    return StoreError::FileSizeLimit { path, op, limit };
                }
            }
            Some(ErrorCode::DatabaseCorrupt) => {
                return StoreError::Corrupt {
                    path,
                    what: op.to_string(),
                    detail: one_line(&source),
                };
            }
            _ => {}
        }
        match source {
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::Utf8Error(..) => StoreError::Corrupt {
                path,
                what: op.to_string(),
                detail: one_line(&source),
            },
            source => StoreError::Sqlite { path, op, source },
        }
    }
}

/// `result.during(path, "reading samples")?` instead of a `map_err` closure at every call.
pub(super) trait During<T> {
    fn during(self, path: &Path, op: &'static str) -> Result<T, StoreError>;
}

impl<T> During<T> for rusqlite::Result<T> {
    fn during(self, path: &Path, op: &'static str) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::from_sqlite(path, op, e))
    }
}

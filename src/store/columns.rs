//! Model values to and from SQLite columns, shared by the readers and writers of every table:
//! counts that must fit an SQLite integer, positions in a list, JSON text.

use std::path::Path;

use rusqlite::Row;
use rusqlite::types::Type;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::StoreError;

/// A `u64` of the model (the writer never stores a negative one).
pub(super) fn count(row: &Row<'_>, idx: usize) -> rusqlite::Result<u64> {
    let value: i64 = row.get(idx)?;
    u64::try_from(value).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, value))
}

/// A JSON text column decoded into its model type.
pub(super) fn json<T: DeserializeOwned>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

/// A `u64` from the model as an SQLite integer, refused rather than wrapped when too large.
pub(super) fn int(path: &Path, what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange {
        path: path.to_path_buf(),
        what,
        value,
    })
}

/// A position in a `Vec` as a column value. A `Vec` cannot hold more than `isize::MAX`
/// elements, so this never saturates on a 64-bit target.
pub(super) fn position_of(index: usize) -> i64 {
    i64::try_from(index).unwrap_or(i64::MAX)
}

pub(super) fn to_json<T: Serialize + ?Sized>(
    path: &Path,
    what: &'static str,
    value: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode {
        path: path.to_path_buf(),
        what,
        detail: e.to_string(),
    })
}

/// A list as JSON text, or NULL when it is empty.
pub(super) fn optional_list(
    path: &Path,
    what: &'static str,
    list: &[f64],
) -> Result<Option<String>, StoreError> {
    (!list.is_empty())
        .then(|| to_json(path, what, list))
        .transpose()
}

//! The two shapes every table's reading and writing takes: all the rows a query returns, each
//! made into a value, and one insert per item of a list. Below the readers and writers of
//! each table (read.rs, write.rs, profile.rs, import.rs, open.rs), which all call them.

use std::path::Path;

use rusqlite::{Connection, Row};

use super::columns::position_of;
use super::error::{During, StoreError};

/// Every row `sql` returns for `params`, each made by `row_to`; `op` names the reading in an
/// error.
pub(super) fn rows<T>(
    conn: &Connection,
    path: &Path,
    (sql, op): (&str, &'static str),
    params: impl rusqlite::Params,
    row_to: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    conn.prepare_cached(sql)
        .during(path, op)?
        .query_map(params, row_to)
        .during(path, op)?
        .collect::<rusqlite::Result<_>>()
        .during(path, op)
}

/// Inserts a row of `sql` for each of `items`, its parameters from `row` given the item's
/// position; `op` names the storing in an error.
pub(super) fn insert_each<T, P: rusqlite::Params>(
    conn: &Connection,
    path: &Path,
    (sql, op): (&str, &'static str),
    items: impl IntoIterator<Item = T>,
    mut row: impl FnMut(i64, T) -> Result<P, StoreError>,
) -> Result<(), StoreError> {
    let mut insert = conn.prepare_cached(sql).during(path, op)?;
    for (position, item) in items.into_iter().enumerate() {
        insert
            .execute(row(position_of(position), item)?)
            .during(path, op)?;
    }
    Ok(())
}

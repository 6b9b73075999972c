//! A result's profile in the store (schema 4): one `profiles` row and its folded stacks.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::error::{During, StoreError};
use super::schema;
use crate::model::profile::{FoldedStack, Profile};

/// Store `profile` as the profile of result `result_id`.
pub(super) fn insert(
    conn: &Connection,
    path: &Path,
    result_id: i64,
    profile: &Profile,
) -> Result<(), StoreError> {
    const OP: &str = "storing a profile";
    let batches = serde_json::to_string(&profile.batch_ns_per_op).unwrap_or_else(|_| "[]".into());
    conn.prepare_cached(schema::INSERT_PROFILE)
        .during(path, OP)?
        .execute(params![
            result_id,
            profile.event,
            clamp(profile.frequency_hz),
            clamp(profile.lost),
            batches,
            profile.problem,
        ])
        .during(path, OP)?;
    let mut insert_stack = conn
        .prepare_cached(schema::INSERT_PROFILE_STACK)
        .during(path, OP)?;
    for (position, stack) in profile.stacks.iter().enumerate() {
        insert_stack
            .execute(params![
                result_id,
                position as i64,
                stack.stack,
                clamp(stack.count)
            ])
            .during(path, OP)?;
    }
    Ok(())
}

/// The profile of result `result_id`, if it has one.
pub(super) fn read(
    conn: &Connection,
    path: &Path,
    result_id: i64,
) -> Result<Option<Profile>, StoreError> {
    const OP: &str = "reading a profile";
    let row = conn
        .prepare_cached(schema::SELECT_PROFILE)
        .during(path, OP)?
        .query_row([result_id], |row| {
            let batches: String = row.get(3)?;
            Ok(Profile {
                event: row.get(0)?,
                frequency_hz: row.get::<_, i64>(1)?.max(0) as u64,
                stacks: Vec::new(),
                lost: row.get::<_, i64>(2)?.max(0) as u64,
                batch_ns_per_op: serde_json::from_str(&batches).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        3,
                        rusqlite::types::Type::Text,
                        Box::new(e),
                    )
                })?,
                problem: row.get(4)?,
            })
        })
        .optional()
        .during(path, OP)?;
    let Some(mut profile) = row else {
        return Ok(None);
    };
    profile.stacks = conn
        .prepare_cached(schema::SELECT_PROFILE_STACKS)
        .during(path, OP)?
        .query_map([result_id], |row| {
            Ok(FoldedStack {
                stack: row.get(0)?,
                count: row.get::<_, i64>(1)?.max(0) as u64,
            })
        })
        .during(path, OP)?
        .collect::<rusqlite::Result<_>>()
        .during(path, OP)?;
    Ok(Some(profile))
}

/// A count as SQLite's INTEGER holds it: no sample count comes near 2^63.
fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

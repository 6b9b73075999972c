//! A result's profile in the store (schema 4): one `profiles` row and its folded stacks.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::columns::{count, int, json, to_json};
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
    conn.prepare_cached(schema::INSERT_PROFILE)
        .during(path, OP)?
        .execute(params![
            result_id,
            profile.event,
            int(path, "a profile's frequency", profile.frequency_hz)?,
            int(path, "a profile's lost samples", profile.lost)?,
            to_json(path, "a profile's batch times", &profile.batch_ns_per_op)?,
            profile.problem,
        ])
        .during(path, OP)?;
    super::query::insert_each(
        conn,
        path,
        (schema::INSERT_PROFILE_STACK, OP),
        &profile.stacks,
        |position, stack| {
            Ok((
                result_id,
                position,
                &stack.stack,
                int(path, "a stack's sample count", stack.count)?,
            ))
        },
    )
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
            Ok(Profile {
                event: row.get(0)?,
                frequency_hz: count(row, 1)?,
                stacks: Vec::new(),
                lost: count(row, 2)?,
                batch_ns_per_op: json(row, 3)?,
                problem: row.get(4)?,
            })
        })
        .optional()
        .during(path, OP)?;
    let Some(mut profile) = row else {
        return Ok(None);
    };
    profile.stacks = super::query::rows(
        conn,
        path,
        (schema::SELECT_PROFILE_STACKS, OP),
        [result_id],
        |row| {
            Ok(FoldedStack {
                stack: row.get(0)?,
                count: count(row, 1)?,
            })
        },
    )?;
    Ok(Some(profile))
}

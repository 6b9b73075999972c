//! What the file remembers of the fleet stores its runs were pushed to (schema 6's `pushes`):
//! a store's own id and when, so `oslab push` sends only what a store has not got yet.

use super::error::{During, StoreError};
use super::{Store, read, schema};

impl Store {
    /// The ids of the runs not yet pushed to the fleet store `store` (its id), oldest first.
    pub fn runs_not_pushed(&self, store: &str) -> Result<Vec<i64>, StoreError> {
        read::ids(&self.conn, &self.path, schema::RUNS_NOT_PUSHED, [store])
    }

    /// Remember that run `run_id` is in the fleet store `store` (pushed now, or found there).
    pub fn record_push(&mut self, run_id: i64, store: &str, at: f64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(schema::RECORD_PUSH)
            .during(&self.path, "recording a push")?
            .execute(rusqlite::params![run_id, store, at])
            .during(&self.path, "recording a push")?;
        Ok(())
    }
}

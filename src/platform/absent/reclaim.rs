//! No memory cgroups, so no reclaim statistics of one: a worker here never runs in one
//! (`--load memory` is unsupported), and opening them finds nothing.

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::{CounterStatus, CounterValue};

/// Never built: see the module.
pub enum ReclaimStats {}

/// One reading: every counted counter's cumulative value.
pub type Reading = BTreeMap<&'static str, u64>;

impl ReclaimStats {
    /// `None`: there is no memory cgroup to read.
    pub fn open(_dir: &Path) -> Option<ReclaimStats> {
        None
    }

    pub fn statuses(&self) -> &[CounterStatus] {
        match *self {}
    }

    pub fn read(&mut self) -> Reading {
        match *self {}
    }
}

/// The counts between two readings (there are none here).
pub fn delta(_before: &Reading, _after: &Reading) -> BTreeMap<String, CounterValue> {
    BTreeMap::new()
}

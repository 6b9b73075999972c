//! No performance counters: every counter Linux opens is recorded as unsupported with the
//! backend's reason, and every reading is empty. rusage still counts faults and switches.

use std::collections::BTreeMap;

use crate::model::{CounterStatus, CounterValue};

/// The counters oslab opens on Linux (perf's names), so a run here lists each of them as
/// unsupported rather than omitting them.
const NAMES: [&str; 18] = [
    "task-clock",
    "page-faults",
    "minor-faults",
    "major-faults",
    "context-switches",
    "cpu-migrations",
    "cycles",
    "instructions",
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "L1-dcache-stores",
    "L1-dcache-store-misses",
    "dTLB-loads",
    "dTLB-load-misses",
    "dTLB-stores",
    "dTLB-store-misses",
    "syscalls",
    "tasks",
];

/// Every counter name, in display order.
pub fn names() -> impl Iterator<Item = &'static str> {
    NAMES.into_iter()
}

/// A snapshot of one group: there are none here.
#[derive(Debug, Clone, Default)]
pub struct GroupReading;

/// The counters of one worker: none open, each with the reason.
pub struct CounterSet {
    statuses: Vec<CounterStatus>,
}

impl CounterSet {
    /// Every counter, unsupported.
    pub fn open() -> CounterSet {
        CounterSet {
            statuses: NAMES
                .iter()
                .map(|name| CounterStatus {
                    name: name.to_string(),
                    supported: false,
                    reason: Some(reason()),
                })
                .collect(),
        }
    }

    /// As [`CounterSet::open`]: the probe counters are not available either.
    pub fn open_probes(_with_sampled_groups: bool) -> CounterSet {
        CounterSet::open()
    }

    /// No counters at all.
    pub fn none() -> CounterSet {
        CounterSet {
            statuses: Vec::new(),
        }
    }

    pub fn statuses(&self) -> &[CounterStatus] {
        &self.statuses
    }

    pub fn read_before(&mut self) -> Vec<GroupReading> {
        Vec::new()
    }

    pub fn read_after(&mut self) -> Vec<GroupReading> {
        Vec::new()
    }

    /// Nothing is open, so nothing to test.
    pub fn self_test(&mut self) {}

    /// Nothing was counted.
    pub fn delta(
        &self,
        _before: &[GroupReading],
        _after: &[GroupReading],
    ) -> BTreeMap<String, CounterValue> {
        BTreeMap::new()
    }
}

fn reason() -> String {
    super::refusal("performance counters", super::super::this_os::why::COUNTERS)
}

/// Which counters work on this machine, for `oslab env`: none, each with the reason.
pub fn probe() -> BTreeMap<String, crate::model::env::CounterAvailability> {
    NAMES
        .iter()
        .map(|name| {
            (
                name.to_string(),
                crate::model::env::CounterAvailability {
                    supported: false,
                    reason: Some(reason()),
                    event: None,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_is_unsupported_with_a_reason() {
        let mut set = CounterSet::open();
        assert_eq!(set.statuses().len(), NAMES.len());
        assert!(
            set.statuses()
                .iter()
                .all(|s| !s.supported && s.reason.is_some())
        );
        let (before, after) = (set.read_before(), set.read_after());
        assert!(set.delta(&before, &after).is_empty());
        assert!(probe().values().all(|a| !a.supported));
    }
}

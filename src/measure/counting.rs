//! What is counted around every sample: the perf counters of the sampled thread and, when
//! the worker runs in a memory cgroup (`--load memory`), the kernel's reclaim statistics of
//! that cgroup and of the machine (`model::reclaim`), and what the host did (`super::host`:
//! stolen time, a canary). All end up in `Sample::counters`.

use std::collections::BTreeMap;

use super::host::HostWatch;
use crate::model::{CounterStatus, CounterValue};
use crate::platform::counters::{CounterSet, GroupReading};
use crate::platform::reclaim::{self, Reading, ReclaimStats};

/// The counters read around each sample.
pub struct Counting {
    pub perf: CounterSet,
    pub reclaim: Option<ReclaimStats>,
    pub host: Option<HostWatch>,
}

/// One side of a sample's readings.
pub struct Readings {
    perf: Vec<GroupReading>,
    reclaim: Option<Reading>,
    /// After a sample only: the host's readings (they are their own deltas).
    host: BTreeMap<String, CounterValue>,
}

impl Counting {
    /// Every counter's status: the perf counters', then the reclaim counters'.
    pub fn statuses(&self) -> Vec<CounterStatus> {
        let mut all = self.perf.statuses().to_vec();
        if let Some(r) = &self.reclaim {
            all.extend_from_slice(r.statuses());
        }
        all
    }

    /// Before the timed window: the reclaim files first (their reads take the longest), the
    /// perf counters last.
    pub fn before(&mut self) -> Readings {
        let reclaim = self.reclaim.as_mut().map(ReclaimStats::read);
        Readings {
            perf: self.perf.read_before(),
            reclaim,
            host: BTreeMap::new(),
        }
    }

    /// After the timed window, in the reverse order. The host's readings come apart
    /// ([`Counting::read_host`]), once the sample's rusage is read too.
    pub fn after(&mut self) -> Readings {
        let perf = self.perf.read_after();
        let reclaim = self.reclaim.as_mut().map(ReclaimStats::read);
        Readings {
            perf,
            reclaim,
            host: BTreeMap::new(),
        }
    }

    /// The host's readings after a sample (`super::host`), into its `after` readings: last,
    /// outside every window of the sample (its time, counters and rusage), since the kernel
    /// canary enters the kernel and the steal is read from a file.
    pub fn read_host(&mut self, after: &mut Readings) {
        if let Some(host) = self.host.as_mut() {
            after.host = host.after_sample();
        }
    }

    /// Every counter's count between two readings.
    pub fn delta(&self, before: &Readings, after: &Readings) -> BTreeMap<String, CounterValue> {
        let mut out = self.perf.delta(&before.perf, &after.perf);
        if let (Some(b), Some(a)) = (&before.reclaim, &after.reclaim) {
            out.extend(reclaim::delta(b, a));
        }
        out.extend(after.host.iter().map(|(k, v)| (k.clone(), *v)));
        out
    }
}

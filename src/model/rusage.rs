//! What `getrusage(2)` says of one sample: the resource usage deltas every sample carries.

use serde::{Deserialize, Serialize};

/// Resource usage over one sample, as `getrusage(RUSAGE_SELF)` deltas (see getrusage(2)).
///
/// `maxrss_kb` is not a delta: it is the high-water mark at the end of the sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rusage {
    pub utime_us: i64,
    pub stime_us: i64,
    pub maxrss_kb: i64,
    pub minflt: i64,
    pub majflt: i64,
    pub inblock: i64,
    pub oublock: i64,
    pub nvcsw: i64,
    pub nivcsw: i64,
}

impl Rusage {
    /// The values in the order of [`Rusage::FIELDS`].
    pub fn values(&self) -> [i64; 9] {
        [
            self.utime_us,
            self.stime_us,
            self.maxrss_kb,
            self.minflt,
            self.majflt,
            self.inblock,
            self.oublock,
            self.nvcsw,
            self.nivcsw,
        ]
    }

    /// Field names in a stable order: the JSON contract and the database columns use them.
    pub const FIELDS: [&'static str; 9] = [
        "utime_us",
        "stime_us",
        "maxrss_kb",
        "minflt",
        "majflt",
        "inblock",
        "oublock",
        "nvcsw",
        "nivcsw",
    ];

    pub fn get(&self, field: &str) -> Option<i64> {
        Some(match field {
            "utime_us" => self.utime_us,
            "stime_us" => self.stime_us,
            "maxrss_kb" => self.maxrss_kb,
            "minflt" => self.minflt,
            "majflt" => self.majflt,
            "inblock" => self.inblock,
            "oublock" => self.oublock,
            "nvcsw" => self.nvcsw,
            "nivcsw" => self.nivcsw,
            _ => return None,
        })
    }

    /// Whether a delta shows no activity at all (`maxrss_kb`, not a delta, is ignored).
    pub fn is_idle(&self) -> bool {
        Rusage {
            maxrss_kb: 0,
            ..*self
        } == Rusage::default()
    }

    /// `after - before` for every cumulative field; `maxrss_kb` is taken from `after`.
    pub fn delta(before: &Rusage, after: &Rusage) -> Rusage {
        Rusage {
            utime_us: after.utime_us - before.utime_us,
            stime_us: after.stime_us - before.stime_us,
            maxrss_kb: after.maxrss_kb,
            minflt: after.minflt - before.minflt,
            majflt: after.majflt - before.majflt,
            inblock: after.inblock - before.inblock,
            oublock: after.oublock - before.oublock,
            nvcsw: after.nvcsw - before.nvcsw,
            nivcsw: after.nivcsw - before.nivcsw,
        }
    }
}

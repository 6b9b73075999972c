//! Reading the kernel's reclaim statistics (`model::reclaim`) around a sample: a memory
//! cgroup's `memory.stat`, its OOM kills (`memory.events` in v2, `memory.oom_control` in v1)
//! and its `memory.pressure` (v2), the machine's /proc/vmstat and /proc/pressure/memory, and
//! the sums of the vmscan tracepoints' fields (`super::vmscan`, where they can be opened).
//! Every figure is a cumulative count, so a sample's is the difference of two reads; a read
//! took 85 µs on the 2-CPU VM this was written on (cgroup v1, tracepoints open), outside the
//! timed window, which beside a memory load is a pass of tens of milliseconds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::cgroup::read_keyed;
use super::memory::{PRESSURE_FILE, Psi, read_psi};
use super::vmscan::{VmscanError, VmscanSums};
use crate::model::reclaim::{COUNTERS, ReclaimCounter, Scope};
use crate::model::{CounterStatus, CounterValue};

pub use crate::platform::contract::cgroup::CgroupVersion;

const VMSTAT: &str = "/proc/vmstat";

/// The reclaim counters readable for one memory cgroup and the machine.
pub struct ReclaimStats {
    dir: PathBuf,
    version: CgroupVersion,
    /// The counters found on the first read, in `COUNTERS` order.
    counted: Vec<&'static ReclaimCounter>,
    statuses: Vec<CounterStatus>,
    /// The vmscan tracepoints, or why they could not be opened.
    vmscan: Result<VmscanSums, VmscanError>,
}

/// One reading: every counted counter's cumulative value.
pub type Reading = BTreeMap<&'static str, u64>;

impl ReclaimStats {
    /// The statistics of the memory cgroup in `dir` (the directory of the `cgroup.procs` the
    /// worker joined) and of the machine. `None` when `dir` is not a memory cgroup.
    pub fn open(dir: &Path) -> Option<ReclaimStats> {
        let version = if dir.join("memory.events").exists() {
            CgroupVersion::V2
        } else if dir.join("memory.oom_control").exists() {
            CgroupVersion::V1
        } else {
            return None;
        };
        let mut stats = ReclaimStats {
            dir: dir.to_path_buf(),
            version,
            counted: Vec::new(),
            statuses: Vec::new(),
            vmscan: VmscanSums::open(),
        };
        let first = stats.read_all();
        for c in COUNTERS {
            let reason = (!first.contains_key(c.name)).then(|| stats.why_absent(c));
            if reason.is_none() {
                stats.counted.push(c);
            }
            stats.statuses.push(CounterStatus {
                name: c.name.to_string(),
                supported: reason.is_none(),
                reason,
            });
        }
        Some(stats)
    }

    /// Whether each counter is counted here, and why not.
    pub fn statuses(&self) -> &[CounterStatus] {
        &self.statuses
    }

    /// The counted counters' values now.
    pub fn read(&mut self) -> Reading {
        let mut all = self.read_all();
        all.retain(|name, _| self.counted.iter().any(|c| c.name == *name));
        all
    }

    /// Every counter the files and the tracepoints have now.
    fn read_all(&mut self) -> Reading {
        let mut out = Reading::new();
        let stat = match self.version {
            CgroupVersion::V1 => ("memory.stat", "memory.oom_control"),
            CgroupVersion::V2 => ("memory.stat", "memory.events"),
        };
        let mut cgroup = read_keyed(&self.dir.join(stat.0));
        // v1's memory.stat has no oom_kill; both keep it in the second file.
        if let Some(kills) = read_keyed(&self.dir.join(stat.1)).get("oom_kill") {
            cgroup.insert("oom_kill".into(), *kills);
        }
        let vmstat = read_keyed(Path::new(VMSTAT));
        let cgroup_psi = match self.version {
            CgroupVersion::V2 => read_psi(&self.dir.join("memory.pressure")),
            CgroupVersion::V1 => None,
        };
        let system_psi = read_psi(Path::new(PRESSURE_FILE));
        let vmscan = self
            .vmscan
            .as_mut()
            .map(VmscanSums::read)
            .unwrap_or_default();
        for c in COUNTERS {
            let (keys, psi) = match c.scope {
                Scope::Cgroup => (&cgroup, &cgroup_psi),
                Scope::System => (&vmstat, &system_psi),
                Scope::Vmscan => {
                    if let Some(v) = vmscan.get(c.name) {
                        out.insert(c.name, *v);
                    }
                    continue;
                }
            };
            let value = if c.stall {
                psi.as_ref().and_then(|p| stall_us(p, c.key))
            } else {
                keys.get(c.key).copied()
            };
            if let Some(v) = value {
                out.insert(c.name, v);
            }
        }
        out
    }

    /// Why a counter is not in the files (said of the file, so one reason covers every
    /// counter it lacks).
    fn why_absent(&self, c: &ReclaimCounter) -> String {
        if let (Scope::Vmscan, Err(why)) = (c.scope, &self.vmscan) {
            return why.to_string();
        }
        match (c.scope, self.version, c.stall) {
            (Scope::Cgroup, CgroupVersion::V1, true) => {
                "cgroup v1 keeps no memory.pressure (cgroup v2 does)".into()
            }
            (Scope::Cgroup, CgroupVersion::V1, false) => {
                "cgroup v1's memory.stat does not count them (cgroup v2's does); the vm.* \
                 counters are the machine's"
                    .into()
            }
            (Scope::Cgroup, CgroupVersion::V2, true) => {
                "the cgroup has no memory.pressure (kernel without CONFIG_PSI, or psi=0)".into()
            }
            (Scope::Cgroup, CgroupVersion::V2, false) => {
                "not in the cgroup's memory.stat on this kernel".into()
            }
            (Scope::System, _, true) => format!(
                "{PRESSURE_FILE} is absent (kernel without CONFIG_PSI, or booted with psi=0)"
            ),
            (Scope::System, _, false) => format!("not in {VMSTAT} on this kernel"),
            (Scope::Vmscan, _, _) => "not a field of the vmscan tracepoints here".into(),
        }
    }
}

/// The stall time of a PSI line: `some` or `full`.
fn stall_us(psi: &Psi, line: &str) -> Option<u64> {
    match line {
        "some" => Some(psi.some.total_us),
        _ => psi.full.map(|f| f.total_us),
    }
}

/// The counts between two readings, as counters of a sample. The kernel's counts only grow;
/// one that reads lower afterwards (a counter reset, which these are not) is left out rather
/// than stored as a negative or a wrapped figure.
pub fn delta(before: &Reading, after: &Reading) -> BTreeMap<String, CounterValue> {
    after
        .iter()
        .filter_map(|(name, a)| {
            let raw = a.checked_sub(*before.get(name)?)?;
            Some((
                name.to_string(),
                CounterValue {
                    value: Some(raw as f64),
                    raw,
                    enabled_ns: 0,
                    running_ns: 0,
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tracepoint_sums_are_named_as_the_model_names_them() {
        for (name, _, field) in super::super::vmscan::FIELDS {
            let c = crate::model::reclaim::find(name).expect(name);
            assert_eq!((c.scope, c.key), (Scope::Vmscan, field), "{name}");
        }
        assert!(crate::model::reclaim::find(super::super::vmscan::LOST).is_some());
    }

    #[test]
    fn deltas_are_never_negative() {
        let before: Reading = [
            ("vm.pgscan_kswapd", 10),
            ("vm.pswpout", 5),
            ("cg.pgscan", 1),
        ]
        .into_iter()
        .collect();
        let after: Reading = [
            ("vm.pgscan_kswapd", 30),
            ("vm.pswpout", 4),
            ("vm.oom_kill", 1),
        ]
        .into_iter()
        .collect();
        let d = delta(&before, &after);
        assert_eq!(d["vm.pgscan_kswapd"].raw, 20);
        assert_eq!(d["vm.pgscan_kswapd"].value, Some(20.0));
        assert!(
            !d.contains_key("vm.pswpout"),
            "a count that fell is left out"
        );
        assert!(!d.contains_key("vm.oom_kill"), "no before, no delta");
        assert!(!d.contains_key("cg.pgscan"));
    }

    #[test]
    fn a_directory_that_is_no_memory_cgroup_has_no_stats() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ReclaimStats::open(dir.path()).is_none());
    }

    #[test]
    fn a_v2_cgroup_is_read_from_its_own_files() {
        // A directory laid out like a v2 memory cgroup: the counts must come from it.
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("memory.events", "low 0\nhigh 3\nmax 2\noom 1\noom_kill 1\n");
        write(
            "memory.stat",
            "anon 4096\npgscan 120\npgsteal 100\npgactivate 7\n",
        );
        write(
            "memory.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=900\n\
             full avg10=0.00 avg60=0.00 avg300=0.00 total=400\n",
        );
        let mut stats = ReclaimStats::open(dir.path()).unwrap();
        let r = stats.read();
        assert_eq!(r["cg.pgscan"], 120);
        assert_eq!(r["cg.pgsteal"], 100);
        assert_eq!(r["cg.oom_kill"], 1);
        assert_eq!(r["cg.psi_full_us"], 400);
        let absent = stats
            .statuses()
            .iter()
            .find(|s| s.name == "cg.pgrefill")
            .unwrap();
        assert!(!absent.supported);
        assert!(absent.reason.as_deref().unwrap().contains("memory.stat"));
        write(
            "memory.stat",
            "anon 4096\npgscan 150\npgsteal 101\npgactivate 7\n",
        );
        let d = delta(&r, &stats.read());
        assert_eq!(d["cg.pgscan"].raw, 30);
        assert_eq!(d["cg.pgactivate"].raw, 0);
    }

    #[test]
    fn a_v1_cgroup_says_what_it_does_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write(
            "memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        );
        write(
            "memory.stat",
            "cache 0\npgmajfault 9\nworkingset_refault_file 3\n",
        );
        let mut stats = ReclaimStats::open(dir.path()).unwrap();
        let r = stats.read();
        assert_eq!(r["cg.oom_kill"], 2);
        assert_eq!(r["cg.pgmajfault"], 9);
        let scan = stats
            .statuses()
            .iter()
            .find(|s| s.name == "cg.pgscan")
            .unwrap();
        assert!(scan.reason.as_deref().unwrap().contains("cgroup v1"));
    }
}

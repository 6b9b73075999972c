//! `--load memory`: a competing process that holds a large anonymous region and keeps writing
//! random pages of it while the experiment runs, with both confined in one memory cgroup so the
//! pressure lands on the experiment's own memory and can never take the machine down.
//!
//! - **The cgroup.** One per experiment, `oslab-<oslab pid>-<n>`, created under the memory
//!   controller: cgroup v2 when a hierarchy (found from oslab's own cgroups and the mounts, `platform::cgroup::hierarchy`) enables `memory`
//!   for oslab's cgroup or an ancestor of it (`memory.max`, and `memory.high` a sixteenth below
//!   it so the kernel throttles and reclaims before the hard limit), else cgroup v1
//!   (`memory.limit_in_bytes`). It is created inside the cgroup oslab runs in, so whatever
//!   limits its caller set still apply. The competitor joins it itself before it maps
//!   anything, and so does the worker (`worker::Job::cgroup_procs`), before its setup.
//! - **The sizes.** With S the experiment's `size` parameter (512 MiB without one), the limit is
//!   S plus a quarter of S (at least 64 MiB) for the worker's own needs, capped at half of
//!   MemAvailable; the competitor holds half of the limit. A file-backed mapping of S bytes
//!   then cannot stay cached beside the competitor and is read back from the file (major
//!   faults, inblock). An anonymous one cannot be paged out without swap: when it does not fit,
//!   the cgroup's OOM killer must take a process, and the competitor's `oom_score_adj` of 1000
//!   makes it the one taken, never the worker. The record says which happened.
//! - **What is recorded** (`MemoryLoad::record`): the cgroup and its limits, the swap, memory
//!   pressure (PSI) before and after, the cgroup's peak usage, limit hits, OOM kills, major
//!   faults and refaults, and the competitor's peak RSS and fate.
//! - **Clean-up.** Dropping the load kills and reaps the competitor, kills whatever is left in
//!   the cgroup (the worker is already reaped by then) and removes the directory; that runs on
//!   Ctrl-C too, since the runner returns normally then. If oslab itself is killed, the
//!   competitor dies with it (`PR_SET_PDEATHSIG`) and the empty directory is removed by the next
//!   `--load memory` run, which clears every `oslab-<pid>-*` cgroup whose oslab is gone.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::pressure::Pressure;
use crate::model::SetupError;
use crate::platform::cgroup::{Cgroup, CgroupVersion, Hierarchy, Limits, hierarchy};
use crate::platform::memory::{self, Psi};
use crate::platform::{cgroup, cpu, process};

mod sizes;
pub use sizes::*;
mod competitor;
use competitor::*;
mod region;
pub use region::*;

const MIB: u64 = 1 << 20;
/// S when the experiment has no `size` parameter.
const DEFAULT_SIZE: u64 = 512 * MIB;
/// The smallest room left for the worker's own memory (binary, heap, counters) above S.
const MIN_HEADROOM: u64 = 64 * MIB;
/// Below this limit the worker alone would not fit: refuse rather than measure an OOM.
const MIN_LIMIT: u64 = 64 * MIB;
/// How long the competitor may take to touch its whole region (first touches of memory the
/// host took back cost up to 8 µs per page here: 6 GiB in about 12 s).
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// What the competitor prints once its whole region is resident.
const READY: &str = "ready";

/// A running memory load: the cgroup and its competitor. Dropping it kills the competitor and
/// removes the cgroup.
pub struct MemoryLoad {
    // Dropped in this order: the competitor must be gone before the cgroup is removed.
    competitor: Competitor,
    cgroup: Cgroup,
    hierarchy: Hierarchy,
    sizes: Sizes,
    swap: u64,
    available: u64,
    placement: String,
    ready_after: Duration,
    psi_before: Option<Psi>,
    cgroup_psi_before: Option<Psi>,
}

impl MemoryLoad {
    /// Create the cgroup sized for an experiment of `size_hint` bytes, start the competitor on
    /// `competitor_cpu` (unpinned when `None`) and return once its memory is resident.
    pub fn start(
        size_hint: Option<u64>,
        pressure: Pressure,
        measured: Option<usize>,
        competitor_cpu: Option<usize>,
    ) -> Result<MemoryLoad, SetupError> {
        let hierarchy = hierarchy()?;
        let meminfo = memory::meminfo().map_err(|e| {
            SetupError::Failed(format!("cannot read the machine's memory figures: {e}"))
        })?;
        let available = meminfo.available;
        let sizes = sizes(size_hint, available, pressure).map_err(SetupError::Unsupported)?;
        let cgroup = Cgroup::create(&hierarchy, &sizes.limits(), meminfo.swap_total)?;
        let start = Instant::now();
        let (competitor, mut stdout) =
            Competitor::spawn(sizes.region, competitor_cpu, &cgroup.procs())?;
        wait_ready(&mut stdout)?;
        let ready_after = start.elapsed();
        Ok(MemoryLoad {
            competitor,
            hierarchy,
            sizes,
            swap: meminfo.swap_total,
            available,
            placement: placement(competitor_cpu, measured),
            ready_after,
            psi_before: memory::system_pressure(),
            cgroup_psi_before: cgroup.pressure(),
            cgroup,
        })
    }

    /// The `cgroup.procs` file the worker writes its pid into.
    pub fn cgroup_procs(&self) -> PathBuf {
        self.cgroup.procs()
    }

    /// What the load was and did, as named, readable details.
    pub fn record(&self) -> Vec<(String, String)> {
        let mut d = Vec::new();
        self.record_setup(&mut d);
        self.record_pressure(&mut d);
        self.record_limit_hits(&mut d);
        self.record_fate(&mut d);
        d
    }
}

impl MemoryLoad {
    /// The cgroup, its limit, the swap and the competitor: what was set up.
    fn record_setup(&self, d: &mut Vec<(String, String)>) {
        let mut add = |name: &str, value: String| d.push((name.to_string(), value));
        let cg = &self.cgroup;
        let version = match cg.version {
            CgroupVersion::V1 => "cgroup v1".to_string(),
            CgroupVersion::V2 if self.hierarchy.parent == self.hierarchy.own => {
                "cgroup v2".to_string()
            }
            CgroupVersion::V2 => format!(
                "cgroup v2, beside oslab's own cgroup {}, which does not enable the memory \
                 controller for children",
                self.hierarchy.own.display()
            ),
        };
        add("cgroup", format!("{} ({version})", cg.dir.display()));

        let s = &self.sizes;
        let source = if s.from_experiment {
            format!("the experiment's size {}", mib(s.experiment))
        } else {
            format!("{} (the experiment has no size)", mib(s.experiment))
        };
        let cap = s.capped_at.map_or(String::new(), |cap| {
            format!(", capped at half of MemAvailable ({})", mib(cap))
        });
        let sizing = match s.headroom {
            None => format!(
                "{source} plus a quarter (at least {}) for the worker's own memory{cap}",
                mib(MIN_HEADROOM)
            ),
            Some(percent) => format!(
                "headroom {percent}%: {source}, a competitor as large, and {}% of the \
                 experiment's size {}; the worker's own memory is not counted in",
                percent.abs(),
                if percent < 0 { "less" } else { "more" }
            ),
        };
        add(
            "memory limit",
            format!(
                "{} in {}: {sizing}",
                mib_exact(s.limit),
                cg.version.limit_file()
            ),
        );
        if cg.version == CgroupVersion::V2 {
            add(
                "memory.high",
                format!(
                    "{}: above it the kernel reclaims and throttles the cgroup",
                    mib_exact(s.high)
                ),
            );
        }
        add("MemAvailable at the start", mib(self.available));
        add(
            "swap",
            if self.swap > 0 && s.no_swap {
                format!(
                    "{} on the machine, but none for this cgroup (swap=off: {}): anonymous memory \
                     cannot be paged out, so the kernel can reclaim only file-backed pages, and \
                     an anonymous experiment's major faults stay 0",
                    mib(self.swap),
                    cg.swap_bound
                        .unwrap_or("no bound file; the cgroup may still swap")
                )
            } else if self.swap == 0 {
                "none: anonymous memory cannot be paged out, so under this limit the kernel can \
                 reclaim only file-backed pages (page cache): a file mapping shows the pressure \
                 as major faults and inblock, while an anonymous experiment's major faults stay \
                 0 and, when it does not fit beside the competitor, the competitor is \
                 OOM-killed (`--swap SIZE` adds swap for a run)"
                    .to_string()
            } else {
                match cg.swap_bound {
                    Some(file) => format!(
                        "{}: the cgroup may swap out up to {} of anonymous memory ({file})",
                        mib(self.swap),
                        mib(s.region)
                    ),
                    None => format!(
                        "{}: this kernel does not account swap per cgroup, so the cgroup's \
                         swap use is not bounded",
                        mib(self.swap)
                    ),
                }
            },
        );
        add(
            "competitor",
            format!(
                "pid {}: {} anonymous (MADV_NOHUGEPAGE, oom_score_adj 1000), every page \
                 written once ({:.2} s), then random pages written in a loop; {}",
                self.competitor.pid,
                mib_exact(s.region),
                self.ready_after.as_secs_f64(),
                self.placement
            ),
        );
    }

    /// Memory pressure (PSI) before and after, system-wide and in the cgroup.
    fn record_pressure(&self, d: &mut Vec<(String, String)>) {
        let mut add = |name: &str, value: String| d.push((name.to_string(), value));
        let cg = &self.cgroup;
        let psi_after = memory::system_pressure();
        match (&self.psi_before, &psi_after) {
            (Some(before), Some(after)) => {
                add(
                    "memory pressure before (PSI, system-wide)",
                    describe_psi(before),
                );
                add(
                    "memory pressure after (PSI, system-wide)",
                    describe_psi(after),
                );
                add(
                    "memory stall during the experiment (PSI, system-wide)",
                    format!(
                        "{} (total stall time added; every process counts)",
                        describe_stall(before, after)
                    ),
                );
            }
            _ => add(
                "memory pressure (PSI)",
                format!(
                    "{} is absent (kernel without CONFIG_PSI, or booted with psi=0): \
                     no stall figures",
                    memory::PRESSURE_FILE
                ),
            ),
        }
        if let (Some(before), Some(after)) = (&self.cgroup_psi_before, cg.pressure()) {
            add(
                "memory stall in the cgroup (PSI)",
                format!(
                    "{}; at the end {}",
                    describe_stall(before, &after),
                    describe_psi(&after)
                ),
            );
        }
    }

    /// The cgroup's peak usage, limit hits and major faults.
    fn record_limit_hits(&self, d: &mut Vec<(String, String)>) {
        let mut add = |name: &str, value: String| d.push((name.to_string(), value));
        let cg = &self.cgroup;
        if let Some((peak, file)) = cg.peak() {
            add(
                "cgroup peak usage",
                format!(
                    "{} of the {} limit, from {file}",
                    mib_exact(peak),
                    mib(self.sizes.limit)
                ),
            );
        }
        match cg.version {
            CgroupVersion::V1 => {
                if let Some(failcnt) = cg.read_u64("memory.failcnt") {
                    add(
                        "limit hits",
                        format!(
                            "{failcnt} (memory.failcnt: charges that met the limit and made \
                             the kernel reclaim)"
                        ),
                    );
                }
            }
            CgroupVersion::V2 => {
                let events = cg.keyed("memory.events");
                if !events.is_empty() {
                    let list: Vec<String> = ["high", "max", "oom", "oom_kill"]
                        .iter()
                        .filter_map(|k| events.get(*k).map(|v| format!("{k} {v}")))
                        .collect();
                    add("limit hits", format!("memory.events: {}", list.join(", ")));
                }
            }
        }
        let stat = cg.keyed("memory.stat");
        if let Some(major) = stat.get("pgmajfault") {
            let refaults = stat
                .get("workingset_refault_file")
                .map_or(String::new(), |r| {
                    format!("; file pages read back after reclaim: {r} (workingset_refault_file)")
                });
            add(
                "major faults in the cgroup",
                format!("{major} (memory.stat pgmajfault){refaults}"),
            );
        }
    }

    /// OOM kills in the cgroup and what became of the competitor.
    fn record_fate(&self, d: &mut Vec<(String, String)>) {
        let mut add = |name: &str, value: String| d.push((name.to_string(), value));
        let cg = &self.cgroup;
        let oom_kills = cg.oom_kills();
        let state = self.competitor.state();
        if let Some(kills) = oom_kills {
            let competitor_killed = state.exit.is_some_and(|e| was_oom_kill(&e, oom_kills));
            let others = kills - u64::from(competitor_killed && kills > 0);
            add(
                "OOM kills in the cgroup",
                if others > 0 {
                    format!(
                        "{kills}, {others} of them not the competitor: the worker or a child of \
                         it, so the experiment alone needs more than the limit"
                    )
                } else {
                    kills.to_string()
                },
            );
        }

        match state.exit {
            None => {
                let hwm = memory::status_bytes(self.competitor.pid, "VmHWM");
                let rss = memory::status_bytes(self.competitor.pid, "VmRSS");
                if let Some(hwm) = hwm {
                    add("competitor peak RSS", format!("{}, VmHWM", mib_exact(hwm)));
                }
                add(
                    "competitor at the end",
                    match rss {
                        Some(rss) => format!("alive, {} resident", mib(rss)),
                        None => "alive".to_string(),
                    },
                );
            }
            Some(exit) => {
                add(
                    "competitor peak RSS",
                    format!("{}, ru_maxrss", mib_exact(exit.maxrss)),
                );
                add("competitor at the end", describe_exit(&exit, oom_kills));
            }
        }
    }
}

/// Whether the competitor died of the cgroup's OOM killer: SIGKILL, which nothing but the
/// OOM killer sends it before the load is dropped, and an OOM kill counted in the cgroup.
fn was_oom_kill(exit: &Exit, oom_kills: Option<u64>) -> bool {
    libc::WIFSIGNALED(exit.status)
        && libc::WTERMSIG(exit.status) == libc::SIGKILL
        && oom_kills.is_some_and(|k| k > 0)
}

fn describe_exit(exit: &Exit, oom_kills: Option<u64>) -> String {
    let after = exit.after.as_secs_f64();
    if libc::WIFSIGNALED(exit.status) {
        let signal = libc::WTERMSIG(exit.status);
        if was_oom_kill(exit, oom_kills) {
            format!(
                "OOM-killed {after:.2} s after it started: without swap the experiment's anonymous memory \
                 cannot be paged out; the limit was met by killing the competitor"
            )
        } else {
            let name = crate::platform::interrupt::signal_name(signal);
            format!("killed by {name} {after:.2} s after it started")
        }
    } else {
        format!(
            "exited with code {} {after:.2} s after it started",
            libc::WEXITSTATUS(exit.status)
        )
    }
}

#[cfg(test)]
mod tests;

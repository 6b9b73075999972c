//! Memory cgroups, v1 and v2: where oslab may create one (the hierarchy that holds the
//! memory controller for oslab's own cgroup), how much room this process's cgroups leave it,
//! and one cgroup created with limits, joined, read and removed — also the ones a killed
//! oslab left behind.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use procfs::{FromBufRead, ProcessCGroup, ProcessCGroups};

use super::memory::{Psi, read_psi};
use super::mount::{MountLine, entries};
use crate::model::SetupError;

/// The name prefix of every cgroup oslab creates; the rest is `<oslab pid>-<n>`.
pub const CGROUP_PREFIX: &str = "oslab-";
/// How long removing a cgroup may wait for its last processes to finish dying.
const REMOVE_TIMEOUT: Duration = Duration::from_secs(5);

pub use crate::platform::contract::cgroup::{CgroupVersion, Limits};

/// What this process may still allocate, bytes: `available` (MemAvailable), or less when its
/// memory cgroup or one of that cgroup's ancestors leaves less room under its limit (a worker
/// beside `--load memory` runs in one).
pub fn room_for_this_process(available: u64) -> u64 {
    let Ok(h) = hierarchy() else {
        return available;
    };
    let read = |dir: &Path, file: &str| {
        std::fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
    };
    h.own
        .ancestors()
        // Cgroup directories, up to the hierarchy's root; not the file system around it.
        .take_while(|dir| dir.join("cgroup.procs").exists())
        // "max" (no limit) does not parse and leaves the room as it is.
        .filter_map(|dir| {
            let limit = read(dir, h.version.limit_file())?;
            let usage = read(dir, h.version.usage_file())?;
            Some(limit.saturating_sub(usage))
        })
        .fold(available, u64::min)
}

/// What this process may still allocate, bytes: MemAvailable, or less when a memory cgroup
/// it is in (v1 or v2, or an ancestor of it) leaves less room — `--load memory` confines the
/// worker in one. `None` when /proc/meminfo cannot be read.
pub fn headroom() -> Option<u64> {
    let available = super::memory::meminfo().ok()?.available;
    Some(room_for_this_process(available))
}

/// Where oslab can create memory-limited cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    pub version: CgroupVersion,
    /// The directory the cgroups are created in.
    pub parent: PathBuf,
    /// oslab's own cgroup in this hierarchy: `parent` or, on v2 when oslab's cgroup does not
    /// enable the memory controller for children, one of its descendants.
    pub own: PathBuf,
}

/// oslab's own cgroup directory in each hierarchy that could hold the memory controller.
#[derive(Debug, Default, PartialEq, Eq)]
struct Located {
    /// (mount point, own directory) of the cgroup v2 hierarchy.
    v2: Option<(PathBuf, PathBuf)>,
    /// Own directory in the cgroup v1 hierarchy that has the memory controller.
    v1: Option<PathBuf>,
}

/// The directory of cgroup `pathname` in a hierarchy mounted at `mount_point`, whose mount
/// shows the hierarchy from `mount_root` on (`/` except in containers); `None` when the cgroup
/// lies outside what the mount shows.
fn cgroup_dir(mount_point: &Path, mount_root: &str, pathname: &str) -> Option<PathBuf> {
    let relative = if mount_root == "/" {
        pathname
    } else {
        let rest = pathname.strip_prefix(mount_root)?;
        if !rest.is_empty() && !rest.starts_with('/') {
            return None;
        }
        rest
    };
    Some(mount_point.join(relative.trim_start_matches('/')))
}

/// Match this process's cgroups (/proc/self/cgroup) with the mounted hierarchies
/// (/proc/self/mountinfo).
fn locate(mounts: &[MountLine], groups: &[ProcessCGroup]) -> Located {
    let mut located = Located::default();
    for group in groups {
        let is_v2 = group.hierarchy == 0 && group.controllers.is_empty();
        let is_memory_v1 = group.controllers.iter().any(|c| c == "memory");
        for mount in mounts {
            let mount_point = Path::new(&mount.mount_point);
            let found = || cgroup_dir(mount_point, &mount.root, &group.pathname);
            if is_v2 && mount.fstype == "cgroup2" && located.v2.is_none() {
                located.v2 = found().map(|dir| (mount_point.to_path_buf(), dir));
            } else if is_memory_v1
                && mount.fstype == "cgroup"
                && mount.has_super_option("memory")
                && located.v1.is_none()
            {
                located.v1 = found();
            }
        }
    }
    located
}

/// Whether a cgroup v2 directory lets its children use the memory controller.
fn delegates_memory(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.subtree_control"))
        .is_ok_and(|text| text.split_whitespace().any(|c| c == "memory"))
}

/// Where to create memory-limited cgroups on this machine, or why it cannot be done.
pub fn hierarchy() -> Result<Hierarchy, SetupError> {
    let unsupported = |what: &str, e: &dyn std::fmt::Display| {
        SetupError::Unsupported(format!("cannot read {what} to find the memory cgroup: {e}"))
    };
    let mounts: Vec<MountLine> = std::fs::read_to_string("/proc/self/mountinfo")
        .map(|text| entries(&text).collect())
        .map_err(|e| unsupported("/proc/self/mountinfo", &e))?;
    let groups = std::fs::read("/proc/self/cgroup")
        .map_err(|e| unsupported("/proc/self/cgroup", &e))
        .and_then(|text| {
            ProcessCGroups::from_buf_read(text.as_slice())
                .map_err(|e| unsupported("/proc/self/cgroup", &e))
        })?;
    let located = locate(&mounts, &groups.0);
    let mut why_not_v2 = None;
    if let Some((mount, own)) = &located.v2 {
        // The nearest cgroup, from oslab's own upwards, whose children get the controller.
        match own
            .ancestors()
            .take_while(|dir| dir.starts_with(mount))
            .find(|dir| delegates_memory(dir))
        {
            Some(parent) => {
                return Ok(Hierarchy {
                    version: CgroupVersion::V2,
                    parent: parent.to_path_buf(),
                    own: own.clone(),
                });
            }
            None => {
                why_not_v2 = Some(format!(
                    "cgroup v2 at {} does not enable the memory controller for {} or its \
                     parents (cgroup.subtree_control)",
                    mount.display(),
                    own.display()
                ));
            }
        }
    }
    if let Some(own) = located.v1 {
        return Ok(Hierarchy {
            version: CgroupVersion::V1,
            parent: own.clone(),
            own,
        });
    }
    Err(SetupError::Unsupported(match why_not_v2 {
        Some(v2) => format!(
            "no memory cgroup to confine the load in: {v2}, and no cgroup v1 memory hierarchy is mounted"
        ),
        None => "no memory cgroup to confine the load in: neither cgroup v2 nor a cgroup v1 \
                 memory hierarchy is mounted"
            .to_string(),
    }))
}

/// The cgroups oslab process `oslab_pid` created under `parent` and that still exist.
pub fn cgroups_of(parent: &Path, oslab_pid: u32) -> Vec<PathBuf> {
    let prefix = format!("{CGROUP_PREFIX}{oslab_pid}-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .map(|e| e.path())
        .collect()
}

/// The oslab pid in a cgroup name `oslab-<pid>-<n>`.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(CGROUP_PREFIX)?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Remove the cgroups left by oslab processes that were killed before cleaning up. Their
/// competitor and worker die with them, but may still be dying (a large region takes a
/// moment to free): what is left inside is killed and waited for, as [`Cgroup::remove`]
/// does — only processes oslab started ever join an `oslab-<pid>-<n>` cgroup.
fn remove_orphans(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        if !super::process::is_alive(pid) {
            let _ = remove_killing(&entry.path());
        }
    }
}

/// The processes in the cgroup whose `cgroup.procs` file is `procs`.
fn pids_in(procs: &Path) -> Vec<libc::pid_t> {
    std::fs::read_to_string(procs)
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Kill what is left in the oslab cgroup `dir` and remove it, waiting (at most
/// `REMOVE_TIMEOUT`) for dying processes to leave it. A process forking while it is killed can
/// add a child a moment after `cgroup.procs` read empty: v2's `cgroup.kill` stops that in the
/// kernel; otherwise the cgroup is removed only once it has read empty twice, 5 ms apart.
fn remove_killing(dir: &Path) -> io::Result<()> {
    let deadline = Instant::now() + REMOVE_TIMEOUT;
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    let mut empty_reads = 0;
    loop {
        let pids = pids_in(&dir.join("cgroup.procs"));
        for &pid in &pids {
            // SAFETY: signalling a process of an oslab cgroup, which only oslab's
            // competitor and worker (and the worker's children), or a traced command's tree,
            // join.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        empty_reads = if pids.is_empty() { empty_reads + 1 } else { 0 };
        if empty_reads >= 2 {
            match std::fs::remove_dir(dir) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => {}
            }
        } else if !pids.is_empty() && Instant::now() >= deadline {
            return Err(io::Error::other(format!(
                "processes {pids:?} did not leave it"
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Remove the empty cgroups killed oslabs left, wherever this oslab would create its own
/// (cheap: two small /proc files and one directory listing; only `oslab-<pid>-<n>` whose
/// oslab no longer runs, and `rmdir` removes only empty ones). Nothing to do where there is
/// no memory cgroup.
pub fn remove_orphaned() {
    if let Ok(h) = hierarchy() {
        remove_orphans(&h.parent);
    }
}

/// Move the calling process into the cgroup whose `cgroup.procs` file is `procs`.
pub fn join(procs: &Path) -> io::Result<()> {
    std::fs::write(procs, std::process::id().to_string())
}

/// `key value` lines (memory.stat, memory.events, v1 memory.oom_control) as a map.
/// A `key value` file (`memory.stat`, /proc/vmstat) as a map; empty when it cannot be read.
pub(super) fn read_keyed(path: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(path)
        .map(|t| parse_keyed(&t))
        .unwrap_or_default()
}

pub(super) fn parse_keyed(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(' ')?;
            Some((key.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// A cgroup oslab created; dropping it removes it, killing what is still inside first.
pub struct Cgroup {
    /// The cgroup's directory.
    pub dir: PathBuf,
    /// The interface it belongs to.
    pub version: CgroupVersion,
    /// The file that bounds the cgroup's swap use, when there is swap and a way to bound it.
    pub swap_bound: Option<&'static str>,
}

static NEXT_CGROUP: AtomicU32 = AtomicU32::new(1);

impl Cgroup {
    /// Create a cgroup `oslab-<pid>-<n>` under the hierarchy and set its limits (and a swap bound
    /// when the machine has `swap` bytes of it); first remove those killed oslabs left.
    pub fn create(h: &Hierarchy, limits: &Limits, swap: u64) -> Result<Cgroup, SetupError> {
        let mut cgroup = Cgroup::make(h, "a memory load")?;
        let mut settings = vec![(h.version.limit_file(), limits.max)];
        // With swap, the competitor's region may be swapped out, and no more. v1's memsw
        // counts memory plus swap and must not be below the memory limit, which is set first;
        // both files are absent when the kernel does not account swap.
        let swap_setting = match h.version {
            CgroupVersion::V2 => {
                settings.push(("memory.high", limits.high));
                ("memory.swap.max", limits.swap)
            }
            CgroupVersion::V1 => ("memory.memsw.limit_in_bytes", limits.max + limits.swap),
        };
        if swap > 0 && cgroup.file(swap_setting.0).exists() {
            settings.push(swap_setting);
            cgroup.swap_bound = Some(swap_setting.0);
        }
        for (file, value) in settings {
            std::fs::write(cgroup.file(file), value.to_string()).map_err(|e| {
                SetupError::Failed(format!(
                    "cannot set {file} of {}: {e}",
                    cgroup.dir.display()
                ))
            })?;
        }
        Ok(cgroup)
    }

    /// Create a cgroup `oslab-<pid>-<n>` under the hierarchy with no limits set (`what` it is
    /// for, for the refusal): only to hold a tree of processes that must end together, as the
    /// traced command's does; first remove those killed oslabs left.
    pub fn make(h: &Hierarchy, what: &str) -> Result<Cgroup, SetupError> {
        remove_orphans(&h.parent);
        let name = format!(
            "{CGROUP_PREFIX}{}-{}",
            std::process::id(),
            NEXT_CGROUP.fetch_add(1, Ordering::Relaxed)
        );
        let dir = h.parent.join(name);
        if let Err(e) = std::fs::create_dir(&dir) {
            let reason = format!("cannot create the cgroup {}: {e}", dir.display());
            return Err(match e.kind() {
                io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                    SetupError::Unsupported(format!(
                        "{reason} ({what} needs root or a delegated cgroup)"
                    ))
                }
                _ => SetupError::Failed(reason),
            });
        }
        Ok(Cgroup {
            dir,
            version: h.version,
            swap_bound: None,
        })
    }

    /// A file of the cgroup's interface (`memory.stat`, `memory.events`, …).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The `cgroup.procs` file a process writes its pid into to join.
    pub fn procs(&self) -> PathBuf {
        self.file("cgroup.procs")
    }

    /// A one-number file of the cgroup, e.g. `memory.failcnt`.
    pub fn read_u64(&self, name: &str) -> Option<u64> {
        std::fs::read_to_string(self.file(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// A `key value` file of the cgroup (`memory.stat`, `memory.events`) as a map.
    pub fn keyed(&self, name: &str) -> BTreeMap<String, u64> {
        read_keyed(&self.file(name))
    }

    /// The cgroup's memory pressure now (v2 `memory.pressure`; `None` on v1).
    pub fn pressure(&self) -> Option<Psi> {
        read_psi(&self.file("memory.pressure"))
    }

    /// The highest usage the cgroup reached and the file it comes from.
    pub fn peak(&self) -> Option<(u64, &'static str)> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
            // memory.peak exists from Linux 5.19.
            CgroupVersion::V2 => "memory.peak",
        };
        self.read_u64(file).map(|v| (v, file))
    }

    /// How many times the kernel's OOM killer killed a process in the cgroup.
    pub fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.oom_control",
            CgroupVersion::V2 => "memory.events",
        };
        self.keyed(file).get("oom_kill").copied()
    }

    /// The processes in the cgroup.
    pub fn pids(&self) -> Vec<libc::pid_t> {
        pids_in(&self.procs())
    }

    /// Kill what is left inside (only processes oslab started ever join) and remove the
    /// directory, waiting for dying processes to leave it.
    pub fn remove(&self) -> io::Result<()> {
        remove_killing(&self.dir)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            // Nothing else can report it: a cgroup left behind must not go unnoticed.
            crate::say!(
                "oslab: could not remove the cgroup {}: {e}; remove it with rmdir",
                self.dir.display()
            );
        }
    }
}

#[cfg(test)]
mod tests;

//! The memory cgroup of a memory load: the hierarchy (v1 or v2), the sizes, PSI, and one cgroup created, joined, read and removed.

use super::*;

/// Which cgroup interface holds the memory controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

impl CgroupVersion {
    pub(super) fn limit_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        }
    }

    pub(super) fn usage_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.usage_in_bytes",
            CgroupVersion::V2 => "memory.current",
        }
    }
}

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
pub(super) struct Located {
    /// (mount point, own directory) of the cgroup v2 hierarchy.
    pub(super) v2: Option<(PathBuf, PathBuf)>,
    /// Own directory in the cgroup v1 hierarchy that has the memory controller.
    pub(super) v1: Option<PathBuf>,
}

/// The directory of cgroup `pathname` in a hierarchy mounted at `mount_point`, whose mount
/// shows the hierarchy from `mount_root` on (`/` except in containers); `None` when the cgroup
/// lies outside what the mount shows.
pub(super) fn cgroup_dir(mount_point: &Path, mount_root: &str, pathname: &str) -> Option<PathBuf> {
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
pub(super) fn locate(mounts: &[MountInfo], groups: &[ProcessCGroup]) -> Located {
    let mut located = Located::default();
    for group in groups {
        let is_v2 = group.hierarchy == 0 && group.controllers.is_empty();
        let is_memory_v1 = group.controllers.iter().any(|c| c == "memory");
        for mount in mounts {
            let found = || cgroup_dir(&mount.mount_point, &mount.root, &group.pathname);
            if is_v2 && mount.fs_type == "cgroup2" && located.v2.is_none() {
                located.v2 = found().map(|dir| (mount.mount_point.clone(), dir));
            } else if is_memory_v1
                && mount.fs_type == "cgroup"
                && mount.super_options.contains_key("memory")
                && located.v1.is_none()
            {
                located.v1 = found();
            }
        }
    }
    located
}

/// Whether a cgroup v2 directory lets its children use the memory controller.
pub(super) fn delegates_memory(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.subtree_control"))
        .is_ok_and(|text| text.split_whitespace().any(|c| c == "memory"))
}

/// Where to create memory-limited cgroups on this machine, or why it cannot be done.
pub fn hierarchy() -> Result<Hierarchy, SetupError> {
    let unsupported = |what: &str, e: &dyn std::fmt::Display| {
        SetupError::Unsupported(format!("cannot read {what} to find the memory cgroup: {e}"))
    };
    let mounts = std::fs::read("/proc/self/mountinfo")
        .map_err(|e| unsupported("/proc/self/mountinfo", &e))
        .and_then(|text| {
            MountInfos::from_buf_read(text.as_slice())
                .map_err(|e| unsupported("/proc/self/mountinfo", &e))
        })?;
    let groups = std::fs::read("/proc/self/cgroup")
        .map_err(|e| unsupported("/proc/self/cgroup", &e))
        .and_then(|text| {
            ProcessCGroups::from_buf_read(text.as_slice())
                .map_err(|e| unsupported("/proc/self/cgroup", &e))
        })?;
    let located = locate(&mounts.0, &groups.0);
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
pub(super) fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(CGROUP_PREFIX)?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Remove the cgroups left by oslab processes that were killed before cleaning up (their
/// competitor and worker died with them, so the directories are empty).
pub(super) fn remove_orphans(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let gone = unsafe { libc::kill(pid as libc::pid_t, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Move the calling process into the cgroup whose `cgroup.procs` file is `procs`.
pub fn join(procs: &Path) -> io::Result<()> {
    std::fs::write(procs, std::process::id().to_string())
}

/// The limit, the competitor's region and where they come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// S: the experiment's size, or [`DEFAULT_SIZE`].
    pub experiment: u64,
    /// Whether S came from the experiment.
    pub from_experiment: bool,
    /// The cgroup's hard limit.
    pub limit: u64,
    /// v2 `memory.high`: where the kernel starts throttling and reclaiming.
    pub high: u64,
    /// The competitor's anonymous region.
    pub region: u64,
    /// Half of MemAvailable, when it lowered the limit.
    pub capped_at: Option<u64>,
}

/// Size the cgroup for an experiment of `size_hint` bytes on a machine with `available` bytes
/// of MemAvailable.
pub fn sizes(size_hint: Option<u64>, available: u64) -> Result<Sizes, String> {
    let page = page_size();
    let experiment = size_hint.unwrap_or(DEFAULT_SIZE);
    let wanted = experiment.saturating_add((experiment / 4).max(MIN_HEADROOM));
    let cap = available / 2;
    let limit = wanted.min(cap) / page * page;
    if limit < MIN_LIMIT {
        return Err(format!(
            "MemAvailable is {}: half of it is under the {} a memory load needs",
            mib(available),
            mib(MIN_LIMIT)
        ));
    }
    Ok(Sizes {
        experiment,
        from_experiment: size_hint.is_some(),
        limit,
        high: (limit - limit / 16) / page * page,
        region: limit / 2 / page * page,
        capped_at: (wanted > cap).then_some(cap),
    })
}

pub(super) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// `832 MiB`, or `1.25 GiB` from 1 GiB on.
pub(super) fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", bytes as f64 / MIB as f64)
    }
}

/// A size with its exact byte count, for figures a reader may want to check against another.
pub(super) fn mib_exact(bytes: u64) -> String {
    format!("{} ({bytes} bytes)", mib(bytes))
}

/// One line of /proc/pressure/memory (or a v2 cgroup's memory.pressure).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsiLine {
    /// Share of the last 10 s some (or every) task stalled on memory, in percent.
    pub avg10: f64,
    /// Stall time since boot, µs.
    pub total_us: u64,
}

/// Memory pressure: `some` (at least one task stalled) and `full` (every non-idle task did).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Psi {
    pub some: PsiLine,
    pub full: Option<PsiLine>,
}

/// Parse the PSI format: `some avg10=0.00 avg60=0.00 avg300=0.00 total=0` and a `full` line.
pub fn parse_psi(text: &str) -> Option<Psi> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let kind = words.next();
        let fields: BTreeMap<&str, &str> = words.filter_map(|w| w.split_once('=')).collect();
        let parsed = (|| {
            Some(PsiLine {
                avg10: fields.get("avg10")?.parse().ok()?,
                total_us: fields.get("total")?.parse().ok()?,
            })
        })();
        match kind {
            Some("some") => some = parsed,
            Some("full") => full = parsed,
            _ => {}
        }
    }
    Some(Psi { some: some?, full })
}

pub(super) fn read_psi(path: &Path) -> Option<Psi> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse_psi(&t))
}

pub(super) fn describe_psi(psi: &Psi) -> String {
    let mut s = format!(
        "some avg10 {:.2}% (total {} µs)",
        psi.some.avg10, psi.some.total_us
    );
    if let Some(full) = psi.full {
        s.push_str(&format!(
            ", full avg10 {:.2}% (total {} µs)",
            full.avg10, full.total_us
        ));
    }
    s
}

pub(super) fn describe_stall(before: &Psi, after: &Psi) -> String {
    let some = after.some.total_us.saturating_sub(before.some.total_us);
    let mut s = format!("some {} µs", some);
    if let (Some(b), Some(a)) = (before.full, after.full) {
        s.push_str(&format!(
            ", full {} µs",
            a.total_us.saturating_sub(b.total_us)
        ));
    }
    s
}

/// `key value` lines (memory.stat, memory.events, v1 memory.oom_control) as a map.
pub(super) fn parse_keyed(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(' ')?;
            Some((key.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// A field of /proc/PID/status in bytes (`VmHWM:  1234 kB`).
pub(super) fn status_bytes(pid: libc::pid_t, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// A cgroup oslab created; dropping it removes it, killing what is still inside first.
pub(super) struct Cgroup {
    pub(super) dir: PathBuf,
    pub(super) version: CgroupVersion,
    /// The file that bounds the cgroup's swap use, when there is swap and a way to bound it.
    pub(super) swap_bound: Option<&'static str>,
}

pub(super) static NEXT_CGROUP: AtomicU32 = AtomicU32::new(1);

impl Cgroup {
    /// Create the cgroup and set its limits (and a swap bound when there is swap).
    pub(super) fn create(h: &Hierarchy, sizes: &Sizes, swap: u64) -> Result<Cgroup, SetupError> {
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
                        "{reason} (a memory load needs root or a delegated cgroup)"
                    ))
                }
                _ => SetupError::Failed(reason),
            });
        }
        let mut cgroup = Cgroup {
            dir,
            version: h.version,
            swap_bound: None,
        };
        let mut settings = vec![(h.version.limit_file(), sizes.limit)];
        // With swap, the competitor's region may be swapped out, and no more. v1's memsw
        // counts memory plus swap and must not be below the memory limit, which is set first;
        // both files are absent when the kernel does not account swap.
        let swap_setting = match h.version {
            CgroupVersion::V2 => {
                settings.push(("memory.high", sizes.high));
                ("memory.swap.max", sizes.region)
            }
            CgroupVersion::V1 => ("memory.memsw.limit_in_bytes", sizes.limit + sizes.region),
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

    pub(super) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub(super) fn procs(&self) -> PathBuf {
        self.file("cgroup.procs")
    }

    pub(super) fn read_u64(&self, name: &str) -> Option<u64> {
        std::fs::read_to_string(self.file(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    pub(super) fn keyed(&self, name: &str) -> BTreeMap<String, u64> {
        std::fs::read_to_string(self.file(name))
            .map(|t| parse_keyed(&t))
            .unwrap_or_default()
    }

    /// The highest usage the cgroup reached and the file it comes from.
    pub(super) fn peak(&self) -> Option<(u64, &'static str)> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
            // memory.peak exists from Linux 5.19.
            CgroupVersion::V2 => "memory.peak",
        };
        self.read_u64(file).map(|v| (v, file))
    }

    /// How many times the kernel's OOM killer killed a process in the cgroup.
    pub(super) fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.oom_control",
            CgroupVersion::V2 => "memory.events",
        };
        self.keyed(file).get("oom_kill").copied()
    }

    pub(super) fn pids(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.procs())
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Kill what is left inside (only processes oslab started ever join) and remove the
    /// directory, waiting for dying processes to leave it.
    pub(super) fn remove(&self) -> io::Result<()> {
        let deadline = Instant::now() + REMOVE_TIMEOUT;
        loop {
            for pid in self.pids() {
                // SAFETY: signalling a process of our own cgroup, which only oslab's
                // competitor and worker (and the worker's children) join.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            // Nothing else can report it: a cgroup left behind must not go unnoticed.
            eprintln!(
                "oslab: could not remove the cgroup {}: {e}; remove it with rmdir",
                self.dir.display()
            );
        }
    }
}

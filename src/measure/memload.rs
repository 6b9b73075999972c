//! `--load memory`: a competing process that holds a large anonymous region and keeps writing
//! random pages of it while the experiment runs, with both confined in one memory cgroup so the
//! pressure lands on the experiment's own memory and can never take the machine down.
//!
//! - **The cgroup.** One per experiment, `oslab-<oslab pid>-<n>`, created under the memory
//!   controller: cgroup v2 when a hierarchy (found in /proc/self/mountinfo) enables `memory`
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

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use procfs::process::{MountInfo, MountInfos};
use procfs::{Current, FromBufRead, ProcessCGroup, ProcessCGroups};

use crate::model::SetupError;
use crate::platform::cpu;

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
/// How long removing the cgroup may wait for its last processes to finish dying.
const REMOVE_TIMEOUT: Duration = Duration::from_secs(5);
/// The name prefix of every cgroup oslab creates; the rest is `<oslab pid>-<n>`.
pub const CGROUP_PREFIX: &str = "oslab-";
/// What the competitor prints once its whole region is resident.
const READY: &str = "ready";

/// Which cgroup interface holds the memory controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

impl CgroupVersion {
    fn limit_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        }
    }

    fn usage_file(self) -> &'static str {
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
fn locate(mounts: &[MountInfo], groups: &[ProcessCGroup]) -> Located {
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
fn delegates_memory(dir: &Path) -> bool {
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
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(CGROUP_PREFIX)?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Remove the cgroups left by oslab processes that were killed before cleaning up (their
/// competitor and worker died with them, so the directories are empty).
fn remove_orphans(parent: &Path) {
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

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// `832 MiB`, or `1.25 GiB` from 1 GiB on.
fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", bytes as f64 / MIB as f64)
    }
}

/// A size with its exact byte count, for figures a reader may want to check against another.
fn mib_exact(bytes: u64) -> String {
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

fn read_psi(path: &Path) -> Option<Psi> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse_psi(&t))
}

fn describe_psi(psi: &Psi) -> String {
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

fn describe_stall(before: &Psi, after: &Psi) -> String {
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
fn parse_keyed(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(' ')?;
            Some((key.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// A field of /proc/PID/status in bytes (`VmHWM:  1234 kB`).
fn status_bytes(pid: libc::pid_t, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// A cgroup oslab created; dropping it removes it, killing what is still inside first.
struct Cgroup {
    dir: PathBuf,
    version: CgroupVersion,
    /// The file that bounds the cgroup's swap use, when there is swap and a way to bound it.
    swap_bound: Option<&'static str>,
}

static NEXT_CGROUP: AtomicU32 = AtomicU32::new(1);

impl Cgroup {
    /// Create the cgroup and set its limits (and a swap bound when there is swap).
    fn create(h: &Hierarchy, sizes: &Sizes, swap: u64) -> Result<Cgroup, SetupError> {
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

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn procs(&self) -> PathBuf {
        self.file("cgroup.procs")
    }

    fn read_u64(&self, name: &str) -> Option<u64> {
        std::fs::read_to_string(self.file(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn keyed(&self, name: &str) -> BTreeMap<String, u64> {
        std::fs::read_to_string(self.file(name))
            .map(|t| parse_keyed(&t))
            .unwrap_or_default()
    }

    /// The highest usage the cgroup reached and the file it comes from.
    fn peak(&self) -> Option<(u64, &'static str)> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
            // memory.peak exists from Linux 5.19.
            CgroupVersion::V2 => "memory.peak",
        };
        self.read_u64(file).map(|v| (v, file))
    }

    /// How many times the kernel's OOM killer killed a process in the cgroup.
    fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.oom_control",
            CgroupVersion::V2 => "memory.events",
        };
        self.keyed(file).get("oom_kill").copied()
    }

    fn pids(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.procs())
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Kill what is left inside (only processes oslab started ever join) and remove the
    /// directory, waiting for dying processes to leave it.
    fn remove(&self) -> io::Result<()> {
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

/// How the competitor ended, seen by the thread that waits for it.
#[derive(Debug, Clone, Copy)]
struct Exit {
    /// Since the competitor was started (its fill time is recorded apart).
    after: Duration,
    /// The wait status.
    status: i32,
    /// Its peak resident set from getrusage, bytes.
    maxrss: u64,
}

#[derive(Default)]
struct ExitState {
    exit: Option<Exit>,
    /// Set, under the lock, once the pid is released: it must not be signalled after that.
    reaped: bool,
}

/// The competing process. Only its watcher thread reaps it, under the lock, so the pid
/// stays ours while the lock is held.
struct Competitor {
    pid: libc::pid_t,
    state: Arc<Mutex<ExitState>>,
    watcher: Option<JoinHandle<()>>,
}

impl Competitor {
    fn spawn(
        region: u64,
        cpu: Option<usize>,
        procs: &Path,
    ) -> Result<(Competitor, ChildStdout), SetupError> {
        let failed = |e: io::Error| SetupError::Failed(format!("cannot start the competitor: {e}"));
        let exe = std::env::current_exe().map_err(failed)?;
        let mut command = Command::new(exe);
        command
            .args(["load", "--memory", &region.to_string()])
            .arg("--cgroup")
            .arg(procs)
            .args(["--parent", &std::process::id().to_string()]);
        if let Some(cpu) = cpu {
            command.args(["--cpu", &cpu.to_string()]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(failed)?;
        let stdout = child.stdout.take();
        let pid = child.id() as libc::pid_t;
        // `child` is dropped without waiting: the watcher below is the only one that reaps.
        let state = Arc::new(Mutex::new(ExitState::default()));
        let started = Instant::now();
        let watched = Arc::clone(&state);
        let watcher = std::thread::spawn(move || watch(pid, started, &watched));
        let competitor = Competitor {
            pid,
            state,
            watcher: Some(watcher),
        };
        match stdout {
            Some(stdout) => Ok((competitor, stdout)),
            None => Err(SetupError::Failed(
                "the competitor's output pipe is missing".into(),
            )),
        }
    }

    fn state(&self) -> MutexGuard<'_, ExitState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Wait for the competitor to end (without reaping it, so its pid cannot be reused while the
/// parent may still signal it), note when, then reap it under the lock.
fn watch(pid: libc::pid_t, started: Instant, state: &Mutex<ExitState>) {
    loop {
        // SAFETY: an all-zero siginfo_t is valid output space.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our child; WNOWAIT leaves it waitable.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let after = started.elapsed();
    let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid output space.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped (only this thread reaps it).
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if rc == pid {
        guard.exit = Some(Exit {
            after,
            status,
            maxrss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        });
    }
    guard.reaped = true;
}

impl Drop for Competitor {
    fn drop(&mut self) {
        {
            let state = self.state();
            if !state.reaped {
                // SAFETY: the pid is our unreaped child while the lock is held.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
            }
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

/// Wait until the competitor says its region is resident, or why it could not.
fn wait_ready(stdout: &mut ChildStdout) -> Result<(), SetupError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut line = Vec::new();
    loop {
        if let Some(signal) = crate::platform::interrupt::requested() {
            return Err(interrupted(signal));
        }
        if Instant::now() >= deadline {
            return Err(SetupError::Failed(format!(
                "the competitor did not fill its memory within {} s",
                READY_TIMEOUT.as_secs()
            )));
        }
        let mut poll = libc::pollfd {
            fd: stdout.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for a descriptor we own.
        let rc = unsafe { libc::poll(&mut poll, 1, 100) };
        if rc <= 0 {
            continue;
        }
        let mut buf = [0u8; 256];
        let n = stdout
            .read(&mut buf)
            .map_err(|e| SetupError::Failed(format!("cannot read from the competitor: {e}")))?;
        line.extend_from_slice(&buf[..n]);
        if n == 0 || line.contains(&b'\n') {
            break;
        }
    }
    let text = String::from_utf8_lossy(&line);
    let text = text.trim();
    match text.strip_prefix("error: ") {
        _ if text == READY => Ok(()),
        Some(reason) => Err(SetupError::Failed(format!(
            "the competitor failed: {reason}"
        ))),
        // Ctrl-C reaches the competitor too when it shares the terminal's process group.
        None => Err(match crate::platform::interrupt::requested() {
            Some(signal) => interrupted(signal),
            None => SetupError::Failed("the competitor ended before filling its memory".into()),
        }),
    }
}

fn interrupted(signal: i32) -> SetupError {
    SetupError::Failed(format!(
        "interrupted by {} while the competitor filled its memory",
        crate::platform::interrupt::signal_name(signal)
    ))
}

/// Where the competitor runs, as the record says it.
fn placement(competitor_cpu: Option<usize>, measured: Option<usize>) -> String {
    let measured_text = measured.map_or("the measured CPU".to_string(), |c| {
        format!("the measured CPU {c}")
    });
    match competitor_cpu {
        Some(cpu) => format!(
            "pinned to CPU {cpu}, not {measured_text}: it adds memory pressure, not CPU \
             contention, to the experiment (the other CPU is busy instead)"
        ),
        None => {
            format!("unpinned: no other CPU to put it on, so it also competes for {measured_text}")
        }
    }
}

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

const PSI_FILE: &str = "/proc/pressure/memory";

impl MemoryLoad {
    /// Create the cgroup sized for an experiment of `size_hint` bytes, start the competitor on
    /// `competitor_cpu` (unpinned when `None`) and return once its memory is resident.
    pub fn start(
        size_hint: Option<u64>,
        measured: Option<usize>,
        competitor_cpu: Option<usize>,
    ) -> Result<MemoryLoad, SetupError> {
        let hierarchy = hierarchy()?;
        let meminfo = procfs::Meminfo::current()
            .map_err(|e| SetupError::Failed(format!("cannot read /proc/meminfo: {e}")))?;
        let available = meminfo.mem_available.unwrap_or(meminfo.mem_free);
        let sizes = sizes(size_hint, available).map_err(SetupError::Unsupported)?;
        let cgroup = Cgroup::create(&hierarchy, &sizes, meminfo.swap_total)?;
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
            psi_before: read_psi(Path::new(PSI_FILE)),
            cgroup_psi_before: read_psi(&cgroup.file("memory.pressure")),
            cgroup,
        })
    }

    /// The `cgroup.procs` file the worker writes its pid into.
    pub fn cgroup_procs(&self) -> PathBuf {
        self.cgroup.procs()
    }

    /// What the load was and did, as named, readable details.
    pub fn record(&self) -> Vec<(String, String)> {
        let mut d: Vec<(String, String)> = Vec::new();
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
        add(
            "memory limit",
            format!(
                "{} in {}: {source} plus a quarter (at least {}) for the worker's own memory{cap}",
                mib_exact(s.limit),
                cg.version.limit_file(),
                mib(MIN_HEADROOM)
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
            if self.swap == 0 {
                "none: anonymous memory cannot be paged out, so under this limit the kernel can \
                 reclaim only file-backed pages (page cache): a file mapping shows the pressure \
                 as major faults and inblock, while an anonymous experiment that does not fit \
                 beside the competitor has the competitor OOM-killed"
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

        let psi_after = read_psi(Path::new(PSI_FILE));
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
                    "{PSI_FILE} is absent (kernel without CONFIG_PSI, or booted with psi=0): \
                     no stall figures"
                ),
            ),
        }
        if let (Some(before), Some(after)) = (
            &self.cgroup_psi_before,
            read_psi(&cg.file("memory.pressure")),
        ) {
            add(
                "memory stall in the cgroup (PSI)",
                format!(
                    "{}; at the end {}",
                    describe_stall(before, &after),
                    describe_psi(&after)
                ),
            );
        }

        if let Some((peak, file)) = cg.peak() {
            add(
                "cgroup peak usage",
                format!(
                    "{} of the {} limit, from {file}",
                    mib_exact(peak),
                    mib(s.limit)
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
                let hwm = status_bytes(self.competitor.pid, "VmHWM");
                let rss = status_bytes(self.competitor.pid, "VmRSS");
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
        d
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
            let name = match signal {
                libc::SIGKILL => "SIGKILL".to_string(),
                libc::SIGINT | libc::SIGTERM | libc::SIGHUP => {
                    crate::platform::interrupt::signal_name(signal).to_string()
                }
                other => format!("signal {other}"),
            };
            format!("killed by {name} {after:.2} s after it started")
        }
    } else {
        format!(
            "exited with code {} {after:.2} s after it started",
            libc::WEXITSTATUS(exit.status)
        )
    }
}

/// Entry point of the competitor (`oslab load --memory BYTES`): join the cgroup, fill `bytes`
/// of anonymous memory, say so on stdout, then write random pages until killed or orphaned.
pub fn competitor_main(
    bytes: u64,
    cpu: Option<usize>,
    cgroup_procs: Option<&Path>,
    parent: u32,
) -> i32 {
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag on this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    // The parent may have died before the flag was set: then there is nobody to stop us.
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } as u32 != parent {
        return 1;
    }
    let mut out = io::stdout();
    let region = match fill(bytes, cpu, cgroup_procs) {
        Ok(region) => region,
        Err(reason) => {
            let _ = writeln!(out, "error: {reason}");
            return 1;
        }
    };
    if writeln!(out, "{READY}").and_then(|()| out.flush()).is_err() {
        return 1;
    }
    region.churn()
}

/// The competitor's memory: mapped for the process's lifetime (it ends by being killed).
struct Region {
    base: *mut u8,
    pages: u64,
    page: u64,
}

/// Join the cgroup, make this process the OOM killer's first choice, pin it, then map and
/// write every page of `bytes`.
fn fill(bytes: u64, cpu: Option<usize>, cgroup_procs: Option<&Path>) -> Result<Region, String> {
    if let Some(procs) = cgroup_procs {
        join(procs).map_err(|e| format!("cannot join the cgroup ({}): {e}", procs.display()))?;
    }
    std::fs::write("/proc/self/oom_score_adj", "1000")
        .map_err(|e| format!("cannot set oom_score_adj: {e}"))?;
    if let Some(cpu) = cpu {
        cpu::pin(&[cpu]).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    }
    let page = page_size();
    let pages = bytes / page;
    if pages == 0 {
        return Err(format!("{bytes} bytes is less than a page"));
    }
    let len = usize::try_from(pages * page).map_err(|_| format!("{bytes} bytes is too large"))?;
    // SAFETY: a fresh anonymous mapping at an address the kernel picks.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(format!(
            "mmap of {bytes} bytes failed: {}",
            io::Error::last_os_error()
        ));
    }
    // 4 KiB pages, so the region is charged and touched page by page as the experiment's is.
    // SAFETY: the range is exactly the mapping made above.
    if unsafe { libc::madvise(base, len, libc::MADV_NOHUGEPAGE) } != 0 {
        return Err(format!(
            "madvise(MADV_NOHUGEPAGE) failed: {}",
            io::Error::last_os_error()
        ));
    }
    let region = Region {
        base: base.cast(),
        pages,
        page,
    };
    for i in 0..pages {
        region.write(i, i);
    }
    Ok(region)
}

impl Region {
    #[inline(always)]
    fn write(&self, page: u64, value: u64) {
        // SAFETY: `page < pages`, so the write lies inside the mapping, 8-byte aligned.
        unsafe {
            self.base
                .add((page * self.page) as usize)
                .cast::<u64>()
                .write_volatile(value)
        };
    }

    /// Write random pages forever (xorshift64), so the whole region stays in use.
    fn churn(&self) -> ! {
        let mut x = u64::from(std::process::id()) | 0x9E37_79B9_7F4A_7C15;
        loop {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.write(x % self.pages, x);
        }
    }
}

#[cfg(test)]
mod tests;

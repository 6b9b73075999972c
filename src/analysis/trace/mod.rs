//! A traced command's system calls summed up per call: how often, how often each error, the
//! wall time inside (total, median, a log2 histogram), and the phase of the program each
//! call belongs to. Pure: it reads `model::trace` records and the names it is given.
//!
//! - Pairing: a task's exit record closes its open entry of the same call. A call that never
//!   returns (`exit_group`, or a task still inside when the command ended) counts as made,
//!   with no time. An exit without an entry (a child's return from `fork`, the held child's
//!   wait before its execve) is not a call made by the traced program.
//! - The command's own records before its first `execve` entry are oslab's, not the
//!   command's, and are left out.
//! - Phases: the command's first `execve` is its exec; a call made from the dynamic loader's code (`ld-linux*.so`, `ld.so`) is the
//!   loader's; `exit`/`exit_group` are the exit; the rest is the program (libc start-up and
//!   `main` cannot be told apart by the code that makes the call: both call through libc).

pub mod claims;

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::trace::{
    CallSite, FINE_PER_OCTAVE, Mapping, SysEvent, Traced, fine_bucket_range,
};

/// Where in a program's life a call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The `execve` that starts the command.
    Exec,
    /// The dynamic loader mapping and relocating the program and its libraries.
    Loader,
    /// Everything the program's own code and libc did.
    Program,
    /// `exit_group` and `exit`.
    Exit,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Exec => "exec",
            Phase::Loader => "dynamic loader",
            Phase::Program => "program (libc start-up and main)",
            Phase::Exit => "exit",
        }
    }
}

/// Log2 latency buckets: bucket `i` holds calls of `[2^i, 2^(i+1))` ns (bucket 0 also 0 ns).
pub const BUCKETS: usize = 40;

/// One system call's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallStats {
    pub nr: i64,
    pub name: String,
    pub phase: Phase,
    pub calls: u64,
    /// Failed calls by errno.
    pub errors: BTreeMap<i32, u64>,
    /// Calls that did not return while traced.
    pub unfinished: u64,
    pub total_ns: u64,
    pub median_ns: Option<u64>,
    pub histogram: Vec<u64>,
    #[serde(skip)]
    latencies: Vec<u64>,
    /// Counted in the kernel: the returned calls' times in fine buckets (see
    /// `model::trace::fine_bucket_range`), the median read from them.
    #[serde(skip)]
    fine: BTreeMap<u32, u64>,
}

impl CallStats {
    fn new(nr: i64, name: String, phase: Phase) -> CallStats {
        CallStats {
            nr,
            name,
            phase,
            calls: 0,
            errors: BTreeMap::new(),
            unfinished: 0,
            total_ns: 0,
            median_ns: None,
            histogram: vec![0; BUCKETS],
            latencies: Vec::new(),
            fine: BTreeMap::new(),
        }
    }

    /// Add one call site's calls as the kernel counted them.
    fn add_site(&mut self, site: &CallSite) {
        self.calls += site.calls;
        self.unfinished += site.unfinished;
        self.total_ns += site.total_ns;
        for (&errno, &n) in &site.errors {
            *self.errors.entry(errno).or_insert(0) += n;
        }
        for (&b, &n) in &site.buckets {
            *self.fine.entry(b).or_insert(0) += n;
            let coarse = (b / FINE_PER_OCTAVE) as usize;
            self.histogram[coarse.min(BUCKETS - 1)] += n;
        }
    }

    #[cfg(test)]
    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    fn add(&mut self, latency: Option<u64>, ret: Option<i64>) {
        self.calls += 1;
        match latency {
            Some(ns) => {
                self.total_ns += ns;
                self.latencies.push(ns);
                let bucket = (u64::BITS - ns.max(1).leading_zeros() - 1) as usize;
                self.histogram[bucket.min(BUCKETS - 1)] += 1;
            }
            None => self.unfinished += 1,
        }
        if let Some(ret) = ret.filter(|r| (-4095..0).contains(r)) {
            *self.errors.entry(-ret as i32).or_insert(0) += 1;
        }
    }

    fn finish(&mut self) {
        self.latencies.sort_unstable();
        self.median_ns =
            (!self.latencies.is_empty()).then(|| self.latencies[self.latencies.len() / 2]);
        if self.median_ns.is_none() {
            // One call's median is its time; no median exceeds the total.
            let returned = self.calls - self.unfinished;
            self.median_ns = match returned {
                0 => None,
                1 => Some(self.total_ns),
                _ => fine_median(&self.fine).map(|m| m.min(self.total_ns)),
            };
        }
    }
}

/// The summary of a trace: per (phase, call), in phase order then by count.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub calls: Vec<CallStats>,
    /// Processes that made calls.
    pub processes: usize,
    pub lost: u64,
}

impl Summary {
    /// Calls per system call over all phases: name → count (what the tests compare).
    #[cfg(test)]
    fn counts(&self) -> BTreeMap<String, u64> {
        let mut counts = BTreeMap::new();
        for c in &self.calls {
            *counts.entry(c.name.clone()).or_insert(0) += c.calls;
        }
        counts
    }
}

/// Sum up `traced`; `name` names a call number, `execve` and `exits` are this architecture's
/// numbers of execve and of the calls that end a task.
pub fn summarize(
    traced: &Traced,
    name: &dyn Fn(i64) -> String,
    execve: i64,
    exits: &[i64],
) -> Summary {
    let mut open: HashMap<u32, (i64, u64, Phase)> = HashMap::new();
    let mut stats: BTreeMap<(Phase, i64), CallStats> = BTreeMap::new();
    let mut started = false;
    let mut pids = std::collections::BTreeSet::new();
    let mut record = |phase: Phase, nr: i64, latency: Option<u64>, ret: Option<i64>| {
        stats_of(&mut stats, phase, nr, name).add(latency, ret);
    };
    for event in &traced.events {
        match *event {
            SysEvent::Enter {
                pid,
                tid,
                time,
                nr,
                ip,
            } => {
                let first = pid == traced.pid && !started;
                if first {
                    if nr != execve {
                        continue;
                    }
                    started = true;
                }
                pids.insert(pid);
                let phase = phase_of(first, nr, exits, || from_loader(&traced.mappings, pid, ip));
                // An entry while one is open: the open one never returned (a lost record).
                if let Some((nr0, _, phase0)) = open.insert(tid, (nr, time, phase)) {
                    record(phase0, nr0, None, None);
                }
            }
            SysEvent::Exit {
                tid, time, nr, ret, ..
            } => {
                if let Some((nr0, t0, phase)) = open.remove(&tid) {
                    if nr0 == nr || nr0 == execve {
                        record(phase, nr0, Some(time.saturating_sub(t0)), Some(ret));
                    } else {
                        record(phase, nr0, None, None);
                    }
                }
            }
        }
    }
    for (_, (nr, _, phase)) in open {
        record(phase, nr, None, None);
    }
    for site in &traced.sites {
        pids.insert(site.pid);
        let phase = phase_of(site.exec, site.nr, exits, || {
            from_loader(&traced.mappings, site.pid, site.ip)
        });
        stats_of(&mut stats, phase, site.nr, name).add_site(site);
    }
    let mut calls: Vec<CallStats> = stats.into_values().collect();
    for c in &mut calls {
        c.finish();
    }
    calls.sort_by(|a, b| {
        a.phase
            .cmp(&b.phase)
            .then(b.calls.cmp(&a.calls))
            .then(a.name.cmp(&b.name))
    });
    Summary {
        calls,
        processes: pids.len(),
        lost: traced.lost,
    }
}

/// A call's phase: the command's own exec, an exit, made from the loader's code, or the
/// program's.
fn phase_of(exec: bool, nr: i64, exits: &[i64], from_loader: impl FnOnce() -> bool) -> Phase {
    if exec {
        Phase::Exec
    } else if exits.contains(&nr) {
        Phase::Exit
    } else if from_loader() {
        Phase::Loader
    } else {
        Phase::Program
    }
}

/// The figures of call `nr` in `phase`, made empty the first time.
fn stats_of<'a>(
    stats: &'a mut BTreeMap<(Phase, i64), CallStats>,
    phase: Phase,
    nr: i64,
    name: &dyn Fn(i64) -> String,
) -> &'a mut CallStats {
    stats
        .entry((phase, nr))
        .or_insert_with(|| CallStats::new(nr, name(nr), phase))
}

/// The middle of the fine bucket that holds the median call (the `n/2`-th in time order, as
/// with exact times): within an eighth of an octave of the true median.
fn fine_median(fine: &BTreeMap<u32, u64>) -> Option<u64> {
    let n: u64 = fine.values().sum();
    let mut seen = 0;
    for (&b, &count) in fine {
        seen += count;
        if seen > n / 2 {
            let (low, high) = fine_bucket_range(b);
            return Some(low + (high - low) / 2);
        }
    }
    None
}

/// Whether `ip` of process `pid` lies in the dynamic loader's code (the latest mapping of
/// the process that holds it decides).
fn from_loader(mappings: &[Mapping], pid: u32, ip: u64) -> bool {
    mappings
        .iter()
        .rev()
        .find(|m| m.pid == pid && ip >= m.start && ip - m.start < m.len)
        .is_some_and(|m| is_loader(&m.path))
}

fn is_loader(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.starts_with("ld-linux") || file.starts_with("ld.so") || file.starts_with("ld64.so")
}

/// What a well-known call made at start-up is for, in one line.
pub fn explain(name: &str) -> Option<&'static str> {
    Some(match name {
        "execve" => {
            "replaces the process image with the program (the kernel maps it and the loader)"
        }
        "brk" => "finds (then moves) the end of the heap: the loader's and malloc's first memory",
        "arch_prctl" => {
            "sets the FS base register to the thread's TLS block (x86-64), or probes CET"
        }
        "set_tid_address" => {
            "tells the kernel where to clear the thread id at exit (for pthread_join)"
        }
        "set_robust_list" => {
            "registers the list of robust futexes the kernel releases if the thread dies"
        }
        "rseq" => "registers restartable sequences (glibc ≥ 2.35: fast sched_getcpu, per-CPU data)",
        "prlimit64" => "reads RLIMIT_STACK, to size the main thread's stack guard",
        "mprotect" => "makes relocated data read-only (RELRO) or sets a library segment's rights",
        "mmap" => "maps the program's libraries' segments, or anonymous memory",
        "munmap" => "unmaps what is no longer needed (the loader's cache of library paths)",
        "openat" => "opens a file: the loader opens ld.so.cache and each library",
        "access" => "the loader checks for /etc/ld.so.preload (absent: ENOENT)",
        "newfstatat" | "fstat" => {
            "reads a file's size and type (the loader: ld.so.cache, each library)"
        }
        "read" => "reads a file: the loader reads each library's ELF header",
        "pread64" => "the loader reads a library's program headers and notes at an offset",
        "close" => "closes a file descriptor",
        "getrandom" => "seeds malloc's and the stack protector's randomness",
        "exit_group" => "ends every thread of the process (never returns)",
        "clone" | "clone3" | "fork" | "vfork" => "creates a process or thread",
        "wait4" => "waits for a child process to end",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXECVE: i64 = 59;
    const EXIT_GROUP: i64 = 231;

    fn name(nr: i64) -> String {
        match nr {
            59 => "execve".into(),
            231 => "exit_group".into(),
            2 => "open".into(),
            0 => "read".into(),
            _ => format!("nr{nr}"),
        }
    }

    /// The dynamic loader mapped into process 10.
    fn loader() -> Mapping {
        Mapping {
            pid: 10,
            start: 0x7000_0000,
            len: 0x1000,
            path: "/lib64/ld-linux-x86-64.so.2".into(),
        }
    }

    fn find(s: &Summary, phase: Phase, name: &str) -> Option<CallStats> {
        s.calls
            .iter()
            .find(|c| c.phase == phase && c.name == name)
            .cloned()
    }

    fn enter(tid: u32, time: u64, nr: i64, ip: u64) -> SysEvent {
        SysEvent::Enter {
            pid: tid,
            tid,
            time,
            nr,
            ip,
        }
    }

    fn exit(tid: u32, time: u64, nr: i64, ret: i64) -> SysEvent {
        SysEvent::Exit {
            pid: tid,
            tid,
            time,
            nr,
            ret,
        }
    }

    #[test]
    fn calls_pair_fail_and_fall_into_phases() {
        let traced = Traced {
            pid: 10,
            events: vec![
                // oslab's held child before its execve: left out.
                exit(10, 1, 0, 1),
                enter(10, 2, 3, 0),
                exit(10, 3, 3, 0),
                enter(10, 4, EXECVE, 0),
                exit(10, 10, EXECVE, 0),
                enter(10, 11, 2, 0x7000_0010),
                exit(10, 15, 2, -2),
                enter(10, 16, 2, 0x5000_0010),
                exit(10, 116, 2, 3),
                enter(10, 120, EXIT_GROUP, 0x5000_0020),
            ],
            mappings: vec![
                loader(),
                Mapping {
                    pid: 10,
                    start: 0x5000_0000,
                    len: 0x1000,
                    path: "/usr/bin/true".into(),
                },
            ],
            ..Traced::default()
        };
        let s = summarize(&traced, &name, EXECVE, &[EXIT_GROUP]);
        let find = |phase, n| find(&s, phase, n);
        let loader_open = find(Phase::Loader, "open").expect("the loader's open");
        assert_eq!(
            (loader_open.calls, loader_open.errors.get(&2)),
            (1, Some(&1))
        );
        assert_eq!(loader_open.total_ns, 4);
        let open = find(Phase::Program, "open").expect("the program's open");
        assert_eq!(
            (open.calls, open.error_count(), open.median_ns),
            (1, 0, Some(100))
        );
        assert_eq!(open.histogram[6], 1, "100 ns is in [64, 128)");
        let exit = find(Phase::Exit, "exit_group").expect("exit_group");
        assert_eq!((exit.calls, exit.unfinished), (1, 1));
        assert_eq!(s.counts()["execve"], 1);
        assert_eq!(s.counts().get("nr3"), None, "before the execve: oslab's");
        assert_eq!(s.counts().values().sum::<u64>(), 4);
    }

    #[test]
    fn a_child_counts_its_own_calls_but_not_its_return_from_fork() {
        let traced = Traced {
            pid: 10,
            events: vec![
                enter(10, 1, EXECVE, 0),
                exit(10, 2, EXECVE, 0),
                enter(10, 3, 56, 0),
                exit(11, 4, 56, 0), // the child's return from clone
                exit(10, 5, 56, 11),
                enter(11, 6, 0, 0),
                exit(11, 7, 0, 5),
            ],
            ..Traced::default()
        };
        let s = summarize(&traced, &name, EXECVE, &[EXIT_GROUP]);
        assert_eq!(s.counts()["nr56"], 1);
        assert_eq!(s.counts()["read"], 1);
        assert_eq!(s.processes, 2);
    }

    #[test]
    fn well_known_start_up_calls_are_explained() {
        assert!(explain("arch_prctl").unwrap().contains("FS"));
        assert!(explain("set_tid_address").is_some());
        assert_eq!(explain("io_uring_enter"), None);
        assert!(is_loader("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
        assert!(!is_loader("/usr/lib/x86_64-linux-gnu/libc.so.6"));
    }

    #[test]
    fn sites_counted_in_the_kernel_fall_into_the_same_phases_with_a_bucketed_median() {
        let site = |exec, nr, ip, calls, unfinished, buckets: &[(u32, u64)]| CallSite {
            pid: 10,
            exec,
            marker_thread: false,
            nr,
            ip,
            calls,
            unfinished,
            total_ns: buckets
                .iter()
                .map(|&(b, n)| fine_bucket_range(b).0 * n)
                .sum(),
            errors: if nr == 2 {
                BTreeMap::from([(2, 1)])
            } else {
                BTreeMap::new()
            },
            buckets: buckets.iter().copied().collect(),
        };
        let traced = Traced {
            pid: 10,
            sites: vec![
                site(true, EXECVE, 0, 1, 0, &[(40, 1)]),
                // Two call sites of open, in the loader and in the program.
                site(false, 2, 0x7000_0010, 3, 0, &[(20, 1), (24, 2)]),
                site(false, 2, 0x5000_0010, 1, 0, &[(26, 1)]),
                site(false, EXIT_GROUP, 0x5000_0020, 1, 1, &[]),
            ],
            mappings: vec![loader()],
            ..Traced::default()
        };
        let s = summarize(&traced, &name, EXECVE, &[EXIT_GROUP]);
        let find = |phase, n| find(&s, phase, n).unwrap_or_else(|| panic!("{n}: {s:?}"));
        let exec = find(Phase::Exec, "execve");
        assert_eq!(
            exec.median_ns,
            Some(exec.total_ns),
            "one call: its own time"
        );
        let loader = find(Phase::Loader, "open");
        assert_eq!((loader.calls, loader.error_count()), (3, 1));
        // Bucket 24 (l = 6) holds [64, 80): the median call of three is in it.
        assert_eq!(loader.median_ns, Some(72));
        assert_eq!(
            loader.histogram[6], 2,
            "[64, 128) holds the two calls of bucket 24"
        );
        assert_eq!(find(Phase::Program, "open").calls, 1);
        let exit = find(Phase::Exit, "exit_group");
        assert_eq!((exit.calls, exit.unfinished, exit.median_ns), (1, 1, None));
        assert_eq!(s.processes, 1);
    }
}

//! Counting a process tree's system calls in the kernel: eBPF programs on the `sys_enter`,
//! `sys_exit` and `sched_process_fork` raw tracepoints (source `bpf/systrace.bpf.c`, the
//! committed object `src/platform/linux/bpf/systrace.bpf.o`, loaded with aya) sum the
//! calls of every process the seeded one starts per (process, phase, call, calling address):
//! count, errors by errno, wall time inside and a histogram of it. User space reads a few
//! hundred map entries when the command has ended, instead of a record per call.
//!
//! Raw tracepoints, not the perf-event kind: no record is built for each call, and detaching
//! does not wait for an RCU grace period (closing three perf tracepoint events cost 180 ms).
//! Loading needs CAP_BPF and CAP_PERFMON (or root) and a kernel with BTF (the fork program
//! reads `task_struct::pid` relocated against it); [`SyscallCounter::open`] says in one line
//! why it could not.

use std::collections::BTreeMap;

use aya::maps::{Array, HashMap, MapData, MapError};
use aya::programs::{ProgramError, RawTracePoint};
use aya::{Ebpf, EbpfLoader, Pod};

use crate::model::trace::{CallSite, Marked};

/// The object `bpf/build.sh` builds from `bpf/systrace.bpf.c`.
static OBJECT: &[u8] = include_bytes!("bpf/systrace.bpf.o");

/// The offset of the user instruction pointer in `struct pt_regs`.
#[cfg(target_arch = "x86_64")]
const IP_OFFSET: u32 = 16 * 8; // after r15..orig_ax
#[cfg(target_arch = "aarch64")]
const IP_OFFSET: u32 = 32 * 8; // after regs[31] and sp

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct CallKey {
    tgid: u32,
    phase: u32,
    nr: i64,
    ip: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct CallValue {
    calls: u64,
    total_ns: u64,
    errors: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct HistKey {
    call: CallKey,
    bucket: u32,
    pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct ErrnoKey {
    call: CallKey,
    err: i32,
    pad: u32,
}

/// The tree's state (`struct tree`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Tree {
    root: u64,
    begun: u64,
    marks: u64,
    dropped: u64,
    marker: u64,
    opened: u64,
    closed: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct OpenCall {
    start: u64,
    nr: i64,
    ip: u64,
    tgid: u32,
    phase: u32,
}

// SAFETY: plain `repr(C)` data with explicit padding fields, as the C side lays it out.
unsafe impl Pod for CallKey {}
// SAFETY: as above.
unsafe impl Pod for CallValue {}
// SAFETY: as above.
unsafe impl Pod for HistKey {}
// SAFETY: as above.
unsafe impl Pod for ErrnoKey {}
// SAFETY: as above.
unsafe impl Pod for OpenCall {}
// SAFETY: as above.
unsafe impl Pod for Tree {}

/// Why the eBPF counter did not load, attach, follow or read.
#[derive(Debug, thiserror::Error)]
pub enum BpfError {
    /// The kernel refused to load or attach a program: one line, naming the fix where it is a
    /// permission.
    #[error("{0}")]
    Refused(String),
    /// The embedded object lacks a program or map oslab's code names (a build defect).
    #[error("the eBPF object has no {kind} {name}")]
    Missing { kind: &'static str, name: String },
    /// A program of the object is not of the kind oslab attaches.
    #[error("{program}: {source}")]
    Program {
        program: &'static str,
        #[source]
        source: ProgramError,
    },
    /// A map could not be opened as its type, updated or read: `doing` says which.
    #[error("{doing}: {source}")]
    Map {
        doing: String,
        #[source]
        source: MapError,
    },
}

/// The loaded and attached programs; dropping it detaches them.
pub struct SyscallCounter {
    ebpf: Ebpf,
    windowed: bool,
}

/// What the counters held when read.
#[derive(Debug, Default)]
pub struct Counted {
    pub sites: Vec<CallSite>,
    /// Map updates that failed (a full map): the counts are lower bounds.
    pub dropped: u64,
    /// The marker window, when counting in one.
    pub marked: Option<Marked>,
}

impl SyscallCounter {
    /// Load and attach the programs. `windowed`: count only between the first two calls of
    /// `mark_nr` (a number no kernel implements). `Err`: one line saying why not.
    pub fn open(execve_nr: i64, mark_nr: i64, windowed: bool) -> Result<SyscallCounter, BpfError> {
        let window = u32::from(windowed);
        let mut ebpf = EbpfLoader::new()
            .override_global("ip_offset", &IP_OFFSET, true)
            .override_global("execve_nr", &execve_nr, true)
            .override_global("mark_nr", &mark_nr, true)
            .override_global("windowed", &window, true)
            .load(OBJECT)
            .map_err(|e| refusal(&e.to_string(), &e))?;
        for (program, tracepoint) in [
            ("on_fork", "sched_process_fork"),
            ("on_enter", "sys_enter"),
            ("on_exit", "sys_exit"),
        ] {
            let tp: &mut RawTracePoint = ebpf
                .program_mut(program)
                .ok_or_else(|| BpfError::Missing {
                    kind: "program",
                    name: program.to_string(),
                })?
                .try_into()
                .map_err(|source| BpfError::Program { program, source })?;
            tp.load()
                .map_err(|e| refusal(&format!("{program}: {e}"), &e))?;
            tp.attach(tracepoint)
                .map_err(|e| refusal(&format!("{tracepoint}: {e}"), &e))?;
        }
        Ok(SyscallCounter { ebpf, windowed })
    }

    /// Count the calls of process `pid` (still held before its execve) and of every process
    /// it starts from now on.
    pub fn follow(&mut self, pid: u32) -> Result<(), BpfError> {
        let mut state: Array<&mut MapData, Tree> = map_mut(&mut self.ebpf, "state")?;
        let tree = Tree {
            root: u64::from(pid),
            ..Tree::default()
        };
        state.set(0, tree, 0).map_err(|source| BpfError::Map {
            doing: "cannot seed the eBPF state".into(),
            source,
        })?;
        let mut tracked: HashMap<&mut MapData, u32, u32> = map_mut(&mut self.ebpf, "tracked")?;
        tracked.insert(pid, 1, 0).map_err(|source| BpfError::Map {
            doing: format!("cannot follow process {pid}"),
            source,
        })
    }

    /// Everything counted so far, per call site, with the calls still inside (or that never
    /// return, like `exit_group`) as unfinished.
    pub fn read(&self) -> Result<Counted, BpfError> {
        let calls: HashMap<&MapData, CallKey, CallValue> = map(&self.ebpf, "calls")?;
        let mut sites: BTreeMap<CallKey, CallSite> = BTreeMap::new();
        for entry in calls.iter() {
            let (key, v) = entry.map_err(read_error)?;
            let site = site(&mut sites, key);
            site.calls += v.calls;
            site.total_ns += v.total_ns;
        }
        let hist: HashMap<&MapData, HistKey, u64> = map(&self.ebpf, "hist")?;
        for entry in hist.iter() {
            let (key, n) = entry.map_err(read_error)?;
            *site(&mut sites, key.call)
                .buckets
                .entry(key.bucket)
                .or_insert(0) += n;
        }
        let errnos: HashMap<&MapData, ErrnoKey, u64> = map(&self.ebpf, "errnos")?;
        for entry in errnos.iter() {
            let (key, n) = entry.map_err(read_error)?;
            *site(&mut sites, key.call)
                .errors
                .entry(key.err)
                .or_insert(0) += n;
        }
        let inflight: HashMap<&MapData, u32, OpenCall> = map(&self.ebpf, "inflight")?;
        for entry in inflight.iter() {
            let (_, open) = entry.map_err(read_error)?;
            if open.start == 0 {
                continue;
            }
            let key = CallKey {
                tgid: open.tgid,
                phase: open.phase,
                nr: open.nr,
                ip: open.ip,
            };
            let site = site(&mut sites, key);
            site.calls += 1;
            site.unfinished += 1;
        }
        let state: Array<&MapData, Tree> = map(&self.ebpf, "state")?;
        let tree = state.get(&0, 0).map_err(read_error)?;
        Ok(Counted {
            sites: sites.into_values().collect(),
            dropped: tree.dropped,
            marked: self.windowed.then_some(Marked {
                marks: tree.marks,
                pid: (tree.marker >> 32) as u32,
                tid: tree.marker as u32,
                window_ns: tree.closed.saturating_sub(tree.opened),
            }),
        })
    }
}

fn site(sites: &mut BTreeMap<CallKey, CallSite>, key: CallKey) -> &mut CallSite {
    sites.entry(key).or_insert_with(|| CallSite {
        pid: key.tgid,
        exec: key.phase == 0,
        marker_thread: key.phase == 2,
        nr: key.nr,
        ip: key.ip,
        ..CallSite::default()
    })
}

fn map<'a, M>(ebpf: &'a Ebpf, name: &str) -> Result<M, BpfError>
where
    M: TryFrom<&'a aya::maps::Map, Error = MapError>,
{
    let m = ebpf.map(name).ok_or_else(|| missing_map(name))?;
    M::try_from(m).map_err(|source| BpfError::Map {
        doing: format!("eBPF map {name}"),
        source,
    })
}

fn map_mut<'a, M>(ebpf: &'a mut Ebpf, name: &str) -> Result<M, BpfError>
where
    M: TryFrom<&'a mut aya::maps::Map, Error = MapError>,
{
    let m = ebpf.map_mut(name).ok_or_else(|| missing_map(name))?;
    M::try_from(m).map_err(|source| BpfError::Map {
        doing: format!("eBPF map {name}"),
        source,
    })
}

fn missing_map(name: &str) -> BpfError {
    BpfError::Missing {
        kind: "map",
        name: name.to_string(),
    }
}

fn read_error(source: MapError) -> BpfError {
    BpfError::Map {
        doing: "cannot read the eBPF counts".into(),
        source,
    }
}

/// One line for a load or attach that failed: permission problems name the fix.
fn refusal(what: &str, error: &(dyn std::error::Error + 'static)) -> BpfError {
    BpfError::Refused(refusal_line(what, error))
}

fn refusal_line(what: &str, error: &(dyn std::error::Error + 'static)) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(io.raw_os_error(), Some(libc::EPERM | libc::EACCES))
        {
            return "eBPF is not permitted: run as root or grant CAP_BPF and CAP_PERFMON \
                    (and check kernel.unprivileged_bpf_disabled)"
                .to_string();
        }
        source = e.source();
    }
    format!("the eBPF programs did not load: {what}")
}

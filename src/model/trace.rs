//! The system calls of a traced command as the platform recorded them (`oslab trace`): each
//! entry and exit, and the executable files mapped into the traced processes.

use std::collections::BTreeMap;
use std::time::Duration;

/// One tracepoint record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysEvent {
    /// A task entered system call `nr`, from user address `ip` (0 if unknown).
    Enter {
        pid: u32,
        tid: u32,
        time: u64,
        nr: i64,
        ip: u64,
    },
    /// A task left system call `nr` with `ret` (-4095..-1: an error, its errno negated).
    Exit {
        pid: u32,
        tid: u32,
        time: u64,
        nr: i64,
        ret: i64,
    },
}

impl SysEvent {
    pub fn time(&self) -> u64 {
        match *self {
            SysEvent::Enter { time, .. } | SysEvent::Exit { time, .. } => time,
        }
    }
}

/// An executable file mapped into a traced process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub pid: u32,
    pub start: u64,
    pub len: u64,
    pub path: String,
}

/// One call site's calls as counted in the kernel (the eBPF path): one process, one system
/// call, one calling address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSite {
    pub pid: u32,
    /// The command's own first `execve`.
    pub exec: bool,
    /// Made, inside the marker window, by the thread that made the markers.
    pub marker_thread: bool,
    pub nr: i64,
    /// The user-space address the call was made from (0 if unknown).
    pub ip: u64,
    /// Calls made, the unfinished ones included.
    pub calls: u64,
    /// Calls that had not returned when the command ended (`exit_group`), with no time.
    pub unfinished: u64,
    pub total_ns: u64,
    /// Failed calls by errno.
    pub errors: BTreeMap<i32, u64>,
    /// The returned calls' wall time in fine buckets, [`FINE_PER_OCTAVE`] per power of two
    /// (see [`fine_bucket_range`]): bucket → calls.
    pub buckets: BTreeMap<u32, u64>,
}

/// Fine latency buckets per power of two.
pub const FINE_PER_OCTAVE: u32 = 4;

/// The nanoseconds `[low, high)` fine bucket `b` holds: bucket `4l + s` holds
/// `[(4 + s)·2^(l-2), (5 + s)·2^(l-2))` for `l ≥ 2`; below 4 ns the buckets are 0 (0–1 ns), 4
/// (2 ns) and 6 (3 ns).
pub fn fine_bucket_range(b: u32) -> (u64, u64) {
    let (l, s) = (b / FINE_PER_OCTAVE, u64::from(b % FINE_PER_OCTAVE));
    match l {
        0 => (0, 2),
        1 => (2 + s / 2, 3 + s / 2),
        _ => {
            let at = |m: u64| u64::try_from(u128::from(m) << (l.min(65) - 2)).unwrap_or(u64::MAX);
            (at(4 + s), at(5 + s))
        }
    }
}

/// The window between two marker calls, counted in the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marked {
    /// Marker calls seen (a window needs two).
    pub marks: u64,
    /// The process and thread that made the first marker.
    pub pid: u32,
    pub tid: u32,
    /// From the first marker to the second.
    pub window_ns: u64,
}

/// How the calls were traced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Method {
    /// Counted in the kernel by eBPF programs: [`Traced::sites`].
    #[default]
    Counted,
    /// A perf record per call ([`Traced::events`]): asked for, or (`Some`: why) because
    /// eBPF could not count them.
    Recorded { not_counted: Option<String> },
}

/// What tracing a command gave.
#[derive(Debug, Clone, Default)]
pub struct Traced {
    /// In time order (the perf-records path).
    pub events: Vec<SysEvent>,
    /// The calls as counted in the kernel (the eBPF path).
    pub sites: Vec<CallSite>,
    pub mappings: Vec<Mapping>,
    /// The command's process id.
    pub pid: u32,
    /// Records the kernel dropped (a ring buffer or map was full).
    pub lost: u64,
    /// The command's wait status.
    pub status: i32,
    pub wall: Duration,
    pub method: Method,
    /// What the command wrote to its stdout, when it was captured.
    pub stdout: Vec<u8>,
    /// Processes the command started that still ran when it ended (killed with the trace).
    pub left_running: usize,
    /// The marker window as the kernel saw it (the eBPF backend with `TraceCommand::marked`).
    pub marked: Option<Marked>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C side's bucket of `ns` (bpf/systrace.bpf.c `bucket_of`), for the test.
    fn bucket_of(ns: u64) -> u32 {
        if ns < 4 {
            return if ns < 2 { 0 } else { 4 + (ns as u32 & 1) * 2 };
        }
        let l = 63 - ns.leading_zeros();
        l * FINE_PER_OCTAVE + ((ns >> (l - 2)) & 3) as u32
    }

    #[test]
    fn every_duration_falls_in_the_range_of_its_bucket() {
        let mut ns = 0u64;
        while ns < 1 << 40 {
            let (low, high) = fine_bucket_range(bucket_of(ns));
            assert!(
                low <= ns && ns < high,
                "{ns} ns in bucket {}",
                bucket_of(ns)
            );
            ns = ns * 5 / 4 + 1;
        }
        assert_eq!(fine_bucket_range(bucket_of(u64::MAX)), (7 << 61, u64::MAX));
    }
}

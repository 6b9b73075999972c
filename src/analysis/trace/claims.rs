//! Does one pass of an experiment's measured loop make the system calls the experiment
//! claims (`ExperimentInfo::syscalls` for its parameters, and its `syscalls` counter
//! expectation)? Pure: it reads
//! the records of a traced pass (`harness::traced`) and the claims it is given.
//!
//! - The window: the calls whose *entry* lies between the first marker's exit and the second
//!   marker's entry (`platform::systrace::MARK_NR`), over every traced process; the markers
//!   themselves are not counted. Counted in the kernel (eBPF), only the window's calls were
//!   counted, from the first marker's entry; a record per call is windowed here. A partner blocked in a call when the window opens has its
//!   entry outside it, and its last call may end after it: edges worth one call each, which
//!   the per-op thresholds absorb for passes of a hundred operations or more.
//! - Sides: the thread that made the markers is the *worker*; other threads of its process are
//!   *worker threads*; every other process (a partner, a forked child) is a *partner*.
//! - The verdict: every claimed call at least [`MIN_CLAIMED`] of its [`Claim::per_op`] over all sides, no
//!   unclaimed call at [`MAX_UNCLAIMED`] per op or more, the worker thread's calls per op
//!   within the bound of the `syscalls` counter expectation (that counter counts the worker
//!   thread only), and no record lost.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::trace::{CallSite, Marked, SysEvent, Traced};

/// A claimed call must be made at least this fraction of its claimed rate (per op).
pub const MIN_CLAIMED: f64 = 0.99;
/// An unclaimed call made this often per operation (or more) is a difference.
pub const MAX_UNCLAIMED: f64 = 0.01;

/// Why a trace has no window between the markers to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MarkerError {
    #[error("the trace holds no marker call: the worker never reached its traced pass")]
    NoMarker,
    #[error("the trace holds no second marker call: the traced pass did not end")]
    NoSecondMarker,
}

/// The span of a trace between the markers, in the records' time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: u64,
    pub end: u64,
    /// The process and thread that made the markers.
    pub pid: u32,
    pub tid: u32,
}

/// The window between the first marker's exit and the next marker's entry after it; `Err`
/// says which marker is missing.
pub fn window(events: &[SysEvent], marker: i64) -> Result<Window, MarkerError> {
    let (start, pid, tid) = events
        .iter()
        .find_map(|e| match *e {
            SysEvent::Exit {
                nr, time, pid, tid, ..
            } if nr == marker => Some((time, pid, tid)),
            _ => None,
        })
        .ok_or(MarkerError::NoMarker)?;
    let end = events
        .iter()
        .find_map(|e| match *e {
            SysEvent::Enter { nr, time, .. } if nr == marker && time >= start => Some(time),
            _ => None,
        })
        .ok_or(MarkerError::NoSecondMarker)?;
    Ok(Window {
        start,
        end,
        pid,
        tid,
    })
}

/// Who made a call, seen from the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The thread that runs the measured loop.
    Worker,
    /// Another thread of the worker's process (a partner thread).
    WorkerThread,
    /// Another process: a partner, or a child the loop forks.
    Partner,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Worker => "worker",
            Side::WorkerThread => "worker thread",
            Side::Partner => "partner",
        }
    }
}

/// One call made by one side in the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rate {
    pub syscall: String,
    pub nr: i64,
    pub side: Side,
    pub calls: u64,
    pub per_op: f64,
    pub claimed: bool,
}

/// One system call an experiment says its loop makes: at least `per_op` times per operation,
/// over every side (1: once per op; 1/N: once per N ops, say one `madvise` per batch of N
/// pages). A call made once per pass of a file or once per batch, however many operations
/// that holds, is not claimed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Claim {
    pub syscall: &'static str,
    pub per_op: f64,
}

impl Claim {
    /// A call made (at least) once per operation.
    pub const fn each(syscall: &'static str) -> Claim {
        Claim {
            syscall,
            per_op: 1.0,
        }
    }

    /// A call made at least `per_op` times per operation.
    pub const fn at_least(syscall: &'static str, per_op: f64) -> Claim {
        Claim { syscall, per_op }
    }

    /// A call the loop may make any number of times, none included (a partner that drains
    /// whatever has arrived when it runs): claimed, so that making it is no difference, but
    /// never missing.
    pub const fn any_number(syscall: &'static str) -> Claim {
        Claim {
            syscall,
            per_op: 0.0,
        }
    }

    /// `read`, `read (at least 1/16 per op)` when the rate is not one per op, or `read (any
    /// number)`.
    pub fn describe(&self) -> String {
        if self.per_op == 1.0 {
            return self.syscall.to_string();
        }
        if self.per_op == 0.0 {
            return format!("{} (any number)", self.syscall);
        }
        let inverse = 1.0 / self.per_op;
        let rate = if self.per_op < 1.0 && (inverse - inverse.round()).abs() < 1e-9 {
            format!("1/{}", inverse.round())
        } else {
            format!("{:.3}", self.per_op)
        };
        format!("{} (at least {rate} per op)", self.syscall)
    }
}

/// Each of `names` once per operation.
pub fn each(names: &[&'static str]) -> Vec<Claim> {
    names.iter().map(|&n| Claim::each(n)).collect()
}

/// The names of `claims`, joined with commas, their rates when not one per op; `none`.
pub fn describe(claims: &[Claim]) -> String {
    if claims.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = claims.iter().map(Claim::describe).collect();
    parts.join(", ")
}

/// What the experiment says one operation makes.
#[derive(Debug, Clone, Copy)]
pub struct Claims<'a> {
    /// `ExperimentInfo::syscalls` at the traced parameters.
    pub syscalls: &'a [Claim],
    /// The bound of its `syscalls` counter expectation, if it has one.
    pub total: Option<Bound>,
}

impl Claims<'_> {
    /// Whether `syscall` is claimed, at any rate.
    pub fn claims(&self, syscall: &str) -> bool {
        self.syscalls.iter().any(|c| c.syscall == syscall)
    }
}

/// A rate to three decimals, or to three significant digits below 0.01.
fn rate_text(rate: f64) -> String {
    if rate >= 0.01 {
        format!("{rate:.3}")
    } else {
        format!("{rate:.3e}")
    }
}

/// The bound of the `syscalls` counter among `expectations`.
pub fn syscalls_bound(expectations: &[Expectation]) -> Option<Bound> {
    expectations
        .iter()
        .find(|e| e.metric == Metric::Counter("syscalls"))
        .map(|e| e.bound)
}

/// Where the trace and the claims part.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// A claimed call made less than [`MIN_CLAIMED`] of its claimed rate.
    Missing {
        syscall: String,
        per_op: f64,
        claimed: f64,
    },
    /// A call not claimed, made [`MAX_UNCLAIMED`] per op or more, by these sides.
    Unclaimed {
        syscall: String,
        per_op: f64,
        sides: Vec<Side>,
    },
    /// The worker thread's calls per op outside the `syscalls` expectation.
    Total { per_op: f64, bound: Bound },
    /// Records lost: the counts are lower bounds.
    Lost(u64),
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Missing {
                syscall,
                per_op,
                claimed,
            } => write!(
                f,
                "{syscall} is claimed but made {per_op:.3} times per op (at least {})",
                rate_text(MIN_CLAIMED * claimed)
            ),
            Difference::Unclaimed {
                syscall,
                per_op,
                sides,
            } => {
                let sides: Vec<&str> = sides.iter().map(|s| s.name()).collect();
                write!(
                    f,
                    "{syscall} is not claimed but made {per_op:.3} times per op (by the {})",
                    sides.join(" and the ")
                )
            }
            Difference::Total { per_op, bound } => write!(
                f,
                "the worker thread makes {per_op:.3} calls per op; its syscalls expectation is {}",
                bound.describe()
            ),
            Difference::Lost(n) => write!(
                f,
                "{n} records were lost (a ring buffer was full): the counts are lower bounds; \
                 trace fewer --ops"
            ),
        }
    }
}

/// A traced pass checked against the claims.
#[derive(Debug, Clone)]
pub struct Check {
    pub ops: u64,
    /// By side, then by calls (most first), then by name.
    pub rates: Vec<Rate>,
    /// The worker thread's calls per op, all calls.
    pub worker_per_op: f64,
    pub total: Option<Bound>,
    pub differences: Vec<Difference>,
    /// Processes that made calls in the window.
    pub processes: usize,
    pub window_ns: u64,
}

impl Check {
    pub fn matches(&self) -> bool {
        self.differences.is_empty()
    }
}

/// Count the calls of `traced` inside the window of `marker`, per call and side, per op of
/// `ops`, and compare them with `claims`; `name` names a call number.
pub fn check(
    traced: &Traced,
    marker: i64,
    ops: u64,
    name: &dyn Fn(i64) -> String,
    claims: &Claims,
) -> Result<Check, MarkerError> {
    let ops_f = ops.max(1) as f64;
    let inside = match &traced.marked {
        Some(marked) => counted_inside(&traced.sites, marked)?,
        None => recorded_inside(&traced.events, marker)?,
    };
    let (counts, pids, window_ns) = (inside.counts, inside.pids, inside.window_ns);
    let mut rates: Vec<Rate> = counts
        .into_iter()
        .map(|((side, nr), calls)| {
            let syscall = name(nr);
            Rate {
                claimed: claims.claims(&syscall),
                syscall,
                nr,
                side,
                calls,
                per_op: calls as f64 / ops_f,
            }
        })
        .collect();
    rates.sort_by(|a, b| {
        (a.side, std::cmp::Reverse(a.calls), &a.syscall).cmp(&(
            b.side,
            std::cmp::Reverse(b.calls),
            &b.syscall,
        ))
    });
    let worker_calls: u64 = rates
        .iter()
        .filter(|r| r.side == Side::Worker)
        .map(|r| r.calls)
        .sum();
    let worker_per_op = worker_calls as f64 / ops_f;
    let differences = differences(&rates, worker_per_op, claims, traced.lost);
    Ok(Check {
        ops,
        rates,
        worker_per_op,
        total: claims.total,
        differences,
        processes: pids.len(),
        window_ns,
    })
}

/// The calls inside the window, per side and call, and the processes that made them.
struct Inside {
    counts: BTreeMap<(Side, i64), u64>,
    pids: BTreeSet<u32>,
    window_ns: u64,
}

/// From a record per call: the entries between the markers.
fn recorded_inside(events: &[SysEvent], marker: i64) -> Result<Inside, MarkerError> {
    let w = window(events, marker)?;
    let mut inside = Inside {
        counts: BTreeMap::new(),
        pids: BTreeSet::new(),
        window_ns: w.end - w.start,
    };
    for event in events {
        let SysEvent::Enter {
            pid, tid, time, nr, ..
        } = *event
        else {
            continue;
        };
        if time <= w.start || time >= w.end || nr == marker {
            continue;
        }
        let side = match (pid == w.pid, tid == w.tid) {
            (true, true) => Side::Worker,
            (true, false) => Side::WorkerThread,
            (false, _) => Side::Partner,
        };
        inside.pids.insert(pid);
        *inside.counts.entry((side, nr)).or_insert(0) += 1;
    }
    Ok(inside)
}

/// From the kernel's counts, which held only the window's calls.
fn counted_inside(sites: &[CallSite], marked: &Marked) -> Result<Inside, MarkerError> {
    match marked.marks {
        0 => return Err(MarkerError::NoMarker),
        1 => return Err(MarkerError::NoSecondMarker),
        _ => {}
    }
    let mut inside = Inside {
        counts: BTreeMap::new(),
        pids: BTreeSet::new(),
        window_ns: marked.window_ns,
    };
    for site in sites {
        let side = if site.marker_thread {
            Side::Worker
        } else if site.pid == marked.pid {
            Side::WorkerThread
        } else {
            Side::Partner
        };
        inside.pids.insert(site.pid);
        *inside.counts.entry((side, site.nr)).or_insert(0) += site.calls;
    }
    Ok(inside)
}

fn differences(rates: &[Rate], worker_per_op: f64, claims: &Claims, lost: u64) -> Vec<Difference> {
    let mut per_call: BTreeMap<&str, (f64, Vec<Side>)> = BTreeMap::new();
    for r in rates {
        let entry = per_call.entry(&r.syscall).or_insert((0.0, Vec::new()));
        entry.0 += r.per_op;
        entry.1.push(r.side);
    }
    let mut found = Vec::new();
    for claim in claims.syscalls {
        let per_op = per_call.get(claim.syscall).map_or(0.0, |(n, _)| *n);
        if per_op < MIN_CLAIMED * claim.per_op {
            found.push(Difference::Missing {
                syscall: claim.syscall.to_string(),
                per_op,
                claimed: claim.per_op,
            });
        }
    }
    for (syscall, (per_op, sides)) in per_call {
        if !claims.claims(syscall) && per_op >= MAX_UNCLAIMED {
            found.push(Difference::Unclaimed {
                syscall: syscall.to_string(),
                per_op,
                sides,
            });
        }
    }
    if let Some(bound) = claims.total
        && !bound.holds(worker_per_op)
    {
        found.push(Difference::Total {
            per_op: worker_per_op,
            bound,
        });
    }
    if lost > 0 {
        found.push(Difference::Lost(lost));
    }
    found
}

#[cfg(test)]
mod tests;

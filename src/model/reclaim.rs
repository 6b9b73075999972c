//! The kernel's page-reclaim statistics oslab counts around each sample of an experiment that
//! runs in a memory cgroup (`--load memory`, `--suite reclaim`): what page replacement did —
//! pages scanned, stolen (reclaimed), activated, deactivated, refaulted, written to swap and
//! read back — and how long tasks stalled on memory. They are stored as counters of the
//! sample (`Sample::counters`) under the names below, with the value the increase of the
//! kernel's cumulative count over the sample.
//!
//! Two scopes: `cg.*` is the experiment's memory cgroup (the worker and the competitor, from
//! its `memory.stat`, `memory.events` or `memory.oom_control`, and `memory.pressure`);
//! `vm.*` is the whole machine (/proc/vmstat, /proc/pressure/memory). Linux counts a
//! cgroup's own reclaim (the limit met) in the cgroup's `pgscan`/`pgsteal`, and *not* in
//! /proc/vmstat's `pgscan_*`/`pgsteal_*`, which count the machine running short (kswapd and
//! direct reclaim); cgroup v1's memory.stat has no scan or steal counts at all.

/// Where a reclaim counter is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The memory cgroup the worker runs in.
    Cgroup,
    /// The whole machine.
    System,
    /// The whole machine's reclaim, from the vmscan tracepoints.
    Vmscan,
}

/// One reclaim counter: its stored name, its scope, the kernel's key and what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReclaimCounter {
    /// The name it is stored under: `cg.` or `vm.` and the kernel's key.
    pub name: &'static str,
    pub scope: Scope,
    /// The key in the kernel's file (`pgscan`, `oom_kill`), or `some`/`full` for PSI.
    pub key: &'static str,
    /// Whether it is a pressure stall time (µs), not a count of pages or events.
    pub stall: bool,
    /// What it counts, in a few words.
    pub meaning: &'static str,
}

const fn counter(
    name: &'static str,
    scope: Scope,
    key: &'static str,
    meaning: &'static str,
) -> ReclaimCounter {
    ReclaimCounter {
        name,
        scope,
        key,
        stall: false,
        meaning,
    }
}

const fn stall(name: &'static str, scope: Scope, key: &'static str) -> ReclaimCounter {
    ReclaimCounter {
        name,
        scope,
        key,
        stall: true,
        meaning: if matches!(key.as_bytes(), [b's', ..]) {
            "µs some task stalled on memory (PSI some)"
        } else {
            "µs every task stalled on memory at once (PSI full)"
        },
    }
}

use Scope::{Cgroup, System, Vmscan};

/// The table, written once: each scope's own counters, then those the cgroup and the machine
/// both count under the same key and meaning (stored as `cg.KEY` and `vm.KEY`), then the
/// tracepoints'.
macro_rules! reclaim_counters {
    (
        cgroup: [$($cg_key:literal => $cg_meaning:literal),* $(,)?],
        system: [$($vm_key:literal => $vm_meaning:literal),* $(,)?],
        both: [$($key:literal => $meaning:literal),* $(,)?],
        vmscan: [$($name:literal, $trace_key:literal => $trace_meaning:literal),* $(,)?] $(,)?
    ) => {
        &[
            $(counter(concat!("cg.", $cg_key), Cgroup, $cg_key, $cg_meaning),)*
            $(counter(concat!("cg.", $key), Cgroup, $key, $meaning),)*
            stall("cg.psi_some_us", Cgroup, "some"),
            stall("cg.psi_full_us", Cgroup, "full"),
            $(counter(concat!("vm.", $vm_key), System, $vm_key, $vm_meaning),)*
            $(counter(concat!("vm.", $key), System, $key, $meaning),)*
            stall("vm.psi_some_us", System, "some"),
            stall("vm.psi_full_us", System, "full"),
            $(counter(concat!("vmscan.", $name), Vmscan, $trace_key, $trace_meaning),)*
        ]
    };
}

/// Every reclaim counter, in the order shown: the cgroup's, then the machine's, then the
/// tracepoints'.
pub const COUNTERS: &[ReclaimCounter] = reclaim_counters! {
    cgroup: [
        "pgscan" => "pages scanned by the cgroup's reclaim",
        "pgsteal" => "pages reclaimed (stolen) from the cgroup",
    ],
    system: [
        "pgscan_kswapd" => "pages scanned by kswapd",
        "pgscan_direct" => "pages scanned by direct reclaim",
        "pgsteal_kswapd" => "pages reclaimed by kswapd",
        "pgsteal_direct" => "pages reclaimed by direct reclaim",
    ],
    both: [
        "pgactivate" => "pages moved to an active list",
        "pgdeactivate" => "pages moved to an inactive list",
        "pgrefill" => "active pages scanned to refill the inactive list",
        "workingset_refault_anon" => "anonymous pages faulted back soon after eviction",
        "workingset_refault_file" => "file pages read back soon after eviction",
        "workingset_activate_anon" => "refaulted anonymous pages activated at once",
        "workingset_activate_file" => "refaulted file pages activated at once",
        "pswpout" => "pages written to swap",
        "pswpin" => "pages read back from swap",
        "pgmajfault" => "major faults (a read from disk or swap)",
        "oom_kill" => "processes the OOM killer killed",
    ],
    vmscan: [
        "scanned", "nr_scanned" => "inactive pages reclaim scanned",
        "reclaimed", "nr_reclaimed" => "pages reclaim freed (stolen)",
        "activated_anon", "nr_activate0" =>
            "scanned anonymous pages found referenced and activated (PAGEREF_ACTIVATE)",
        "activated_file", "nr_activate1" =>
            "scanned file pages found referenced and activated (PAGEREF_ACTIVATE)",
        "kept_referenced", "nr_ref_keep" =>
            "scanned pages found referenced and kept inactive (PAGEREF_KEEP)",
        "active_scanned", "nr_taken" => "active pages scanned",
        "deactivated", "nr_deactivated" => "active pages moved to the inactive list",
        "active_referenced", "nr_referenced" => "active pages found referenced",
        "lost_records", "lost" =>
            "tracepoint records lost to a full ring buffer: the vmscan sums are short",
    ],
};

/// The reclaim counter stored under `name`, if it is one.
pub fn find(name: &str) -> Option<&'static ReclaimCounter> {
    COUNTERS.iter().find(|c| c.name == name)
}

/// Whether a stored counter name is a reclaim counter (shown in its own section, not among
/// the perf counters).
pub fn is_reclaim(name: &str) -> bool {
    find(name).is_some()
}

/// The counters that show what page replacement did, drawn as bars in the report and
/// compared first: scanned, stolen, activated, deactivated, refaulted, swapped — from the
/// first source listed that was counted: the cgroup's, else the tracepoints' (cgroup v1
/// counts no scans), else the machine's; "activated" prefers the tracepoints', which are the
/// pages reclaim itself found referenced (the lab's patch changes exactly those), where the
/// cgroup's `pgactivate` also counts pages activated on access. Then OOM kills and the time
/// some task stalled on memory.
pub const HEADLINE: &[(&str, &[&str])] = &[
    (
        "scanned",
        &[
            "cg.pgscan",
            "vmscan.scanned",
            "vm.pgscan_kswapd+vm.pgscan_direct",
        ],
    ),
    (
        "stolen",
        &[
            "cg.pgsteal",
            "vmscan.reclaimed",
            "vm.pgsteal_kswapd+vm.pgsteal_direct",
        ],
    ),
    (
        "activated",
        &[
            "vmscan.activated_anon+vmscan.activated_file",
            "cg.pgactivate",
            "vm.pgactivate",
        ],
    ),
    (
        "deactivated",
        &["cg.pgdeactivate", "vmscan.deactivated", "vm.pgdeactivate"],
    ),
    (
        "refaulted",
        &[
            "cg.workingset_refault_anon+cg.workingset_refault_file",
            "vm.workingset_refault_anon+vm.workingset_refault_file",
        ],
    ),
    ("swapped out", &["cg.pswpout", "vm.pswpout"]),
    ("swapped in", &["cg.pswpin", "vm.pswpin"]),
    ("major faults", &["cg.pgmajfault", "vm.pgmajfault"]),
    ("OOM kills", &["cg.oom_kill", "vm.oom_kill"]),
    ("stall µs", &["cg.psi_some_us", "vm.psi_some_us"]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_scoped() {
        for (i, c) in COUNTERS.iter().enumerate() {
            assert!(COUNTERS[..i].iter().all(|o| o.name != c.name), "{}", c.name);
            let prefix = match c.scope {
                Scope::Cgroup => "cg.",
                Scope::System => "vm.",
                Scope::Vmscan => "vmscan.",
            };
            assert!(c.name.starts_with(prefix), "{}", c.name);
        }
        for (_, sources) in HEADLINE {
            for source in *sources {
                for name in source.split('+') {
                    assert!(is_reclaim(name), "{name}");
                }
            }
        }
        assert!(!is_reclaim("cycles"));
    }
}

//! pagefault.anon's parameters and expectations.

use super::*;

// --- pagefault.anon ---

#[cfg(unix)]
/// How much more a chunk of memory must cost to touch than the warm reference before it
/// counts as memory the host had reclaimed. Measured here: 10–12 µs per page against 1.5–1.8
/// µs warm (about 7×), while host noise lifted a warm chunk to 2.1× at worst.
pub(super) const FRESH_FACTOR: f64 = 3.0;
#[cfg(unix)]
/// The recently freed memory is absorbed in chunks of this size…
pub(super) const ABSORB_CHUNK: usize = 16 << 20;
#[cfg(unix)]
/// …until this many chunks in a row cost `FRESH_FACTOR` × warm (64 MiB: one slow chunk is
/// not enough, a preempted warm chunk can be slow too).
pub(super) const ABSORB_RUN: usize = 4;
#[cfg(unix)]
/// …or until this long has passed: the absorption runs in setup, inside the worker's time
/// limit, and right after heavy file I/O a third of MemAvailable is gigabytes of page cache
/// to reclaim (the likely cause of a CI run, right after a UnixBench round, that ended at the
/// limit with no sample).
pub(super) const ABSORB_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);
#[cfg(unix)]
/// The region the warm reference of `memory=fresh` touches.
pub(super) const WARM_PROBE: usize = 64 << 20;
#[cfg(unix)]
/// Assumed when the machine's available memory cannot be read.
pub(super) const ASSUMED_AVAILABLE: usize = 4 << 30;

pub(super) const ANON_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 4 << 30,
        },
        default: "256M",
        help: "the region one sample touches, each 4 KiB page once (64M with --quick)",
    },
    ParamSpec {
        name: "order",
        kind: ParamKind::Choice(&["seq", "random"]),
        default: "seq",
        help: "`seq`: pages in address order; `random`: a seeded permutation of the region's \
               pages, built (and its own memory faulted in) outside timing",
    },
    ParamSpec {
        name: "thp",
        kind: ParamKind::Choice(&["off", "on"]),
        default: "off",
        help: "`off`: MADV_NOHUGEPAGE (one fault per 4 KiB page); `on`: MADV_HUGEPAGE (one \
               fault per 2 MiB; unsupported when THP is `never` or does not apply). Both are \
               measured unless set",
    },
    ParamSpec {
        name: "populate",
        kind: ParamKind::Choice(&["none", "map_populate", "madv_populate_write"]),
        default: "none",
        help: "pre-fault the region before the sample, timed apart (fact \
               populate_ns_per_page), so the timed touch takes ~0 faults: `map_populate` \
               (mmap with MAP_POPULATE) or `madv_populate_write` (MADV_POPULATE_WRITE)",
    },
    ParamSpec {
        name: "memory",
        kind: ParamKind::Choice(&["warm", "fresh"]),
        default: "warm",
        help: "`warm`: the pages were touched and released (MADV_DONTNEED) just before the \
               sample, the figure to compare with bare metal; `fresh`: memory not touched \
               recently (on a VM that reports free pages to its host: pages the host has \
               reclaimed, each first touch also a host fault)",
    },
];

/// One sample touches every page of the region once.
pub(super) fn anon_pages(p: &Params) -> u64 {
    p.u64("size").div_ceil(PAGE as u64)
}

pub(super) fn anon_expectations(p: &Params) -> Vec<Expectation> {
    let thp = p.str("thp") == "on";
    let minflt = if p.str("populate") != "none" {
        Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Below(0.01),
            "the populate step mapped every page before the sample (its faults count there, \
             not in the sample), so the timed touch finds them present",
        )
    } else if thp {
        Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Below(0.01),
            "one fault maps a 2 MiB huge page, about 1/512 = 0.002 faults per page; more \
             means part of the region fell back to 4 KiB pages",
        )
    } else {
        Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Near {
                value: 1.0,
                tolerance: 0.01,
            },
            "each page is touched once, had no page behind it, and MADV_NOHUGEPAGE keeps \
             it 4 KiB: exactly one minor fault per page",
        )
    };
    let mut expectations = vec![
        minflt,
        Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.0001),
            "anonymous memory is zero-filled, never read from disk: no major fault",
        ),
    ];
    if thp {
        expectations.push(Expectation::new(
            Metric::Fact("anon_huge_pages_kb"),
            Bound::AtLeast(2048.0),
            "smaps shows huge pages (2048 kB each) behind the region after the touch",
        ));
    }
    if p.str("memory") == "fresh" {
        expectations.push(Expectation::new(
            Metric::Fact("fresh_memory_reached"),
            Bound::AtLeast(1.0),
            "before the first sample, the memory the kernel had freed recently (still backed \
             by the host) was touched and held until the pages it handed out cost several \
             times the warm touch: the samples' pages come from past it",
        ));
        expectations.push(Expectation::new(
            Metric::Fact("batches_on_reused_memory"),
            Bound::Below(2.0),
            "no timed batch ran after the worker gave back a region to stay within half of its \
             memory headroom (a later batch may get those recently touched pages back); the \
             last batch, the harness's untimed probe pass, may. Else use a smaller size or a \
             shorter --budget",
        ));
    }
    expectations
}

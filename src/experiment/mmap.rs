//! `mmap.access`: the classic mmap lab. A working-set walk over a fresh mapping, under each
//! backing a program can get memory from, and what the kernel does on the way.
//!
//! **The walk.** The region is cut into blocks of 512 cache lines (32 KiB). A pass picks every
//! block once — in address order (`pattern=seq`) or in a seeded random order (`random`) — and
//! walks each picked block 16 times, storing one byte to the first byte of every 8th line and
//! loading one byte from each of the others. One operation is one of those cache-line
//! accesses, so a pass is `size / 32 KiB × 512 × 16` operations and one sample is exactly one
//! pass (`Batch::Fixed`): the sample's rusage and counters describe a whole pass over a fresh
//! mapping. Line 0 of every page is a store line, so the first touch of each page is a write.
//!
//! The random order is a permutation of the blocks, not draws with replacement: both patterns
//! then touch the same pages the same number of times and differ only in order, so their
//! fault counts obey the same rule and a difference in time is the order's (TLB reach,
//! prefetching). Each pass gets its own permutation (seed + pass number), built in `prepare`,
//! so the timed loop only reads an index array.
//!
//! **Before each pass** (`Routine::prepare`, untimed, outside the sample's rusage): the
//! previous mapping is released (timed: `munmap_ns_per_page`), a fresh one is made and advised
//! MADV_NOHUGEPAGE, so every backing is mapped with 4 KiB page-table entries and a fault count
//! means the same on a machine with THP `always` (huge pages are `pagefault.anon thp=on`'s
//! subject). Then, by parameter:
//! - `populate=true` pre-faults the mapping the way MAP_POPULATE does — write faults for a
//!   private mapping, read faults for a shared one (mm/gup.c `populate_vma_page_range`) — but
//!   with MADV_POPULATE_WRITE/READ, because MAP_POPULATE would fault before the advice could
//!   be given (measured on Linux 6.18 with MAP_POPULATE: a shared ext4 mapping got 2 MiB page
//!   table entries and its walk 10252 faults for 16384 pages, neither one per page nor none).
//!   A shared file mapping is populated read-only on a file system that tracks dirty pages
//!   (ext4 here): the kernel must hear of the first write to each page (write-notify,
//!   `page_mkwrite`), so its walk still takes one write-protect fault per page (tmpfs maps
//!   them writable: no fault);
//! - `prepare=memset_msync` writes every byte and msync(MS_SYNC)s the mapping; its time and
//!   rusage are kept as facts. Writeback write-protects the pages of a shared file mapping
//!   again, so that walk also takes one fault per page, and re-dirties every page;
//! - `cold=true` reads a buffer of twice the largest data cache of the CPU, so the walk starts
//!   with cold caches and TLBs.
//!
//! **Backings.** `malloc`: glibc's malloc, whose large blocks are private anonymous mappings
//! 16 bytes past a page start (the walk starts at the pointer malloc returned); the
//! experiment sets M_MMAP_THRESHOLD to 1 MiB so every size gets a fresh mapping per pass, as a
//! 1 GiB allocation always does (glibc's dynamic threshold would otherwise serve a 4 MiB block
//! from the heap again, already faulted). `anon_private`, `anon_shared` (shmem), and
//! `file_private`/`file_shared` over one file in the work directory, made once in setup with
//! posix_fallocate and unlinked at once: it has no name while measured, so nothing is left
//! whatever happens to the worker, and the parent removes the directory.
//!
//! **The file's page cache between passes.** Only the mapping is fresh: the file's pages stay
//! in the page cache from one pass to the next, so file faults map cached pages (minor) unless
//! something reclaimed them (a memory load, or DAMON here after about a minute): then they are
//! major faults with inblock. The `page_cache_share` fact says how much was cached when a pass
//! began. Pages the walk dirtied stay dirty until writeback, and Linux charges oublock to the
//! task that dirties a *clean* page, not to writeback: with `prepare=none` a `file_shared` walk
//! shows `size/512` blocks on the first pass and about 0 afterwards, until the flusher cleans
//! them (30 s). With `memset_msync`, msync cleans every page before each walk, so every walk
//! is charged the whole file again — the expectation checks that — while `prepare_oublock`
//! (what memset+msync were charged) counts only the pages the flusher cleaned between the
//! previous walk and the memset: 0 on a quiet machine once the first pass dirtied the file.
//!
//! **Large folios.** Linux 6.x keeps a file's page cache in large folios and maps a whole
//! folio at one write fault of a shared mapping (measured: 2836 faults for 65536 pages of a
//! fallocated ext4 file; every page faulted on its own for the first 8 MiB, where readahead
//! still made small folios). A fresh `file_shared` walk therefore takes at most one fault per
//! page, and at least one per 2 MiB, the largest folio the page cache holds.

use super::{Batch, ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Bound, Expectation, Metric};

// What the routine's parts (below) share, POSIX's.
#[cfg(unix)]
use {
    super::mapping::Anon,
    super::{Context, Routine, RoutineError, SetupError},
    crate::analysis::{self, rng::Rng},
    crate::experiment::params::format_size,
    crate::model::{Fact, Rusage},
    crate::platform::rusage,
    std::fs::File,
    std::hint::black_box,
    std::io,
    std::os::fd::{AsFd, AsRawFd},
    std::path::Path,
    std::time::Instant,
};

// The routine's parts, POSIX's: a pass's mapping, cold caches, the access loop.
#[cfg(unix)]
mod pass_map;
#[cfg(unix)]
use pass_map::*;
#[cfg(unix)]
mod cold;
#[cfg(unix)]
use cold::*;
#[cfg(unix)]
mod access;
#[cfg(unix)]
use access::*;
mod spec;
pub use spec::*;

/// Bytes per cache line the walk steps by.
const LINE: usize = 64;
/// Lines per block: 32 KiB, a typical L1D.
const LINES: usize = 512;
const BLOCK: usize = LINE * LINES;
/// Times each picked block is walked.
const WALKS: usize = 16;
#[cfg(unix)]
/// Every `STORE_EVERY`th line is stored to, the others loaded from.
const STORE_EVERY: usize = 8;
/// Operations (line accesses) per block picked.
const OPS_PER_BLOCK: u64 = (LINES * WALKS) as u64;
#[cfg(unix)]
/// Seed of the random block order; pass `n` uses `ORDER_SEED + n`.
const ORDER_SEED: u64 = 0x6D6D_6170;
/// The largest folio the page cache holds on x86-64 (PMD order): the fewest faults a fresh
/// shared file walk can take is one per this many bytes.
const MAX_FOLIO: usize = 2 << 20;
#[cfg(unix)]
/// Free space a file backing needs besides the file.
const SLACK: u64 = 16 << 20;
#[cfg(unix)]
const FILE_NAME: &str = "mmap.access.data";

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "backing",
        kind: ParamKind::Choice(&[
            "malloc",
            "anon_private",
            "anon_shared",
            "file_private",
            "file_shared",
        ]),
        default: "anon_private",
        help: "where the memory comes from: glibc malloc, an anonymous private or shared \
               mapping, or a private or shared mapping of a file in --dir",
    },
    ParamSpec {
        name: "populate",
        kind: ParamKind::Choice(&["false", "true"]),
        default: "false",
        help: "pre-fault every page before the walk as MAP_POPULATE does (read faults for a \
               shared mapping, so a shared file still faults on the first write)",
    },
    ParamSpec {
        name: "pattern",
        kind: ParamKind::Choice(&["seq", "random"]),
        default: "seq",
        help: "`seq`: blocks in address order; `random`: every block once, in a seeded \
               random order",
    },
    ParamSpec {
        name: "prepare",
        kind: ParamKind::Choice(&["none", "memset_msync"]),
        default: "none",
        help: "`memset_msync`: write every byte and msync(MS_SYNC) before the walk (untimed; \
               its cost is reported as facts)",
    },
    ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 64 << 30,
        },
        default: "1G",
        help: "the region walked, rounded down to a multiple of 32 KiB (the file's size for \
               a file backing)",
    },
    ParamSpec {
        name: "cold",
        kind: ParamKind::Choice(&["false", "true"]),
        default: "false",
        help: "`true`: before each pass, read a buffer of twice the largest data cache so \
               the walk starts with cold caches and TLBs",
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backing {
    Malloc,
    AnonPrivate,
    AnonShared,
    FilePrivate,
    FileShared,
}

impl Backing {
    fn of(p: &Params) -> Backing {
        match p.str("backing") {
            "malloc" => Backing::Malloc,
            "anon_shared" => Backing::AnonShared,
            "file_private" => Backing::FilePrivate,
            "file_shared" => Backing::FileShared,
            _ => Backing::AnonPrivate,
        }
    }

    fn file(self) -> bool {
        matches!(self, Backing::FilePrivate | Backing::FileShared)
    }

    #[cfg(unix)]
    fn shared(self) -> bool {
        matches!(self, Backing::AnonShared | Backing::FileShared)
    }
}

fn page_size() -> usize {
    crate::platform::memory::page_size() as usize
}

/// The region walked: `size` rounded down to whole blocks.
fn blocks(p: &Params) -> u64 {
    p.u64("size") / BLOCK as u64
}

/// Operations in one pass: the fixed batch of every sample.
fn pass_ops(p: &Params) -> u64 {
    blocks(p) * OPS_PER_BLOCK
}

/// One fault per page, as a rate per operation: each page is walked by
/// `page / LINE × WALKS` accesses.
fn per_page() -> f64 {
    1.0 / (page_size() / LINE * WALKS) as f64
}

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[&ACCESS];

#[cfg(all(test, unix))]
mod tests;

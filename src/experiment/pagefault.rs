//! What a page fault costs: the first touch of anonymous memory (`pagefault.anon`) and a
//! copy-on-write after fork (`pagefault.cow`). One operation is one 4 KiB page.
//!
//! `pagefault.anon` writes one byte to each 4 KiB page of an anonymous private mapping that
//! has no page there yet, so each write enters the kernel through a page fault
//! (`do_anonymous_page`: allocate a zeroed page, map it). One sample is one whole pass over a
//! region of `size` bytes (`Batch::Fixed`); everything else happens in `Routine::prepare`,
//! outside the timed region and the sample's rusage:
//! - the last pass's region is put away: AnonHugePages of its mapping is read from the
//!   process's memory map (`platform::maps`), then it is unmapped, timed (fact `munmap_ns_per_page`: freeing the
//!   pages the pass mapped), and a new region is mapped, its start aligned to 2 MiB and
//!   advised MADV_NOHUGEPAGE (`thp=off`) or MADV_HUGEPAGE (`thp=on`);
//! - the order is the region's page indices, in address order or a seeded permutation,
//!   built once in setup (so its own memory is faulted in before any timing);
//! - `populate`: `map_populate` maps the region with MAP_POPULATE, `madv_populate_write`
//!   calls MADV_POPULATE_WRITE on it; either is timed apart (`populate_ns_per_page`) and its
//!   faults counted (`populate_minflt_per_page`: the kernel counts the pre-faults there, so
//!   the timed touch shows ~0: FINDINGS). MAP_POPULATE faults during mmap, before madvise
//!   can mark the mapping: with THP `always` the process's THP is disabled around it for
//!   `thp=off`, and `thp=on` needs THP `always` (else unsupported);
//! - `memory=warm`: the region's pages are touched and released (MADV_DONTNEED) just before
//!   the pass, so the kernel hands the pass memory it freed a moment ago.
//!
//! `memory=fresh` is memory nobody touched recently. On a VM whose balloon reports free
//! pages to the host (virtio-balloon with VIRTIO_BALLOON_F_REPORTING), the host takes such
//! memory back, and a first touch also pays the host's fault. Waiting does not get it here:
//! this kernel (6.18, `page_reporting_order` 9) keeps the memory freed last, one to several
//! GiB, unreported and hands it out first. Measured with a C loop, 1 GiB freed and touched
//! again 0–10 s later cost 1.5 µs per page every time (nothing was reported), while past the
//! recently freed memory a page cost 10–12 µs. So `fresh`, where free pages are reported:
//! setup touches memory in 16 MiB chunks and holds it until four chunks in a row cost more
//! than 3× a warm touch (the reference, fact `warm_ns_per_page`); every pass then maps a new
//! region and holds it instead of unmapping it (an unmapped region's pages would be the next
//! ones handed out), within half of the memory headroom (MemAvailable, or a memory cgroup's
//! room). The facts say how much was absorbed (`recently_freed_mib`), whether slow memory was
//! reached, and whether a pass had to reuse memory given back; expectations check both.
//! Measured here at 1 GiB: fresh 10.3–10.4 µs per page against a warm reference of 1.46–1.56
//! µs (6.7–7.1×), after absorbing 3.9–4.2 GiB (6.3 GiB right after other fresh runs: it
//! depends on what the machine freed just before). Bare metal has no host fault: compare it
//! with `memory=warm`. Without free page reporting, `fresh` absorbs nothing and measures what
//! `warm` does.
//!
//! Whether THP applies is checked once in setup by touching a 2 MiB-aligned MADV_HUGEPAGE
//! region and counting its faults.
//!
//! `pagefault.cow` forks, in the timed region, a child that writes one byte to each of
//! `ops` pages of a region the parent touched in setup, and exits; the parent waits. The
//! baseline (`run_baseline`) is the same fork, exit and wait with no write, timed by the
//! harness and subtracted per operation. What remains per page is the copy-on-write fault
//! in the child (allocate a page, copy 4 KiB, map it) plus freeing that copy when the child
//! exits. The children's faults are read from RUSAGE_CHILDREN.

mod file;
mod sweep;

use super::{ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::rng::Rng;
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::equivalence as eq;

// What the routines (below and in the submodules) share, POSIX's.
#[cfg(unix)]
use {
    super::mapping::Anon,
    super::{Context, Fact, Routine, RoutineError, SetupError},
    crate::analysis::median,
    crate::platform,
    std::io,
    std::time::{Duration, Instant},
};

pub use file::FILE;
pub use sweep::PREFAULT_SWEEP;

mod anon_spec;
use anon_spec::*;
/// The regions' memory (mmap, THP, fresh pages), POSIX's.
#[cfg(unix)]
mod memory;
#[cfg(unix)]
use memory::*;
mod anon;
pub use anon::*;
mod cow;
pub use cow::*;

const PAGE: usize = 4096;
#[cfg(unix)]
const HUGE: usize = 2 << 20;
#[cfg(unix)]
/// The largest region a batch may need (4 GiB): a bigger batch is an error, not a swap storm.
const MAX_REGION: usize = 4 << 30;
#[cfg(unix)]
/// Seed of the page order: every run touches the same pages in the same order.
const ORDER_SEED: u64 = 0x5EED_0FA0;

/// A permutation of `0..pages`, the same for the same `seed` (Fisher–Yates).
pub fn permutation(pages: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pages).collect();
    let mut rng = Rng::new(seed);
    for i in (1..pages).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(unix)]
/// An anonymous region of `pages` pages starting on a 2 MiB boundary.
struct Region {
    _map: Anon,
    base: *mut u8,
    pages: usize,
}

#[cfg(unix)]
impl Region {
    fn new(pages: usize, thp: bool) -> Result<Region, SetupError> {
        let len = pages * PAGE;
        if len > MAX_REGION {
            return Err(SetupError::Failed(format!(
                "a batch needs {pages} pages ({} MiB), more than the {} MiB limit",
                len >> 20,
                MAX_REGION >> 20
            )));
        }
        let map = Anon::private(len + HUGE)?;
        let base = (map.ptr() as usize).next_multiple_of(HUGE) as *mut u8;
        // Where the system has no advice to keep base pages (the BSDs), a region is in base
        // pages anyway: they promote a 2 MiB reservation only after each of its pages faulted.
        let advice = if thp {
            Some(crate::experiment::linux_only::MADV_HUGEPAGE)
        } else {
            platform::memory::MADV_NO_HUGE_PAGES
        };
        if let Some(advice) = advice {
            map.advise(advice).map_err(|e| {
                SetupError::Failed(format!("madvise({}) failed: {e}", thp_advice_name(thp)))
            })?;
        }
        Ok(Region {
            _map: map,
            base,
            pages,
        })
    }

    fn len(&self) -> usize {
        self.pages * PAGE
    }

    /// Write one byte to page `page`.
    #[inline(always)]
    fn touch(&self, page: usize, value: u8) {
        debug_assert!(page < self.pages);
        // SAFETY: `page` is inside the region, which lies inside the mapping.
        unsafe { self.base.add(page * PAGE).write_volatile(value) };
    }

    /// Drop the pages (`platform::anon::release_range`: MADV_DONTNEED on Linux, which keeps
    /// the advice; a fresh mapping in place on the BSDs, whose MADV_DONTNEED keeps the pages
    /// and which have no advice to keep).
    fn dontneed(&self) -> Result<(), RoutineError> {
        platform::anon::release_range(self.base, self.len()).map_err(|source| RoutineError::Os {
            call: "dropping the region's pages".into(),
            source,
        })
    }

    /// MADV_POPULATE_WRITE on Linux (`platform::memory::populate_write`); setup refuses
    /// populate where the system has no such advice, before this is reached.
    fn populate_write(&self) -> io::Result<()> {
        platform::memory::populate_write(self.base, self.len())
    }
}

#[cfg(unix)]
fn thp_advice_name(thp: bool) -> &'static str {
    if thp {
        "MADV_HUGEPAGE"
    } else {
        "MADV_NOHUGEPAGE"
    }
}

#[cfg(unix)]
/// Minor faults of the calling thread so far (of the process where the system keeps no
/// per-thread usage).
fn minflt_now() -> i64 {
    platform::rusage::this_thread()
        .unwrap_or_else(platform::rusage::this_process)
        .minflt
}

#[cfg(unix)]
/// Why THP cannot be measured here, or `None` when a MADV_HUGEPAGE region gets huge pages.
fn thp_unavailable() -> Option<String> {
    match platform::memory::thp_mode() {
        Err(e) => {
            return Some(format!(
                "transparent huge pages are not available ({}: {e})",
                platform::memory::THP_ENABLED
            ));
        }
        Ok(mode) if mode == "never" => {
            return Some(format!(
                "transparent huge pages are disabled ({} is `never`)",
                platform::memory::THP_ENABLED
            ));
        }
        Ok(_) => {}
    }
    // Touch every page of one aligned 2 MiB range: a huge page faults once for all of them.
    let region = match Region::new(HUGE / PAGE, true) {
        Ok(r) => r,
        Err(e) => return Some(e.to_string()),
    };
    let before = minflt_now();
    for page in 0..region.pages {
        region.touch(page, 1);
    }
    let faults = minflt_now() - before;
    (faults > 8).then(|| {
        format!(
            "THP did not apply: touching a 2 MiB-aligned MADV_HUGEPAGE region took {faults} \
             faults for 512 pages (no huge page could be allocated; see {})",
            platform::memory::THP_DEFRAG
        )
    })
}

/// The macOS cell of the experiments that have run on FreeBSD and Linux only.
const NOT_YET_ON_MACOS: eq::Cell =
    eq::Cell::No("not enabled yet: run on FreeBSD and Linux only so far");

/// The Windows cell of the experiments whose flags are Linux's.
const LINUX_FLAGS_ON_WINDOWS: eq::Cell = eq::Cell::No(
    "not enabled: those flags are Linux's; pagefault.virtual_alloc is Windows' first touch",
);

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[&ANON, &COW, &PREFAULT_SWEEP, &FILE];

#[cfg(all(test, unix))]
mod tests;

//! What a page fault costs: the first touch of anonymous memory (`pagefault.anon`) and a
//! copy-on-write after fork (`pagefault.cow`). One operation is one 4 KiB page.
//!
//! `pagefault.anon` writes one byte to each 4 KiB page of an anonymous private mapping that
//! has no page there yet, so each write enters the kernel through a page fault
//! (`do_anonymous_page`: allocate a zeroed page, map it). One sample is one whole pass over a
//! region of `size` bytes (`Batch::Fixed`); everything else happens in `Routine::prepare`,
//! outside the timed region and the sample's rusage:
//! - the last pass's region is put away: AnonHugePages of its mapping is read from
//!   /proc/self/smaps, then it is unmapped, timed (fact `munmap_ns_per_page`: freeing the
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

use std::io;
use std::time::{Duration, Instant};

use super::mapping::Anon;
use super::{Context, ExperimentInfo, Fact, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::median;
use crate::analysis::rng::Rng;
use crate::analysis::validate::{Bound, Expectation, Metric};

pub use file::FILE;
pub use sweep::PREFAULT_SWEEP;

const PAGE: usize = 4096;
const HUGE: usize = 2 << 20;
/// The largest region a batch may need (4 GiB): a bigger batch is an error, not a swap storm.
const MAX_REGION: usize = 4 << 30;
/// Seed of the page order: every run touches the same pages in the same order.
const ORDER_SEED: u64 = 0x5EED_0FA0;
const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

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

fn madvise(ptr: *mut u8, len: usize, advice: libc::c_int) -> io::Result<()> {
    // SAFETY: callers pass a range inside a mapping they own.
    let rc = unsafe { libc::madvise(ptr.cast(), len, advice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn setup_error(e: SetupError) -> String {
    match e {
        SetupError::Unsupported(s) | SetupError::Failed(s) => s,
    }
}

/// An anonymous region of `pages` pages starting on a 2 MiB boundary.
struct Region {
    _map: Anon,
    base: *mut u8,
    pages: usize,
}

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
        let advice = if thp {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        map.advise(advice).map_err(|e| {
            SetupError::Failed(format!("madvise({}) failed: {e}", thp_advice_name(thp)))
        })?;
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

    fn dontneed(&self) -> Result<(), String> {
        madvise(self.base, self.len(), libc::MADV_DONTNEED)
            .map_err(|e| format!("madvise(MADV_DONTNEED) failed: {e}"))
    }

    fn populate_write(&self) -> io::Result<()> {
        madvise(self.base, self.len(), libc::MADV_POPULATE_WRITE)
    }
}

fn thp_advice_name(thp: bool) -> &'static str {
    if thp {
        "MADV_HUGEPAGE"
    } else {
        "MADV_NOHUGEPAGE"
    }
}

/// Minor faults of the calling thread so far.
fn minflt_now() -> i64 {
    // SAFETY: rusage is plain data; all zeroes is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_minflt
}

/// Why THP cannot be measured here, or `None` when a MADV_HUGEPAGE region gets huge pages.
fn thp_unavailable() -> Option<String> {
    let enabled = match std::fs::read_to_string(THP_ENABLED) {
        Ok(text) => text,
        Err(e) => {
            return Some(format!(
                "transparent huge pages are not available ({THP_ENABLED}: {e})"
            ));
        }
    };
    if enabled.contains("[never]") {
        return Some(format!(
            "transparent huge pages are disabled ({THP_ENABLED} is `never`)"
        ));
    }
    // Touch every page of one aligned 2 MiB range: a huge page faults once for all of them.
    let region = match Region::new(HUGE / PAGE, true) {
        Ok(r) => r,
        Err(e) => return Some(setup_error(e)),
    };
    let before = minflt_now();
    for page in 0..region.pages {
        region.touch(page, 1);
    }
    let faults = minflt_now() - before;
    (faults > 8).then(|| {
        format!(
            "THP did not apply: touching a 2 MiB-aligned MADV_HUGEPAGE region took {faults} \
             faults for 512 pages (no huge page could be allocated; see \
             /sys/kernel/mm/transparent_hugepage/defrag)"
        )
    })
}

// --- pagefault.anon ---

/// How much more a chunk of memory must cost to touch than the warm reference before it
/// counts as memory the host had reclaimed. Measured here: 10–12 µs per page against 1.5–1.8
/// µs warm (about 7×), while host noise lifted a warm chunk to 2.1× at worst.
const FRESH_FACTOR: f64 = 3.0;
/// The recently freed memory is absorbed in chunks of this size…
const ABSORB_CHUNK: usize = 16 << 20;
/// …until this many chunks in a row cost `FRESH_FACTOR` × warm (64 MiB: one slow chunk is
/// not enough, a preempted warm chunk can be slow too).
const ABSORB_RUN: usize = 4;
/// The region the warm reference of `memory=fresh` touches.
const WARM_PROBE: usize = 64 << 20;
/// Assumed when /proc/meminfo cannot be read.
const ASSUMED_AVAILABLE: usize = 4 << 30;
const VIRTIO_BALLOON: &str = "/sys/bus/virtio/drivers/virtio_balloon";
/// VIRTIO_BALLOON_F_REPORTING: the balloon takes free page reports (virtio 1.2, 5.5.3).
const BALLOON_F_REPORTING: usize = 5;

const ANON_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 4 << 30,
        },
        default: "1G",
        help: "the region one sample touches, each 4 KiB page once (128M with --quick)",
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
fn anon_pages(p: &Params) -> u64 {
    p.u64("size").div_ceil(PAGE as u64)
}

fn anon_expectations(p: &Params) -> Vec<Expectation> {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Populate {
    Off,
    /// mmap with MAP_POPULATE.
    Mmap,
    /// madvise(MADV_POPULATE_WRITE) after mmap.
    Madvise,
}

impl Region {
    /// Write one byte to every page, in address order.
    fn touch_all(&self) {
        for page in 0..self.pages {
            self.touch(page, 1);
        }
    }

    /// A region mapped with MAP_POPULATE, and how long that mmap took. MAP_POPULATE faults
    /// the pages in during the call, before madvise could mark the mapping: with THP mode
    /// `always` (`thp_always`) a `thp=off` region would get huge pages, so the process's THP
    /// is disabled around the call (PR_SET_THP_DISABLE); with another mode a `thp=on`
    /// region cannot get them (setup refuses that combination).
    fn populated(pages: usize, thp: bool, thp_always: bool) -> Result<(Region, Duration), String> {
        let len = pages * PAGE;
        // An aligned range inside a reservation; the populated mapping replaces it there.
        let reservation = Anon::private(len + HUGE).map_err(setup_error)?;
        let base = (reservation.ptr() as usize).next_multiple_of(HUGE) as *mut u8;
        let map_populate = || {
            let start = Instant::now();
            // SAFETY: MAP_FIXED replaces [base, base + len), which lies inside `reservation`,
            // our own mapping that nothing refers to yet; dropping `reservation` unmaps the
            // whole range, the populated part included.
            let ptr = unsafe {
                libc::mmap(
                    base.cast(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_POPULATE,
                    -1,
                    0,
                )
            };
            let elapsed = start.elapsed();
            // Read errno now: restoring the THP setting after the call could change it.
            let mapped = if ptr == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            };
            (mapped, elapsed)
        };
        let (mapped, elapsed) = if !thp && thp_always {
            without_thp(map_populate)?
        } else {
            map_populate()
        };
        mapped.map_err(|e| format!("mmap(MAP_POPULATE) of {len} bytes failed: {e}"))?;
        Ok((
            Region {
                _map: reservation,
                base,
                pages,
            },
            elapsed,
        ))
    }
}

/// Run `f` with transparent huge pages disabled for this process (PR_SET_THP_DISABLE), then
/// restore the previous setting.
fn without_thp<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    // SAFETY: PR_GET_THP_DISABLE reads a flag of this process.
    let was = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
    if was < 0 {
        return Err(format!(
            "prctl(PR_GET_THP_DISABLE) failed: {}",
            io::Error::last_os_error()
        ));
    }
    let set = |disable: libc::c_ulong| {
        // SAFETY: PR_SET_THP_DISABLE sets a flag of this process; no memory is passed.
        let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, disable, 0, 0, 0) };
        if rc == 0 {
            Ok(())
        } else {
            Err(format!(
                "prctl(PR_SET_THP_DISABLE, {disable}) failed: {}",
                io::Error::last_os_error()
            ))
        }
    };
    if was == 0 {
        set(1)?;
    }
    let out = f();
    if was == 0 {
        set(0)?;
    }
    Ok(out)
}

/// The THP mode the kernel is in: `always`, `madvise` or `never` (the bracketed word).
fn thp_mode() -> Option<String> {
    let text = std::fs::read_to_string(THP_ENABLED).ok()?;
    let (_, rest) = text.split_once('[')?;
    let (mode, _) = rest.split_once(']')?;
    Some(mode.to_string())
}

/// AnonHugePages, in kB, of the mapping that holds `addr`, from /proc/self/smaps.
fn anon_huge_pages_kb(addr: usize) -> Result<f64, String> {
    crate::platform::maps::own_region_containing(addr as u64).map(|r| r.anon_huge_pages_kb as f64)
}

/// What this process may still allocate, bytes: MemAvailable, or less when a memory cgroup
/// it is in (v1 or v2, or an ancestor of it) leaves less room — `--load memory` confines the
/// worker in one.
fn memory_headroom() -> Option<usize> {
    use procfs::Current;
    let available = procfs::Meminfo::current().ok()?.mem_available?;
    Some(crate::measure::memload::room_for_this_process(available) as usize)
}

/// The virtio balloon device that takes free page reports (`virtio0`), if one is bound.
/// Only then does a host reclaim memory the guest frees.
fn free_page_reporting() -> Option<String> {
    std::fs::read_dir(VIRTIO_BALLOON)
        .ok()?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("virtio"))
        .find(|name| {
            std::fs::read_to_string(format!("{VIRTIO_BALLOON}/{name}/features"))
                .is_ok_and(|bits| bits.as_bytes().get(BALLOON_F_REPORTING) == Some(&b'1'))
        })
}

fn ns_per_page(elapsed: Duration, pages: usize) -> f64 {
    elapsed.as_nanos() as f64 / pages.max(1) as f64
}

/// Unmap a region, timed: ns per page.
fn timed_unmap(region: Region) -> f64 {
    let pages = region.pages;
    let start = Instant::now();
    drop(region);
    ns_per_page(start.elapsed(), pages)
}

/// The rule that ends the absorption of recently freed memory: `ABSORB_RUN` chunks in a row
/// that each cost more than `FRESH_FACTOR` × the warm reference.
struct FreshRule {
    threshold_ns: f64,
    run: usize,
}

impl FreshRule {
    fn new(warm_ns: f64) -> FreshRule {
        FreshRule {
            threshold_ns: warm_ns * FRESH_FACTOR,
            run: 0,
        }
    }

    /// Note one chunk's cost per page; true once the run is long enough.
    fn reached(&mut self, chunk_ns_per_page: f64) -> bool {
        self.run = if chunk_ns_per_page > self.threshold_ns {
            self.run + 1
        } else {
            0
        };
        self.run >= ABSORB_RUN
    }
}

/// The memory the kernel had freed recently, touched and held so the samples get none of it.
struct Absorbed {
    /// `None` when there was no room for even one run of chunks.
    _map: Option<Anon>,
    /// Touched before the first chunk of the final run of slow ones.
    pool_bytes: usize,
    /// Touched in all.
    bytes: usize,
    /// Whether the run of slow chunks was found before `cap` bytes.
    reached: bool,
    cap: usize,
}

/// Touch memory chunk by chunk until the kernel hands out pages the host reclaimed (see
/// [`FreshRule`]), or `cap` bytes.
fn absorb_recently_freed(warm_ns: f64, cap: usize) -> Result<Absorbed, SetupError> {
    let cap = cap / ABSORB_CHUNK * ABSORB_CHUNK;
    if cap < ABSORB_CHUNK * ABSORB_RUN {
        return Ok(Absorbed {
            _map: None,
            pool_bytes: 0,
            bytes: 0,
            reached: false,
            cap,
        });
    }
    let map = Anon::private(cap)?;
    map.advise(libc::MADV_NOHUGEPAGE)
        .map_err(|e| SetupError::Failed(format!("madvise(MADV_NOHUGEPAGE) failed: {e}")))?;
    let mut rule = FreshRule::new(warm_ns);
    let mut bytes = 0;
    let mut reached = false;
    while bytes < cap && !reached {
        let start = Instant::now();
        for offset in (bytes..bytes + ABSORB_CHUNK).step_by(PAGE) {
            // SAFETY: `offset` < `cap`, the length of `map`, our own writable mapping.
            unsafe { map.ptr().add(offset).write_volatile(1) };
        }
        reached = rule.reached(ns_per_page(start.elapsed(), ABSORB_CHUNK / PAGE));
        bytes += ABSORB_CHUNK;
    }
    Ok(Absorbed {
        _map: Some(map),
        pool_bytes: bytes - rule.run * ABSORB_CHUNK,
        bytes,
        reached,
        cap,
    })
}

/// The cost of touching memory released just before: a 64 MiB region touched, released with
/// MADV_DONTNEED and touched again, timed; the median of three.
fn warm_reference() -> Result<f64, SetupError> {
    let region = Region::new(WARM_PROBE / PAGE, false)?;
    region.touch_all();
    let mut timings = Vec::with_capacity(3);
    for _ in 0..3 {
        region.dontneed().map_err(SetupError::Failed)?;
        let start = Instant::now();
        region.touch_all();
        timings.push(ns_per_page(start.elapsed(), region.pages));
    }
    Ok(median(&timings).unwrap_or(f64::NAN))
}

/// `memory=fresh`: what keeps every batch on memory nobody touched recently. The kernel
/// hands out the memory freed last first, and keeps it backed by the host; so the recently
/// freed memory is absorbed once (only where a host reclaims free memory), and every region
/// a batch touched is held rather than unmapped, so no later batch gets its pages back.
struct Fresh {
    warm_ns: f64,
    /// The balloon device that reports free pages, and the memory absorbed because of it;
    /// `None` without one.
    reporting: Option<(String, Absorbed)>,
    held: Vec<Region>,
    held_bytes: usize,
    /// Half of the memory headroom at setup (MemAvailable, or a cgroup's room): what the
    /// worker may hold, the absorbed memory included; a third of it may be absorbed.
    limit: usize,
    /// A region was given back to stay within `limit`.
    gave_back: bool,
    /// Batches mapped since then.
    reused: u32,
}

impl Fresh {
    fn new() -> Result<Fresh, SetupError> {
        let warm_ns = warm_reference()?;
        let available = memory_headroom().unwrap_or(ASSUMED_AVAILABLE);
        let reporting = match free_page_reporting() {
            Some(device) => Some((device, absorb_recently_freed(warm_ns, available / 3)?)),
            None => None,
        };
        Ok(Fresh {
            warm_ns,
            held_bytes: reporting.as_ref().map_or(0, |(_, a)| a.bytes),
            reporting,
            held: Vec::new(),
            limit: available / 2,
            gave_back: false,
            reused: 0,
        })
    }

    /// Make room for a region of `len` bytes: give back the oldest regions while the
    /// worker would hold more than its limit (timed unmaps go to `munmap_ns`).
    fn make_room(&mut self, len: usize, munmap_ns: &mut Vec<f64>) {
        while self.held_bytes + len > self.limit && !self.held.is_empty() {
            let oldest = self.held.remove(0);
            self.held_bytes -= oldest.len();
            munmap_ns.push(timed_unmap(oldest));
            self.gave_back = true;
        }
        if self.gave_back {
            self.reused += 1;
        }
    }

    fn hold(&mut self, region: Region) {
        self.held_bytes += region.len();
        self.held.push(region);
    }

    fn facts(&self) -> Vec<Fact> {
        let mut facts = vec![Fact::new(
            "warm_ns_per_page",
            self.warm_ns,
            "ns/page",
            "reference: touching 64 MiB released just before (MADV_DONTNEED), median of 3, \
             in setup. This is the figure to compare with bare metal, where no host \
             reclaims free memory",
        )];
        match &self.reporting {
            Some((device, a)) => {
                facts.push(Fact::new(
                    "recently_freed_mib",
                    (a.pool_bytes >> 20) as f64,
                    "MiB",
                    format!(
                        "{device} reports free pages to the host: memory the kernel handed \
                         out first, still backed by the host, touched and held before the \
                         first batch ({} MiB touched in all, at most {} MiB)",
                        a.bytes >> 20,
                        a.cap >> 20
                    ),
                ));
                facts.push(Fact::new(
                    "fresh_memory_reached",
                    if a.reached { 1.0 } else { 0.0 },
                    "0/1",
                    format!(
                        "1: {ABSORB_RUN} chunks of {} MiB in a row cost more than {FRESH_FACTOR}× \
                         warm, so the kernel had reached memory the host reclaimed",
                        ABSORB_CHUNK >> 20
                    ),
                ));
            }
            None => facts.push(Fact::new(
                "recently_freed_mib",
                f64::NAN,
                "MiB",
                "no virtio balloon takes free page reports here: no host reclaims free \
                 memory, so fresh memory costs what warm memory does",
            )),
        }
        facts.push(Fact::new(
            "batches_on_reused_memory",
            f64::from(self.reused),
            "batches",
            format!(
                "batches (warm-up, samples, then the probe pass) mapped after a held region \
                 was given back to stay within {} MiB",
                self.limit >> 20
            ),
        ));
        facts
    }
}

struct AnonTouch {
    pages: usize,
    thp: bool,
    /// THP mode `always`: MAP_POPULATE needs THP disabled around it for `thp=off`.
    thp_always: bool,
    populate: Populate,
    order: Vec<usize>,
    region: Option<Region>,
    /// `None`: memory=warm.
    fresh: Option<Fresh>,
    munmap_ns: Vec<f64>,
    populate_ns: Vec<f64>,
    populate_minflt: Vec<f64>,
    huge_kb: Vec<f64>,
    /// Why AnonHugePages could not be read, when it could not.
    smaps_error: Option<String>,
}

impl AnonTouch {
    /// Put the last batch's region away: note its huge pages, then unmap it (timed) or,
    /// with memory=fresh, hold it.
    fn retire(&mut self) {
        let Some(old) = self.region.take() else {
            return;
        };
        match anon_huge_pages_kb(old.base as usize) {
            Ok(kb) => self.huge_kb.push(kb),
            Err(e) => self.smaps_error = Some(e),
        }
        match &mut self.fresh {
            Some(fresh) => fresh.hold(old),
            None => self.munmap_ns.push(timed_unmap(old)),
        }
    }

    /// The next batch's region, populated or warmed as the parameters say.
    fn map_region(&mut self) -> Result<Region, String> {
        let warm = self.fresh.is_none();
        if let Some(fresh) = &mut self.fresh {
            fresh.make_room(self.pages * PAGE, &mut self.munmap_ns);
        }
        if self.populate == Populate::Mmap {
            if warm {
                // The pages MAP_POPULATE will take: touched and freed just before.
                Region::new(self.pages, self.thp)
                    .map_err(setup_error)?
                    .touch_all();
            }
            let before = minflt_now();
            let (region, elapsed) = Region::populated(self.pages, self.thp, self.thp_always)?;
            self.note_populate(elapsed, minflt_now() - before);
            return Ok(region);
        }
        let region = Region::new(self.pages, self.thp).map_err(setup_error)?;
        if warm {
            region.touch_all();
            region.dontneed()?;
        }
        if self.populate == Populate::Madvise {
            let before = minflt_now();
            let start = Instant::now();
            region
                .populate_write()
                .map_err(|e| format!("madvise(MADV_POPULATE_WRITE) failed: {e}"))?;
            self.note_populate(start.elapsed(), minflt_now() - before);
        }
        Ok(region)
    }

    fn note_populate(&mut self, elapsed: Duration, faults: i64) {
        self.populate_ns.push(ns_per_page(elapsed, self.pages));
        self.populate_minflt
            .push(faults as f64 / self.pages.max(1) as f64);
    }
}

fn median_or_nan(values: &[f64]) -> f64 {
    median(values).unwrap_or(f64::NAN)
}

impl Routine for AnonTouch {
    fn prepare(&mut self, ops: u64) -> Result<(), String> {
        if ops > self.pages as u64 {
            return Err(format!(
                "a batch of {ops} pages does not fit the region of {} pages",
                self.pages
            ));
        }
        self.retire();
        self.region = Some(self.map_region()?);
        Ok(())
    }

    fn run(&mut self, ops: u64) -> Result<(), String> {
        let region = self
            .region
            .as_ref()
            .ok_or("run without prepare: no region")?;
        let order = self
            .order
            .get(..ops as usize)
            .ok_or("run with more pages than prepared")?;
        for &page in order {
            region.touch(page, 1);
        }
        Ok(())
    }

    /// Asked once after sampling: the last region is put away like the others, and with
    /// memory=fresh every held region is unmapped now, timed.
    fn facts(&mut self) -> Vec<Fact> {
        self.retire();
        if let Some(fresh) = &mut self.fresh {
            for region in std::mem::take(&mut fresh.held) {
                self.munmap_ns.push(timed_unmap(region));
            }
            fresh.held_bytes = 0;
        }
        let mut facts = vec![
            Fact::new(
                "munmap_ns_per_page",
                median_or_nan(&self.munmap_ns),
                "ns/page",
                format!(
                    "munmap of a region after its touch (every page mapped), median of {}",
                    self.munmap_ns.len()
                ),
            ),
            Fact::new(
                "anon_huge_pages_kb",
                median_or_nan(&self.huge_kb),
                "kB",
                match &self.smaps_error {
                    Some(e) => format!("AnonHugePages could not be read: {e}"),
                    None => format!(
                        "AnonHugePages of the region's mapping in /proc/self/smaps after its \
                         touch, median of {} (whole region: {} kB)",
                        self.huge_kb.len(),
                        self.pages * PAGE / 1024
                    ),
                },
            ),
        ];
        if self.populate != Populate::Off {
            let how = match self.populate {
                Populate::Mmap => "mmap(MAP_POPULATE)",
                _ => "madvise(MADV_POPULATE_WRITE)",
            };
            facts.push(Fact::new(
                "populate_ns_per_page",
                median_or_nan(&self.populate_ns),
                "ns/page",
                format!(
                    "{how} of the whole region before the sample, median of {}",
                    self.populate_ns.len()
                ),
            ));
            facts.push(Fact::new(
                "populate_minflt_per_page",
                median_or_nan(&self.populate_minflt),
                "faults/page",
                format!("minor faults the kernel counted during {how}: the faults moved there"),
            ));
        }
        if let Some(fresh) = &self.fresh {
            facts.extend(fresh.facts());
        }
        facts
    }
}

fn setup_anon(p: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let pages = anon_pages(p) as usize;
    let thp = p.str("thp") == "on";
    let populate = match p.str("populate") {
        "map_populate" => Populate::Mmap,
        "madv_populate_write" => Populate::Madvise,
        _ => Populate::Off,
    };
    if thp && let Some(reason) = thp_unavailable() {
        return Err(SetupError::Unsupported(reason));
    }
    let mode = thp_mode();
    let thp_always = mode.as_deref() == Some("always");
    if thp && populate == Populate::Mmap && !thp_always {
        return Err(SetupError::Unsupported(format!(
            "MAP_POPULATE faults the pages in during mmap, before madvise(MADV_HUGEPAGE) can \
             mark the mapping, so with THP `{}` they are never huge: use \
             populate=madv_populate_write",
            mode.as_deref().unwrap_or("unknown")
        )));
    }
    if populate == Populate::Madvise {
        let probe = Region::new(1, false)?;
        if let Err(e) = probe.populate_write() {
            return Err(if e.raw_os_error() == Some(libc::EINVAL) {
                SetupError::Unsupported(format!(
                    "madvise(MADV_POPULATE_WRITE) is not supported by this kernel (Linux 5.14 \
                     or later): {e}"
                ))
            } else {
                SetupError::Failed(format!("madvise(MADV_POPULATE_WRITE) failed: {e}"))
            });
        }
    }
    // Built (and its pages faulted in) before any absorption, so it takes no fresh memory.
    let order = if p.str("order") == "random" {
        permutation(pages, ORDER_SEED)
    } else {
        (0..pages).collect()
    };
    let fresh = if p.str("memory") == "fresh" {
        Some(Fresh::new()?)
    } else {
        None
    };
    Ok(Box::new(AnonTouch {
        pages,
        thp,
        thp_always,
        populate,
        order,
        region: None,
        fresh,
        munmap_ns: Vec::new(),
        populate_ns: Vec::new(),
        populate_minflt: Vec::new(),
        huge_kb: Vec::new(),
        smaps_error: None,
    }))
}

pub static ANON: ExperimentInfo = ExperimentInfo {
    name: "pagefault.anon",
    os: crate::experiment::LINUX,
    summary: "first write to each 4 KiB page of a new anonymous mapping (one sample: every \
              page of `size`): a minor fault that allocates, zeroes and maps a page. \
              memory=warm (the default) is the figure to compare with bare metal; \
              memory=fresh adds, on a VM that reports free pages to its host, the host's own \
              fault (see the facts)",
    op: "page",
    path: "user store → page fault → do_anonymous_page (thp=on: do_huge_pmd_anonymous_page, \
           once per 2 MiB); no system call",
    params: ANON_PARAMS,
    syscalls: &[],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    // Every fault updates the open page-fault software events: measured here, a C loop
    // touching 1 GiB took 1475 ns per page alone and 1538 ns under `perf stat` with the
    // harness's six software events (six interleaved runs each). getrusage counts the faults
    // exactly without that cost, so the perf groups are counted in the untimed pass instead.
    counters_in_samples: false,
    work_dir: false,
    expectations: anon_expectations,
    setup: setup_anon,
    preflight: None,
    batch: super::Batch::Fixed(anon_pages),
    sweep: &[("thp", &["off", "on"])],
    quick_params: &[("size", "128M")],
};

// --- pagefault.cow ---

fn cow_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Children("minflt"),
            Bound::AtLeast(0.99),
            "the child writes each inherited page once: at least one copy-on-write fault per \
             page, or the write did not copy",
        ),
        Expectation::new(
            Metric::Children("minflt"),
            Bound::Below(1.1),
            "beyond one fault per page, only the child's own few (its stack, glibc's fork \
             handlers: ~30 measured) spread over a batch of hundreds of pages",
        ),
        Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.0001),
            "the region is resident anonymous memory: no major fault in the parent",
        ),
        Expectation::new(
            Metric::Children("majflt"),
            Bound::Below(0.0001),
            "copying a resident anonymous page reads nothing from disk: no major fault in \
             the child",
        ),
    ]
}

struct Cow {
    region: Region,
}

fn reap(pid: libc::pid_t) -> Result<(), String> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; `pid` is our own unreaped child.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if ret < 0 && err.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return Err(format!("waitpid failed: {err}"));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(format!(
            "the writing child ended with wait status {status:#x}"
        ))
    }
}

impl Cow {
    /// Fork a child that writes one byte to each of the first `pages` pages and exits.
    fn fork_writing(&self, pages: usize) -> Result<(), String> {
        let base = self.region.base;
        // SAFETY: fork has no memory-safety preconditions. The child only stores to the
        // inherited region (plain memory writes) and calls `_exit`: no allocator, lock or
        // destructor runs in it.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            for page in 0..pages {
                // SAFETY: `page` is below the region's page count (checked by the caller).
                unsafe { base.add(page * PAGE).write_volatile(2) };
            }
            // SAFETY: _exit is async-signal-safe and never returns.
            unsafe { libc::_exit(0) };
        }
        if pid < 0 {
            return Err(format!("fork failed: {}", io::Error::last_os_error()));
        }
        reap(pid)
    }
}

impl Routine for Cow {
    fn prepare(&mut self, ops: u64) -> Result<(), String> {
        let ops = ops as usize;
        if ops > self.region.pages {
            self.region = touched_region(ops).map_err(setup_error)?;
        }
        Ok(())
    }

    fn run(&mut self, ops: u64) -> Result<(), String> {
        let pages = ops as usize;
        if pages > self.region.pages {
            return Err("run with more pages than prepared".into());
        }
        self.fork_writing(pages)
    }

    fn run_baseline(&mut self, _ops: u64) -> Option<Result<(), String>> {
        Some(self.fork_writing(0))
    }
}

/// A 4 KiB-page region of `pages` pages, every page written by this process.
fn touched_region(pages: usize) -> Result<Region, SetupError> {
    let region = Region::new(pages, false)?;
    for page in 0..pages {
        region.touch(page, 1);
    }
    Ok(region)
}

fn setup_cow(p: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let pages = (p.u64("size") as usize).div_ceil(PAGE);
    Ok(Box::new(Cow {
        region: touched_region(pages)?,
    }))
}

pub static COW: ExperimentInfo = ExperimentInfo {
    name: "pagefault.cow",
    os: crate::experiment::LINUX,
    summary: "copy-on-write: a forked child writes one byte to each of N inherited 4 KiB \
              pages; per page, after subtracting the same fork+exit+wait without writes \
              (includes freeing the copy at the child's exit)",
    op: "page",
    path: "fork(), the child stores → page fault → wp_page_copy, _exit; waitpid; minus the \
           same without stores",
    params: &[ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 4 << 30,
        },
        default: "16M",
        help: "the region the parent touches in setup and the child inherits (grown when a \
               batch needs more pages)",
    }],
    syscalls: &["clone", "exit_group", "wait4"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: false,
    expectations: cow_expectations,
    setup: setup_cow,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

#[cfg(test)]
mod tests;

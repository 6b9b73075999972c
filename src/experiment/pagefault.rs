//! What a page fault costs: the first touch of anonymous memory (`pagefault.anon`) and a
//! copy-on-write after fork (`pagefault.cow`). One operation is one 4 KiB page.
//!
//! `pagefault.anon` writes one byte to each of `ops` pages of an anonymous private mapping
//! that has no page there yet, so each write enters the kernel through a page fault
//! (`do_anonymous_page`: allocate a zeroed page, map it). Everything else happens in
//! `Routine::prepare`, outside the timed region and the sample's rusage:
//! - the region holds at least `size` bytes and at least `ops` pages (it is remapped larger
//!   when the harness asks for a bigger batch), so no page is touched twice in a batch;
//! - the order is a permutation of the region's page indices, built once (seeded, so every
//!   run touches the same pages in the same order); a batch touches its first `ops` entries;
//! - `memory=warm`: the pages the batch will touch are written and released with
//!   MADV_DONTNEED just before it, so the kernel hands back recently freed memory;
//!   `memory=fresh`: a new mapping every batch (the old one is unmapped first);
//! - `populate=madv_populate_write`: MADV_POPULATE_WRITE on the region, so the timed touch
//!   finds every page mapped (the pre-faults are counted by the kernel at populate time,
//!   not in the sample: FINDINGS);
//! - `thp`: MADV_NOHUGEPAGE (`off`) or MADV_HUGEPAGE (`on`) on the whole region, whose
//!   start is aligned to 2 MiB so a huge page can back every 2 MiB of it.
//!
//! Not here yet (issue 4): the munmap cost as its own figure, and AnonHugePages read from
//! smaps. Whether THP applies is checked once in setup by touching a 2 MiB-aligned
//! MADV_HUGEPAGE region and counting its faults.
//!
//! `pagefault.cow` forks, in the timed region, a child that writes one byte to each of
//! `ops` pages of a region the parent touched in setup, and exits; the parent waits. The
//! baseline (`run_baseline`) is the same fork, exit and wait with no write, timed by the
//! harness and subtracted per operation. What remains per page is the copy-on-write fault
//! in the child (allocate a page, copy 4 KiB, map it) plus freeing that copy when the child
//! exits. The children's faults are read from RUSAGE_CHILDREN.

use std::io;

use super::mapping::Anon;
use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::rng::Rng;
use crate::validate::{Bound, Expectation, Metric};

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

const ANON_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 4 << 30,
        },
        default: "64M",
        help: "the region a batch touches pages of (grown when a batch needs more pages)",
    },
    ParamSpec {
        name: "order",
        kind: ParamKind::Choice(&["seq", "random"]),
        default: "seq",
        help: "`seq`: pages in address order; `random`: a seeded permutation of the region's \
               pages, built outside timing",
    },
    ParamSpec {
        name: "thp",
        kind: ParamKind::Choice(&["off", "on"]),
        default: "off",
        help: "`off`: MADV_NOHUGEPAGE (one fault per 4 KiB page); `on`: MADV_HUGEPAGE (one \
               fault per 2 MiB; unsupported when THP is `never` or does not apply)",
    },
    ParamSpec {
        name: "populate",
        kind: ParamKind::Choice(&["none", "madv_populate_write"]),
        default: "none",
        help: "`madv_populate_write`: pre-fault the region with MADV_POPULATE_WRITE before \
               the batch (untimed), so the timed touch takes ~0 faults",
    },
    ParamSpec {
        name: "memory",
        kind: ParamKind::Choice(&["warm", "fresh"]),
        default: "warm",
        help: "`warm`: the pages were touched and released (MADV_DONTNEED) just before the \
               batch; `fresh`: a new mapping every batch",
    },
];

fn anon_expectations(p: &Params) -> Vec<Expectation> {
    let minflt = if p.str("populate") == "madv_populate_write" {
        Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Below(0.01),
            "MADV_POPULATE_WRITE mapped every page before the batch (its faults count at \
             populate time), so the timed touch finds them present",
        )
    } else if p.str("thp") == "on" {
        Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Below(0.1),
            "with a huge page per 2 MiB one fault maps 512 pages (about 0.002 faults per \
             page); more means THP did not apply",
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
    vec![
        minflt,
        Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.0001),
            "anonymous memory is zero-filled, never read from disk: no major fault",
        ),
    ]
}

struct AnonTouch {
    random: bool,
    thp: bool,
    populate: bool,
    fresh: bool,
    min_pages: usize,
    region: Option<Region>,
    order: Vec<usize>,
}

impl AnonTouch {
    /// A region of at least `ops` pages (a new one every batch with `memory=fresh`), and
    /// the order of its pages.
    fn ensure(&mut self, ops: usize) -> Result<(), String> {
        let need = self.min_pages.max(ops);
        let reuse = !self.fresh && self.region.as_ref().is_some_and(|r| r.pages >= need);
        if !reuse {
            // Unmap the old region first, so both never coexist.
            let pages = self.region.take().map_or(need, |r| r.pages.max(need));
            self.region = Some(Region::new(pages, self.thp).map_err(setup_error)?);
        }
        let pages = self.region.as_ref().map_or(0, |r| r.pages);
        if self.order.len() != pages {
            self.order = if self.random {
                permutation(pages, ORDER_SEED)
            } else {
                (0..pages).collect()
            };
        }
        Ok(())
    }
}

impl Routine for AnonTouch {
    fn prepare(&mut self, ops: u64) -> Result<(), String> {
        let ops = ops as usize;
        self.ensure(ops)?;
        let region = self.region.as_ref().expect("ensured");
        if !self.fresh {
            for &page in &self.order[..ops] {
                region.touch(page, 1);
            }
            region.dontneed()?;
        }
        if self.populate {
            region
                .populate_write()
                .map_err(|e| format!("madvise(MADV_POPULATE_WRITE) failed: {e}"))?;
        }
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
}

fn setup_anon(p: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let thp = p.str("thp") == "on";
    let populate = p.str("populate") == "madv_populate_write";
    if thp && let Some(reason) = thp_unavailable() {
        return Err(SetupError::Unsupported(reason));
    }
    if populate {
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
    let min_pages = (p.u64("size") as usize).div_ceil(PAGE);
    let mut routine = AnonTouch {
        random: p.str("order") == "random",
        thp,
        populate,
        fresh: p.str("memory") == "fresh",
        min_pages,
        region: None,
        order: Vec::new(),
    };
    routine.ensure(min_pages).map_err(SetupError::Failed)?;
    Ok(Box::new(routine))
}

pub static ANON: ExperimentInfo = ExperimentInfo {
    name: "pagefault.anon",
    summary: "first write to a page of anonymous memory: one minor fault that allocates and \
              maps a zeroed 4 KiB page (memory=warm, the default, is the figure to compare \
              with bare metal: on a VM with free page reporting, memory=fresh may include the \
              hypervisor giving the page back)",
    op: "page",
    path: "user store → page fault → do_anonymous_page (no system call)",
    params: ANON_PARAMS,
    syscalls: &[],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: false,
    expectations: anon_expectations,
    setup: setup_anon,
    preflight: None,
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
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_holds_every_page_once_and_is_seeded() {
        for pages in [0, 1, 2, 7, 4096] {
            let order = permutation(pages, ORDER_SEED);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..pages).collect::<Vec<_>>(), "{pages} pages");
            assert_eq!(
                order,
                permutation(pages, ORDER_SEED),
                "same seed, same order"
            );
        }
        let a = permutation(4096, 1);
        assert_ne!(a, permutation(4096, 2), "another seed, another order");
        assert_ne!(a, (0..4096).collect::<Vec<_>>(), "shuffled");
    }

    #[test]
    fn anon_touch_faults_once_per_page() {
        let params = Params::resolve(
            "pagefault.anon",
            ANON_PARAMS,
            &[
                ("size".into(), "1M".into()),
                ("order".into(), "random".into()),
            ],
        )
        .unwrap();
        let mut r = setup_anon(&params, &Context::default()).unwrap_or_else(|_| panic!("setup"));
        for ops in [10u64, 256, 300] {
            r.prepare(ops).unwrap();
            let before = minflt_now();
            r.run(ops).unwrap();
            let faults = minflt_now() - before;
            assert_eq!(faults as u64, ops, "{ops} pages");
        }
    }

    #[test]
    fn region_is_aligned_for_huge_pages() {
        let r = Region::new(3, false).unwrap();
        assert_eq!(r.base as usize % HUGE, 0);
        r.touch(2, 1);
    }
}

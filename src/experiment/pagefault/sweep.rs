//! `pagefault.prefault_sweep`: the user-space analogue of a kernel that preallocates N pages
//! per fault. The classic lab patches the fault handler to map N pages at once and plots the
//! cost per page against N; here MADV_POPULATE_WRITE does the same work from user space, one
//! call per batch of N pages, and the kernel is left alone.
//!
//! One op is one 4 KiB page; one sample is one whole pass (`Batch::Fixed`) over a region of
//! `size` bytes:
//! - `prepare` (untimed, outside the sample's rusage) unmaps the previous pass's region and
//!   maps a fresh anonymous one with MADV_NOHUGEPAGE, so every page is populated at 4 KiB and
//!   nothing is mapped yet;
//! - `run` (timed) populates the region batch by batch, N pages per MADV_POPULATE_WRITE call,
//!   in address order (`order=seq`) or in a seeded random order of the batches
//!   (`order=random`), then writes one byte to every page in the same order. The touch finds
//!   each page mapped; the faults were taken, and counted as minor faults, at populate time
//!   (FINDINGS).
//!
//! The timed op is therefore populate + touch per page; `facts` splits it. Each pass times its
//! two phases with `Instant` and counts the touch phase's faults with getrusage: three clock
//! reads and two system calls per pass of thousands of pages, well under 0.1 ns per page.

use super::PAGE;
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::experiment::{Batch, ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup);

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 4 << 30,
        },
        default: "64M",
        help: "the region one sample populates and touches, page by page (16M with --quick)",
    },
    ParamSpec {
        name: "batch",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 18,
        },
        default: "1",
        help: "pages per MADV_POPULATE_WRITE call, N of 'preallocate N pages per fault' \
               (swept over 1, 2, 4 … 512 unless set)",
    },
    ParamSpec {
        name: "order",
        kind: ParamKind::Choice(&["seq", "random"]),
        default: "seq",
        help: "`seq`: batches in address order; `random`: a seeded permutation of the \
               batches, built outside timing (pages within a batch stay in order)",
    },
];

fn pages_per_pass(p: &Params) -> u64 {
    p.u64("size") / PAGE as u64
}

fn expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Near {
                value: 1.0,
                tolerance: 0.01,
            },
            "the populate call (MADV_POPULATE_WRITE; FreeBSD: mlock) faults each page of the \
             fresh region in exactly once (the kernel counts it as a minor fault at populate \
             time, whatever the batch size)",
        ),
        Expectation::new(
            Metric::Fact("touch_faults_per_page"),
            Bound::Below(0.01),
            "the populate calls mapped every page, so the touch that follows takes no fault",
        ),
        Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.0001),
            "anonymous memory is zero-filled, never read from disk: no major fault",
        ),
    ]
}

pub static PREFAULT_SWEEP: ExperimentInfo = ExperimentInfo::new(
    "pagefault.prefault_sweep",
    "'preallocate N pages per fault' from user space: a fresh anonymous region \
     populated N pages per MADV_POPULATE_WRITE call (FreeBSD: mlock + munlock), then \
     touched; time per page \
     against N (1 … 512), in address and in random batch order",
    "page",
    "madvise(MADV_POPULATE_WRITE) per N pages → faultin_page → do_anonymous_page, then \
     a user store to each (mapped) page",
    setup,
)
.params(PARAMS)
// One MADV_POPULATE_WRITE per batch of N pages (the last batch may be short).
.syscalls(|p| {
    vec![crate::experiment::Claim::at_least(
        crate::platform::memory::POPULATE_WRITE_SYSCALL,
        1.0 / p.u64("batch").max(1) as f64,
    )]
})
.outside_default_suite()
.expectations(expectations)
.batch(Batch::Fixed(pages_per_pass))
.sweep(&[
    ("order", &["seq", "random"]),
    (
        "batch",
        &["1", "2", "4", "8", "16", "32", "64", "128", "256", "512"],
    ),
])
.quick_params(&[("size", "16M")])
.cells(eq::Cells {
    linux: eq::runs("madvise(MADV_POPULATE_WRITE) of N pages per call, then a touch"),
    freebsd: eq::runs(
        "mlock(2) + munlock(2) of N pages per call (the wiring faults them in writable), \
             then a touch",
    ),
    macos: super::NOT_YET_ON_MACOS,
    windows: super::LINUX_FLAGS_ON_WINDOWS,
});

/// The routine, POSIX's: MADV_POPULATE_WRITE of a batch, then its touch.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::analysis::median;
    use crate::experiment::mapping::Anon;
    use crate::experiment::pagefault::{minflt_now, permutation};
    use crate::experiment::{Context, Fact, Routine, RoutineError, SetupError};
    use std::time::Instant;

    /// Seed of the batch order: every run populates the same batches in the same order.
    const ORDER_SEED: u64 = 0x5EED_BA7C;

    /// What one timed pass measured of its two phases.
    struct Pass {
        pages: usize,
        populate_ns: f64,
        touch_ns: f64,
        touch_faults: i64,
    }

    struct PrefaultSweep {
        /// Pages per MADV_POPULATE_WRITE call.
        batch: usize,
        random: bool,
        region: Option<Anon>,
        /// The region's batches (by index) in the order they are populated and touched.
        order: Vec<usize>,
        /// Whether `region` is fresh: mapped by `prepare` and not populated by a `run` yet.
        fresh: bool,
        passes: Vec<Pass>,
    }

    impl PrefaultSweep {
        /// The page range of batch `index` in a region of `pages` pages (the last may be short).
        fn batch_range(&self, index: usize, pages: usize) -> std::ops::Range<usize> {
            let start = index * self.batch;
            start..(start + self.batch).min(pages)
        }
    }

    impl Routine for PrefaultSweep {
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            let pages = ops as usize;
            // Unmap the previous region first, so both never coexist.
            self.region = None;
            let region = Anon::private(pages * PAGE).map_err(|e| match e {
                SetupError::Unsupported(s) | SetupError::Failed(s) => s,
            })?;
            if let Some(advice) = crate::platform::memory::MADV_NO_HUGE_PAGES {
                region
                    .advise(advice)
                    .map_err(|e| format!("madvise(MADV_NOHUGEPAGE) failed: {e}"))?;
            }
            let batches = pages.div_ceil(self.batch);
            if self.order.len() != batches {
                self.order = if self.random {
                    permutation(batches, ORDER_SEED)
                } else {
                    (0..batches).collect()
                };
            }
            self.region = Some(region);
            self.fresh = true;
            Ok(())
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let pages = ops as usize;
            let region = self
                .region
                .as_ref()
                .ok_or("run without prepare: no region")?;
            if !self.fresh || region.len() != pages * PAGE {
                return Err("run without a fresh region of the pass's pages from prepare".into());
            }
            self.fresh = false;
            let base = region.ptr();

            let t0 = Instant::now();
            for &b in &self.order {
                let range = self.batch_range(b, pages);
                // SAFETY: `range` lies inside the region (batch_range clamps it to `pages`).
                let start = unsafe { base.add(range.start * PAGE) };
                crate::platform::memory::populate_write(start, range.len() * PAGE).map_err(
                    |e| {
                        format!(
                            "{} failed: {e}",
                            crate::platform::memory::POPULATE_WRITE_CALL
                        )
                    },
                )?;
            }
            let t1 = Instant::now();
            let faults0 = minflt_now();
            for &b in &self.order {
                for page in self.batch_range(b, pages) {
                    // SAFETY: `page` is below `pages`, so the byte lies inside the region.
                    unsafe { base.add(page * PAGE).write_volatile(1) };
                }
            }
            let faults1 = minflt_now();
            let t2 = Instant::now();

            self.passes.push(Pass {
                pages,
                populate_ns: (t1 - t0).as_nanos() as f64,
                touch_ns: (t2 - t1).as_nanos() as f64,
                touch_faults: faults1 - faults0,
            });
            Ok(())
        }

        fn facts(&mut self) -> Vec<Fact> {
            // Every pass has at least one page: prepare cannot map an empty region.
            let passes = self.passes.len();
            let pages: usize = self.passes.iter().map(|p| p.pages).sum();
            if passes == 0 || pages == 0 {
                return Vec::new();
            }
            let per_page = |f: fn(&Pass) -> f64| {
                let values: Vec<f64> = self.passes.iter().map(|p| f(p) / p.pages as f64).collect();
                median(&values)
            };
            let touch_faults: i64 = self.passes.iter().map(|p| p.touch_faults).sum();
            let mut facts = Vec::new();
            if let Some(ns) = per_page(|p| p.populate_ns) {
                facts.push(Fact::new(
                    "populate_ns_per_page",
                    ns,
                    "ns/page",
                    format!(
                        "the {} calls, {} page(s) each, per page: median of {passes} passes \
                         (warm-up and probe passes included), timed with Instant",
                        crate::platform::memory::POPULATE_WRITE_CALL,
                        self.batch
                    ),
                ));
            }
            if let Some(ns) = per_page(|p| p.touch_ns) {
                facts.push(Fact::new(
                    "touch_ns_per_page",
                    ns,
                    "ns/page",
                    format!(
                        "the write of one byte to each populated page: median of {passes} passes"
                    ),
                ));
            }
            facts.push(Fact::new(
                "touch_faults_per_page",
                touch_faults as f64 / pages as f64,
                "faults/page",
                format!("minor faults of the touch phase (getrusage) over {pages} pages"),
            ));
            facts
        }
    }

    pub(super) fn setup(p: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
        let probe = Anon::private(PAGE)?;
        let call = crate::platform::memory::POPULATE_WRITE_CALL;
        if let Err(e) = crate::platform::memory::populate_write(probe.ptr(), PAGE) {
            return Err(match e.raw_os_error() {
                Some(libc::EINVAL) => SetupError::Unsupported(format!(
                    "{call} is not supported by this kernel (Linux 5.14 or later): {e}"
                )),
                // mlock beyond RLIMIT_MEMLOCK or vm.max_user_wired (FreeBSD).
                Some(libc::ENOMEM | libc::EAGAIN | libc::EPERM) => SetupError::Unsupported(
                    format!("{call} is refused here: {e} (the limit on locked memory, ulimit -l)"),
                ),
                _ if e.kind() == std::io::ErrorKind::Unsupported => {
                    SetupError::Unsupported(format!("{e}"))
                }
                _ => SetupError::Failed(format!("{call} failed: {e}")),
            });
        }
        Ok(Box::new(PrefaultSweep {
            batch: p.u64("batch") as usize,
            random: p.str("order") == "random",
            region: None,
            order: Vec::new(),
            fresh: false,
            passes: Vec::new(),
        }))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::experiment::pagefault::{minflt_now, permutation};
        use crate::experiment::{Context, Routine};

        fn routine(batch: &str, order: &str) -> Box<dyn Routine> {
            let params = Params::resolve(
                PREFAULT_SWEEP.name,
                PARAMS,
                &[
                    ("size".into(), "1M".into()),
                    ("batch".into(), batch.into()),
                    ("order".into(), order.into()),
                ],
            )
            .unwrap();
            setup(&params, &Context::default()).unwrap_or_else(|_| panic!("setup"))
        }

        #[test]
        fn populate_faults_once_per_page_and_the_touch_never() {
            if !crate::experiment::enabled_here(&PREFAULT_SWEEP) {
                return;
            }
            if crate::platform::unsupported_under_emulation("MADV_POPULATE_WRITE") {
                // qemu-user ignores it: the touch makes the faults. The sweep still runs.
                let mut r = routine("64", "seq");
                r.prepare(300).unwrap();
                r.run(300).unwrap();
                return;
            }
            // 300 pages: batches of 64 leave a short last batch.
            for (batch, order) in [("1", "seq"), ("64", "random"), ("512", "seq")] {
                let mut r = routine(batch, order);
                for _ in 0..2 {
                    r.prepare(300).unwrap();
                    let before = minflt_now();
                    r.run(300).unwrap();
                    let faults = minflt_now() - before;
                    // Up to 1% more: a page moved by compaction after its fault faults again.
                    assert!(
                        (300..=303).contains(&faults),
                        "batch {batch} {order}: one fault per page, not {faults}"
                    );
                }
                let facts = r.facts();
                let touch = facts
                    .iter()
                    .find(|f| f.name == "touch_faults_per_page")
                    .unwrap();
                assert!(
                    touch.value <= 0.01,
                    "batch {batch} {order}: {}",
                    touch.value
                );
                assert!(
                    facts.iter().all(|f| f.value.is_finite() && f.value >= 0.0),
                    "{facts:?}"
                );
            }
        }

        #[test]
        fn a_pass_needs_a_fresh_region() {
            if !crate::experiment::enabled_here(&PREFAULT_SWEEP) {
                return;
            }
            let mut r = routine("4", "seq");
            assert!(r.run(16).is_err(), "no region yet");
            r.prepare(16).unwrap();
            assert!(r.run(32).is_err(), "more pages than prepared");
            r.run(16).unwrap();
            assert!(r.run(16).is_err(), "the region is already populated");
        }

        #[test]
        fn random_order_covers_every_page_once() {
            let r = PrefaultSweep {
                batch: 64,
                random: true,
                region: None,
                order: permutation(5, ORDER_SEED),
                fresh: false,
                passes: Vec::new(),
            };
            let mut pages: Vec<usize> = r
                .order
                .iter()
                .flat_map(|&b| r.batch_range(b, 300))
                .collect();
            pages.sort_unstable();
            assert_eq!(pages, (0..300).collect::<Vec<_>>());
        }
    }
}

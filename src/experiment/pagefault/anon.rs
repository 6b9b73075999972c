//! pagefault.anon's routine (touch every page of a fresh region, time munmap) and its registry entry.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup_anon);

pub static ANON: ExperimentInfo = ExperimentInfo::new(
    "pagefault.anon",
    "first write to each 4 KiB page of a new anonymous mapping (one sample: every \
     page of `size`): a minor fault that allocates, zeroes and maps a page. \
     memory=warm (the default) is the figure to compare with bare metal; \
     memory=fresh adds, on a VM that reports free pages to its host, the host's own \
     fault (see the facts)",
    "page",
    "user store → page fault → do_anonymous_page (thp=on: do_huge_pmd_anonymous_page, \
     once per 2 MiB); no system call",
    setup_anon,
)
.params(ANON_PARAMS)
.ladder()
// Every fault updates the open page-fault software events: measured here, a C loop
// touching 1 GiB took 1475 ns per page alone and 1538 ns under `perf stat` with the
// harness's six software events (six interleaved runs each). getrusage counts the faults
// exactly without that cost, so the perf groups are counted in the untimed pass instead.
.counters_between_samples()
.expectations(anon_expectations)
.batch(crate::experiment::Batch::Fixed(anon_pages))
.sweep(&[("thp", &["off", "on"])])
.quick_params(&[("size", "64M")])
.cells(eq::Cells {
    linux: eq::noted(
        "first write to each page of a fresh private anonymous mapping",
        "THP advice, prctl; MAP_POPULATE and MADV_POPULATE_WRITE for populate",
    ),
    freebsd: eq::noted(
        "first write to each page of a fresh private anonymous mapping",
        "no THP advice: a filled 2 MiB reservation is promoted afterwards, one fault per \
             4 KiB page still; thp=on and populate are unsupported",
    ),
    macos: super::NOT_YET_ON_MACOS,
    windows: super::LINUX_FLAGS_ON_WINDOWS,
});

/// The routine, POSIX's: mmap, touch, munmap.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;

    pub(super) struct AnonTouch {
        pub(super) pages: usize,
        pub(super) thp: bool,
        /// THP mode `always`: MAP_POPULATE needs THP disabled around it for `thp=off`.
        pub(super) thp_always: bool,
        pub(super) populate: Populate,
        pub(super) order: Vec<usize>,
        pub(super) region: Option<Region>,
        /// `None`: memory=warm.
        pub(super) fresh: Option<Fresh>,
        pub(super) munmap_ns: Vec<f64>,
        pub(super) populate_ns: Vec<f64>,
        pub(super) populate_minflt: Vec<f64>,
        pub(super) huge_kb: Vec<f64>,
        /// Why AnonHugePages could not be read, when it could not.
        pub(super) smaps_error: Option<String>,
    }

    impl AnonTouch {
        /// Put the last batch's region away: note its huge pages, then unmap it (timed) or,
        /// with memory=fresh, hold it.
        pub(super) fn retire(&mut self) {
            let Some(old) = self.region.take() else {
                return;
            };
            match anon_huge_pages_kb(old.base as usize) {
                Ok(kb) => self.huge_kb.push(kb),
                Err(e) => self.smaps_error = Some(e.to_string()),
            }
            match &mut self.fresh {
                Some(fresh) => fresh.hold(old),
                None => self.munmap_ns.push(timed_unmap(old)),
            }
        }

        /// The next batch's region, populated or warmed as the parameters say.
        pub(super) fn map_region(&mut self) -> Result<Region, RoutineError> {
            let warm = self.fresh.is_none();
            if let Some(fresh) = &mut self.fresh {
                fresh.make_room(self.pages * PAGE, &mut self.munmap_ns);
            }
            if self.populate == Populate::Mmap {
                if warm {
                    // The pages MAP_POPULATE will take: touched and freed just before.
                    Region::new(self.pages, self.thp)?.touch_all();
                }
                let before = minflt_now();
                let (region, elapsed) = Region::populated(self.pages, self.thp, self.thp_always)?;
                self.note_populate(elapsed, minflt_now() - before);
                return Ok(region);
            }
            let region = Region::new(self.pages, self.thp)?;
            // Every pass, not only the first: the pages the pass before unmapped are handed
            // out first too, but a pass on them alone (no touch here after the first) measured
            // 1.59–1.64 µs a page against 1.50–1.53 with it, with wider intervals (2026-12-08,
            // three alternating runs each, docs/experiments.md).
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

        pub(super) fn note_populate(&mut self, elapsed: Duration, faults: i64) {
            self.populate_ns.push(ns_per_page(elapsed, self.pages));
            self.populate_minflt
                .push(faults as f64 / self.pages.max(1) as f64);
        }
    }

    pub(super) fn median_or_nan(values: &[f64]) -> f64 {
        median(values).unwrap_or(f64::NAN)
    }

    impl Routine for AnonTouch {
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            if ops > self.pages as u64 {
                return Err(RoutineError::Check(format!(
                    "a batch of {ops} pages does not fit the region of {} pages",
                    self.pages
                )));
            }
            self.retire();
            self.region = Some(self.map_region()?);
            Ok(())
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
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
                            "AnonHugePages of the region's mapping in the process's memory map after its \
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

    pub(super) fn setup_anon(p: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
        let pages = anon_pages(p) as usize;
        let thp = p.str("thp") == "on";
        let populate = match p.str("populate") {
            "map_populate" => Populate::Mmap,
            "madv_populate_write" => Populate::Madvise,
            _ => Populate::Off,
        };
        if populate != Populate::Off
            && let Some(reason) = platform::memory::populate_unsupported()
        {
            return Err(SetupError::Unsupported(reason));
        }
        if thp && let Some(reason) = thp_unavailable() {
            return Err(SetupError::Unsupported(reason));
        }
        let mode = platform::memory::thp_mode().ok();
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
}

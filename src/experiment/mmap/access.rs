//! The routine of mmap.access: one pass of the working-set walk per sample, with its costs as facts.

use super::*;
use crate::experiment::RoutineError;

// --- the routine ---

/// What the untimed steps of each pass cost, one entry per pass.
#[derive(Default)]
pub(super) struct PassCosts {
    pub(super) munmap_ns_per_page: Vec<f64>,
    pub(super) populate_ns_per_page: Vec<f64>,
    pub(super) populate_minflt: Vec<f64>,
    pub(super) prepare_ns_per_page: Vec<f64>,
    pub(super) prepare_oublock: Vec<f64>,
    pub(super) prepare_minflt: Vec<f64>,
    pub(super) prepare_majflt: Vec<f64>,
    pub(super) page_cache_share: Vec<f64>,
}

pub(super) struct Access {
    pub(super) backing: Backing,
    pub(super) populate: bool,
    pub(super) memset_msync: bool,
    pub(super) random: bool,
    pub(super) len: usize,
    /// The backing file (already unlinked), for the file backings.
    pub(super) file: Option<File>,
    pub(super) map: Option<Mapping>,
    /// The blocks of this pass, in the order walked.
    pub(super) order: Vec<u32>,
    pub(super) pass: u64,
    pub(super) evictor: Option<Evictor>,
    pub(super) costs: PassCosts,
}

pub(super) fn ns_per_page(start: Instant, pages: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / pages.max(1) as f64
}

impl Access {
    pub(super) fn populate_advice(&self) -> libc::c_int {
        if self.backing.shared() {
            crate::experiment::linux_only::MADV_POPULATE_READ
        } else {
            crate::experiment::linux_only::MADV_POPULATE_WRITE
        }
    }

    /// Release the previous pass's mapping and make this pass's.
    pub(super) fn remap(&mut self) -> Result<(), RoutineError> {
        let failed = |call: &str| {
            let call = call.to_string();
            move |source| RoutineError::Os { call, source }
        };
        if let Some(old) = self.map.take() {
            let pages = old.pages();
            let start = Instant::now();
            drop(old);
            self.costs
                .munmap_ns_per_page
                .push(ns_per_page(start, pages));
        }
        let map = Mapping::new(self.backing, self.len, self.file.as_ref())?;
        map.advise(crate::experiment::linux_only::MADV_NOHUGEPAGE)
            .map_err(failed("madvise(MADV_NOHUGEPAGE)"))?;
        if self.file.is_some() {
            let share = map.resident_share().map_err(failed("mincore"))?;
            self.costs.page_cache_share.push(share);
        }
        if self.populate {
            let before = rusage::this_process();
            let start = Instant::now();
            map.advise(self.populate_advice())
                .map_err(failed("madvise(MADV_POPULATE_*)"))?;
            self.costs
                .populate_ns_per_page
                .push(ns_per_page(start, map.pages()));
            let d = Rusage::delta(&before, &rusage::this_process());
            self.costs.populate_minflt.push(d.minflt as f64);
        }
        if self.memset_msync {
            let before = rusage::this_process();
            let start = Instant::now();
            // SAFETY: [base, base + len) is the walked region, inside the mapping.
            unsafe { std::ptr::write_bytes(map.base, 0x5a, self.len) };
            map.msync().map_err(failed("msync(MS_SYNC)"))?;
            self.costs
                .prepare_ns_per_page
                .push(ns_per_page(start, map.pages()));
            let d = Rusage::delta(&before, &rusage::this_process());
            self.costs.prepare_oublock.push(d.oublock as f64);
            self.costs.prepare_minflt.push(d.minflt as f64);
            self.costs.prepare_majflt.push(d.majflt as f64);
        }
        self.map = Some(map);
        Ok(())
    }
}

impl Routine for Access {
    fn prepare(&mut self, _ops: u64) -> Result<(), RoutineError> {
        self.remap()?;
        if self.random {
            let mut rng = Rng::new(ORDER_SEED.wrapping_add(self.pass));
            for i in (1..self.order.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.order.swap(i, j);
            }
        }
        self.pass += 1;
        if let Some(evictor) = &self.evictor {
            evictor.evict();
        }
        Ok(())
    }

    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        let expected = self.order.len() as u64 * OPS_PER_BLOCK;
        if ops != expected {
            return Err(RoutineError::Check(format!(
                "a sample is one pass of {expected} accesses, asked for {ops}"
            )));
        }
        let map = self.map.as_ref().ok_or("run without prepare: no mapping")?;
        let mut sum = 0u64;
        for &block in &self.order {
            // SAFETY: every block index is below len / BLOCK, so the block lies inside the
            // walked region.
            let start = unsafe { map.base.add(block as usize * BLOCK) };
            sum = sum.wrapping_add(walk_block(start));
        }
        black_box(sum);
        Ok(())
    }

    fn facts(&mut self) -> Vec<Fact> {
        let median = median_after_warmup;
        let c = &self.costs;
        let mut facts = vec![Fact::new(
            "munmap_ns_per_page",
            median(&c.munmap_ns_per_page),
            "ns/page",
            if self.backing == Backing::Malloc {
                "free() of the previous pass's block (glibc unmaps it), per page, median over passes"
            } else {
                "munmap of the previous pass's mapping, per page, median over passes"
            },
        )];
        if self.populate {
            facts.extend(self.populate_facts());
        }
        if self.memset_msync {
            facts.extend(self.prepare_facts());
        }
        if self.file.is_some() {
            facts.push(Fact::new(
                "page_cache_share",
                median(&c.page_cache_share),
                "fraction",
                "share of the file in the page cache (mincore) when a pass began, median over \
                 passes",
            ));
        }
        let resident = self.map.as_ref().and_then(Mapping::resident_kb);
        facts.push(Fact::new(
            "resident_kb",
            resident.unwrap_or(f64::NAN),
            "kB",
            "pages of the mapping resident after the last pass (mincore; for a file, in the \
             page cache)",
        ));
        facts
    }
}

impl Access {
    /// What the populate step cost before each pass.
    fn populate_facts(&self) -> Vec<Fact> {
        let median = median_after_warmup;
        let c = &self.costs;
        vec![
            Fact::new(
                "populate_ns_per_page",
                median(&c.populate_ns_per_page),
                "ns/page",
                format!(
                    "{} before each pass, per page, median over passes",
                    if self.backing.shared() {
                        "MADV_POPULATE_READ"
                    } else {
                        "MADV_POPULATE_WRITE"
                    }
                ),
            ),
            Fact::new(
                "populate_minflt",
                median(&c.populate_minflt),
                "faults",
                "minor faults the populate step took per pass (pre-faults count there, not in \
             the walk)",
            ),
        ]
    }

    /// What memset + msync cost before each pass.
    fn prepare_facts(&self) -> Vec<Fact> {
        let median = median_after_warmup;
        let c = &self.costs;
        vec![
            Fact::new(
                "prepare_ns_per_page",
                median(&c.prepare_ns_per_page),
                "ns/page",
                "memset of the region + msync(MS_SYNC), per page, median over passes",
            ),
            Fact::new(
                "prepare_oublock",
                median(&c.prepare_oublock),
                "blocks",
                "512-byte blocks charged to memset+msync per pass: Linux charges the task that \
             dirties a clean page, so pages the previous walk left dirty cost nothing here \
             unless the flusher cleaned them in between (the walk after msync is charged \
             the whole file)",
            ),
            Fact::new(
                "prepare_minflt",
                median(&c.prepare_minflt),
                "faults",
                "minor faults of memset+msync per pass",
            ),
            Fact::new(
                "prepare_majflt",
                median(&c.prepare_majflt),
                "faults",
                "major faults of memset+msync per pass",
            ),
        ]
    }
}

/// The median of a per-pass series without its first entry, which belongs to the warm-up
/// pass (it found the file uncached and clean).
fn median_after_warmup(xs: &[f64]) -> f64 {
    let rest = if xs.len() > 1 { &xs[1..] } else { xs };
    analysis::median(rest).unwrap_or(f64::NAN)
}

/// Whether this kernel has MADV_POPULATE_READ/WRITE (Linux 5.14).
pub(super) fn check_populate() -> Result<(), SetupError> {
    let probe = Anon::private(page_size())?;
    for (advice, name) in [
        (
            crate::experiment::linux_only::MADV_POPULATE_READ,
            "MADV_POPULATE_READ",
        ),
        (
            crate::experiment::linux_only::MADV_POPULATE_WRITE,
            "MADV_POPULATE_WRITE",
        ),
    ] {
        if let Err(e) = probe.advise(advice) {
            return Err(if e.raw_os_error() == Some(libc::EINVAL) {
                SetupError::Unsupported(format!(
                    "populate=true needs madvise({name}) (Linux 5.14 or later): {e}"
                ))
            } else {
                SetupError::Failed(format!("madvise({name}) failed: {e}"))
            });
        }
    }
    Ok(())
}

/// The backing file: created in the work directory, allocated with posix_fallocate, and
/// unlinked at once (it lives as long as the descriptor).
pub(super) fn backing_file(dir: &Path, len: usize, p: &Params) -> Result<File, SetupError> {
    let path = dir.join(FILE_NAME);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| SetupError::Failed(format!("creating {}: {e}", path.display())))?;
    // SAFETY: fallocate on our own open descriptor.
    let rc = unsafe {
        crate::experiment::linux_only::posix_fallocate(file.as_raw_fd(), len as libc::off_t)
    };
    let removed = std::fs::remove_file(&path);
    if rc != 0 {
        return Err(SetupError::Failed(format!(
            "posix_fallocate of {} in {} failed: {}; pass --dir on a file system with room",
            format_size(p.u64("size")),
            dir.display(),
            io::Error::from_raw_os_error(rc)
        )));
    }
    removed.map_err(|e| SetupError::Failed(format!("removing {}: {e}", path.display())))?;
    Ok(file)
}

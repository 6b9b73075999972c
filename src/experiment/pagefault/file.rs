//! `pagefault.file`: faults on a mapping of a file, with its pages in the page cache (minor
//! faults) or dropped from it (major faults: the pages come back from the device).
//!
//! One op is one 4 KiB page; one sample is one whole pass (`Batch::Fixed`): a load from
//! (`access=read`) or a store to (`access=write`) one byte of every page of a fresh
//! MAP_SHARED or MAP_PRIVATE mapping of the whole file, in address order.
//!
//! The file lives in the experiment's work directory (`--dir` chooses the file system). Setup
//! writes it (written, not fallocated, so its blocks exist on the device) and fsyncs it.
//! `prepare`, untimed and outside the sample's rusage, unmaps the previous pass's mapping
//! (the kernel does not evict mapped pages), fsyncs the file if the previous pass dirtied it
//! (`map=shared access=write`, so every pass dirties clean pages), with `cache=cold` drops
//! the file's pages with posix_fadvise(DONTNEED), maps the file afresh and asks mincore(2)
//! which of its pages are cached (`cached_share_at_start`).
//!
//! **What "warm" means.** How a file entered the page cache decides how many faults a pass
//! takes: the kernel keeps a file in folios as large as the writes or the readahead that
//! filled it, and a read fault maps the neighbouring cached pages too (fault-around), up to a
//! whole large folio on Linux 6.18 (FINDINGS: right after a large write, 0.05 µs/page against
//! 0.30 when its own faults filled it). Setup therefore drops the written file and faults it
//! back in through a mapping, one read per page: the warm cache is what a cold pass leaves,
//! with the folio sizes this machine's readahead chose. The figure per fault
//! (`ns_per_fault`, `faults_per_page`) is reported beside the figure per page.
//!
//! **Writes.** Fault-around serves read faults only. A write to MAP_PRIVATE copies the one page
//! into a new anonymous page (copy-on-write) and leaves the file alone: one fault per page. A
//! write to MAP_SHARED makes the cached folio holding the page dirty (`page_mkwrite`) and, on
//! Linux 6.18, maps the whole folio writable: one fault per page for a file in 4 KiB folios,
//! about one per folio otherwise (`faults_per_page`).
//!
//! **Memory-backed file systems** (tmpfs, ramfs) hold a file's only copy in the page cache:
//! DONTNEED cannot evict it, so `cache=cold` would measure the warm case under a cold name.
//! It is unsupported there, with the reason; `cache=warm` works.
//!
//! Each pass times itself with `Instant` and reads getrusage around the touch (two clock reads
//! and two system calls per pass of thousands of pages) for the per-fault figures.

use super::PAGE;
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::experiment::{Batch, ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup);

#[cfg(unix)]
/// The file's name in the work directory.
const FILE_NAME: &str = "pagefault.file";
#[cfg(unix)]
/// Bytes per write when setup lays the file out.
const WRITE_CHUNK: usize = 1 << 20;
/// The most pages one fault can map: a page table's worth (fault-around and a PMD-mapped
/// folio both stop at that boundary).
const PAGES_PER_PAGE_TABLE: f64 = 512.0;
/// 512-byte blocks per 4 KiB page, the unit of inblock/oublock.
const BLOCKS_PER_PAGE: f64 = (PAGE / 512) as f64;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "map",
        kind: ParamKind::Choice(&["shared", "private"]),
        default: "shared",
        help: "MAP_SHARED or MAP_PRIVATE (a write to a private page copies it: copy-on-write)",
    },
    ParamSpec {
        name: "cache",
        kind: ParamKind::Choice(&["warm", "cold"]),
        default: "warm",
        help: "`warm`: every page cached (minor faults); `cold`: the pages dropped with \
               posix_fadvise(DONTNEED) before each pass, so they come back from the device \
               (major faults; unsupported on tmpfs/ramfs, which cannot drop them)",
    },
    ParamSpec {
        name: "access",
        kind: ParamKind::Choice(&["read", "write"]),
        default: "read",
        help: "`read`: load one byte per page (fault-around maps cached neighbours too); \
               `write`: store one byte per page (private: one copy-on-write fault per page)",
    },
    ParamSpec {
        name: "size",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 16 << 30,
        },
        default: "64M",
        help: "the file, mapped whole and touched once per pass (16M with --quick; the \
               directory needs twice this free)",
    },
];

fn pages_per_pass(p: &Params) -> u64 {
    p.u64("size") / PAGE as u64
}

fn expectations(p: &Params) -> Vec<Expectation> {
    let write = p.str("access") == "write";
    let shared = p.str("map") == "shared";
    let mut list = fault_expectations(write, shared);
    list.extend(cache_expectations(p));
    list.extend(dirty_expectations(write, shared));
    list
}

/// How many faults a page takes: one copy-on-write fault for a private write, at most one
/// (fault-around, large folios) otherwise.
fn fault_expectations(write: bool, shared: bool) -> Vec<Expectation> {
    let mut list = Vec::new();
    if write && !shared {
        list.push(Expectation::new(
            Metric::Faults,
            Bound::Near {
                value: 1.0,
                tolerance: 0.01,
            },
            "a write to a MAP_PRIVATE page copies that one page into anonymous memory \
             (copy-on-write; no fault-around for writes): one fault per page",
        ));
    } else {
        list.push(Expectation::new(
            Metric::Faults,
            Bound::Below(1.01),
            if write {
                "a shared write fault maps the whole cached folio holding the page, writable \
                 (measured on Linux 6.18: 1 fault per page for 4 KiB folios, 0.17 after \
                 readahead filled the cache), so one fault per page at most"
            } else {
                "a read fault also maps cached neighbours (fault-around, 64 KiB by default) \
                 and whole large folios, so one fault per page at most (faults_per_page says \
                 how many)"
            },
        ));
        list.push(Expectation::new(
            Metric::Faults,
            Bound::AtLeast(1.0 / PAGES_PER_PAGE_TABLE),
            "a pass over a fresh mapping must fault: one fault maps at most one page table's \
             512 pages",
        ));
    }
    list
}

/// What the page cache holds at the start of a pass, and what is read from the device.
fn cache_expectations(p: &Params) -> Vec<Expectation> {
    let cold = p.str("cache") == "cold";
    let mut list = Vec::new();
    if cold {
        list.push(Expectation::new(
            Metric::Fact("cached_share_at_start"),
            Bound::Below(0.01),
            "posix_fadvise(DONTNEED), after an fsync and with nothing mapped, dropped the \
             file's pages; a file system that keeps them makes `cold` measure `warm`",
        ));
        // Ops per sample are the file's pages: one major fault per pass is 1/pages per op
        // (the bound sits just under it, clear of rounding).
        list.push(Expectation::new(
            Metric::Rusage("majflt"),
            Bound::AtLeast(0.999 / pages_per_pass(p).max(1) as f64),
            "each pass starts with nothing cached, so at least its first fault waits for the \
             device (readahead brings the following pages, whose faults stay minor)",
        ));
        list.push(Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Near {
                value: BLOCKS_PER_PAGE,
                tolerance: 0.4,
            },
            "every page is read back from the device once per pass: 8 blocks of 512 bytes",
        ));
    } else {
        list.push(Expectation::new(
            Metric::Fact("cached_share_at_start"),
            Bound::AtLeast(0.99),
            "the file stays in the page cache between passes",
        ));
        // In the typical pass: on a loaded machine another program's memory may still push
        // out a cached page and one pass read it back (one major fault and 8 blocks in 9,728
        // pages in CI, 2026-12-06, the cached share at the start checked), which leaves the
        // median pass warm; a file that is not cached breaks the claim in every pass.
        list.push(Expectation::new(
            Metric::TypicalRusage("majflt"),
            Bound::Below(0.0001),
            "every page is cached: no fault waits for the device",
        ));
        list.push(Expectation::new(
            Metric::TypicalRusage("inblock"),
            Bound::Below(0.01),
            "every page is cached: nothing is read from the device",
        ));
    }
    list
}

/// What is written to the device: only a shared write dirties the file.
fn dirty_expectations(write: bool, shared: bool) -> Vec<Expectation> {
    let mut list = Vec::new();
    if write && shared {
        list.push(Expectation::new(
            Metric::Fact("oublock_per_page"),
            Bound::Near {
                value: BLOCKS_PER_PAGE,
                tolerance: 0.4,
            },
            "each write fault dirties a page made clean by the fsync before the pass, and \
             the kernel charges its 8 blocks to the writer at that moment",
        ));
    } else {
        list.push(Expectation::new(
            Metric::Rusage("oublock"),
            Bound::Below(0.01),
            "nothing dirties the file: a read, or a MAP_PRIVATE write that copies the page",
        ));
    }
    list
}

pub static FILE: ExperimentInfo = ExperimentInfo::new(
    "pagefault.file",
    "file-backed minor fault: one byte read from each page of a fresh MAP_SHARED \
     mapping of a cached file (fault-around maps several pages per fault: see \
     faults_per_page, ns_per_fault); also MAP_PRIVATE, writes (a private write copies \
     the page) and cache=cold (major faults: the pages come back from the device)",
    "page",
    "user load/store → page fault → filemap_map_pages (fault-around) / filemap_fault; \
     write: do_shared_fault (page_mkwrite) or do_cow_fault (copy); cold: readahead \
     from the device",
    setup,
)
.params(PARAMS)
.ladder()
.work_dir()
.expectations(expectations)
.preflight(crate::experiment::fs::preflight_one)
.batch(Batch::Fixed(pages_per_pass))
.quick_params(&[("size", "16M")])
.cells(eq::Cells {
    linux: eq::noted(
        "first access to each page of a fresh mapping of a file",
        "cache=cold: posix_fadvise(DONTNEED) drops the pages",
    ),
    freebsd: eq::Cell::No(
        "not enabled yet: on FreeBSD 13.2 (tmpfs, in emulation) mincore(2) called 2.3% of \
             a cached file's pages resident at the start of a pass, so the warm claims cannot \
             be checked; and posix_fadvise(DONTNEED) only deactivates pages, so cache=cold \
             cannot be made",
    ),
    macos: super::NOT_YET_ON_MACOS,
    windows: super::LINUX_FLAGS_ON_WINDOWS,
});

/// The routine, POSIX's: a file laid out, mapped, touched, its cache read with mincore.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::analysis::median;
    use crate::experiment::{Context, Fact, Routine, RoutineError, SetupError};
    use crate::platform::mount::{Mount, mount_of};
    use std::fs::{File, OpenOptions};
    use std::io::{self, Write};
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;
    use std::time::Instant;

    /// A mapping of a whole file, unmapped when dropped.
    struct FileMap {
        ptr: *mut u8,
        len: usize,
    }

    impl FileMap {
        fn new(file: &File, len: usize, shared: bool) -> Result<FileMap, RoutineError> {
            let ptr =
                crate::platform::anon::map(len, shared, Some(file.as_fd())).map_err(|source| {
                    RoutineError::Os {
                        call: format!("mmap of the {len}-byte file"),
                        source,
                    }
                })?;
            Ok(FileMap { ptr, len })
        }

        /// How many of the mapping's pages are in the page cache (mincore(2)); `residency` is
        /// scratch space of one byte per page.
        fn cached_pages(&self, residency: &mut [u8]) -> Result<usize, RoutineError> {
            if residency.len() != self.len.div_ceil(PAGE) {
                return Err("mincore needs one byte per page of the mapping".into());
            }
            // SAFETY: the range is exactly this mapping; `residency` holds one byte per page.
            let rc =
                unsafe { libc::mincore(self.ptr.cast(), self.len, residency.as_mut_ptr().cast()) };
            if rc != 0 {
                return Err(RoutineError::last_os("mincore"));
            }
            Ok(residency.iter().filter(|&&b| b & 1 == 1).count())
        }
    }

    impl Drop for FileMap {
        fn drop(&mut self) {
            // SAFETY: unmapping exactly our own mapping, after its last use.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }

    /// Load one byte of each page of `map`, so every page is faulted in.
    fn read_every_page(map: &FileMap) {
        let mut sum = 0u8;
        for page in 0..map.len / PAGE {
            // SAFETY: `page * PAGE` is inside the mapping.
            sum = sum.wrapping_add(unsafe { map.ptr.add(page * PAGE).read_volatile() });
        }
        std::hint::black_box(sum);
    }

    fn fadvise_dontneed(file: &File) -> Result<(), RoutineError> {
        Ok(crate::platform::fscache::drop_file_cache(file.as_raw_fd())?)
    }

    /// This thread's (minor + major faults, oublock) so far (the process's where the system
    /// keeps no per-thread usage).
    fn thread_counts() -> (i64, i64) {
        let ru = crate::platform::rusage::this_thread()
            .unwrap_or_else(crate::platform::rusage::this_process);
        (ru.minflt + ru.majflt, ru.oublock)
    }

    /// What one timed pass measured.
    struct Pass {
        ns: f64,
        faults: i64,
        oublock: i64,
        /// Share of the file's pages cached when the pass began.
        cached: f64,
    }

    struct FileFaults {
        file: File,
        len: usize,
        shared: bool,
        write: bool,
        cold: bool,
        /// Where the file lives, for the facts' notes.
        mount: Mount,
        map: Option<FileMap>,
        /// Whether `map` is fresh: mapped by `prepare` and not touched by a `run` yet.
        fresh: bool,
        /// The share of pages cached when `map` was made.
        cached: f64,
        /// Whether the last pass dirtied the file (a shared write), so it needs an fsync.
        dirty: bool,
        residency: Vec<u8>,
        passes: Vec<Pass>,
    }

    impl Routine for FileFaults {
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            if ops as usize * PAGE != self.len {
                return Err(RoutineError::Check(format!(
                    "a pass is {} pages, asked for {ops}",
                    self.len / PAGE
                )));
            }
            // Unmapped first: DONTNEED leaves mapped pages in the cache.
            self.map = None;
            if self.dirty {
                self.file
                    .sync_all()
                    .map_err(|e| format!("fsync failed: {e}"))?;
                self.dirty = false;
            }
            if self.cold {
                fadvise_dontneed(&self.file)?;
            }
            let map = FileMap::new(&self.file, self.len, self.shared)?;
            self.cached =
                map.cached_pages(&mut self.residency)? as f64 / self.residency.len() as f64;
            self.map = Some(map);
            self.fresh = true;
            Ok(())
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let map = self.map.as_ref().ok_or("run without prepare: no mapping")?;
            if !self.fresh || ops as usize * PAGE != map.len {
                return Err("run without a fresh mapping of the whole file from prepare".into());
            }
            self.fresh = false;
            let pages = ops as usize;
            let (faults0, oublock0) = thread_counts();
            let t0 = Instant::now();
            if self.write {
                for page in 0..pages {
                    // SAFETY: `page * PAGE` is inside the writable mapping.
                    unsafe { map.ptr.add(page * PAGE).write_volatile(1) };
                }
            } else {
                read_every_page(map);
            }
            let t1 = Instant::now();
            let (faults1, oublock1) = thread_counts();
            self.dirty = self.write && self.shared;
            self.passes.push(Pass {
                ns: (t1 - t0).as_nanos() as f64,
                faults: faults1 - faults0,
                oublock: oublock1 - oublock0,
                cached: self.cached,
            });
            Ok(())
        }

        /// Only figures that were measured: a fact that cannot be (oublock on a memory-backed file
        /// system) is left out and the note of `cached_share_at_start` says why.
        fn facts(&mut self) -> Vec<Fact> {
            let n = self.passes.len();
            if n == 0 {
                return Vec::new();
            }
            let pages = (self.len / PAGE) as f64;
            let mean = |f: fn(&Pass) -> f64| self.passes.iter().map(f).sum::<f64>() / n as f64;
            let total_faults: i64 = self.passes.iter().map(|p| p.faults).sum();
            let per_fault: Vec<f64> = self
                .passes
                .iter()
                .filter(|p| p.faults > 0)
                .map(|p| p.ns / p.faults as f64)
                .collect();
            let count_blocks = self.write && self.shared && !self.mount.memory_backed();
            let mut where_note = format!("file on {}", self.mount.describe());
            if self.write && self.shared && !count_blocks {
                where_note.push_str(
                    ", which keeps dirty pages in memory and charges no blocks for them: no \
                     oublock_per_page",
                );
            }
            let mut facts = vec![
                Fact::new(
                    "faults_per_page",
                    mean(|p| p.faults as f64) / pages,
                    "faults/page",
                    format!(
                        "minor + major faults of the touch (getrusage), {total_faults} over {n} passes"
                    ),
                ),
                Fact::new(
                    "cached_share_at_start",
                    mean(|p| p.cached),
                    "share",
                    format!(
                        "the file's pages in the page cache as a pass began (mincore), mean of {n} \
                         passes; {where_note}"
                    ),
                ),
            ];
            if let Some(ns) = median(&per_fault) {
                facts.push(Fact::new(
                    "ns_per_fault",
                    ns,
                    "ns/fault",
                    format!(
                        "a pass's time (Instant) over its faults: median of {} passes",
                        per_fault.len()
                    ),
                ));
            }
            if count_blocks {
                facts.push(Fact::new(
                    "oublock_per_page",
                    mean(|p| p.oublock as f64) / pages,
                    "blocks/page",
                    format!("blocks charged to the writing thread (getrusage), mean of {n} passes"),
                ));
            }
            facts
        }
    }

    /// Write `len` bytes of a pattern to a new file at `path` and fsync it.
    fn lay_out(path: &Path, len: usize) -> Result<File, SetupError> {
        let failed = |what: &str, e: io::Error| {
            SetupError::Failed(format!("{what} {}: {e}", path.display()))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| failed("creating", e))?;
        let chunk = vec![0xa5u8; WRITE_CHUNK];
        let mut left = len;
        while left > 0 {
            let n = left.min(WRITE_CHUNK);
            file.write_all(&chunk[..n])
                .map_err(|e| failed("writing", e))?;
            left -= n;
        }
        file.sync_all().map_err(|e| failed("fsync of", e))?;
        Ok(file)
    }

    pub(super) fn setup(p: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        let dir = ctx.work_dir.as_deref().ok_or_else(|| {
            SetupError::Failed("no work directory was created for this experiment".into())
        })?;
        let mount = mount_of(dir).map_err(|e| SetupError::Failed(e.to_string()))?;
        let cold = p.str("cache") == "cold";
        if cold && let Some(why) = crate::platform::fscache::cold_cache_unsupported() {
            return Err(SetupError::Unsupported(why));
        }
        if cold && mount.memory_backed() {
            return Err(SetupError::Unsupported(format!(
                "{}: a memory-backed file system holds the file's only copy in the page cache, so \
                 posix_fadvise(DONTNEED) cannot drop it and cache=cold would measure cache=warm; \
                 pass --dir on a disk-backed file system",
                mount.describe()
            )));
        }
        let pages = pages_per_pass(p) as usize;
        let len = pages * PAGE;
        let file = lay_out(&dir.join(FILE_NAME), len)?;
        if !cold {
            // The warm cache as a cold pass would leave it (see the module's notes): the
            // write's folios dropped, the pages faulted back in through a mapping.
            fadvise_dontneed(&file)?;
            read_every_page(&FileMap::new(&file, len, true)?);
        }
        Ok(Box::new(FileFaults {
            file,
            len,
            shared: p.str("map") == "shared",
            write: p.str("access") == "write",
            cold,
            mount,
            map: None,
            fresh: false,
            cached: f64::NAN,
            dirty: false,
            residency: vec![0; pages],
            passes: Vec::new(),
        }))
    }
}

#[cfg(all(test, unix))]
mod tests;

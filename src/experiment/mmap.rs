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

use std::fs::File;
use std::hint::black_box;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Instant;

use super::mapping::Anon;
use super::{Batch, Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::analysis::{self, rng::Rng};
use crate::experiment::params::{format_size, parse_size};
use crate::model::{Fact, Rusage};
use crate::platform::rusage;

/// Bytes per cache line the walk steps by.
const LINE: usize = 64;
/// Lines per block: 32 KiB, a typical L1D.
const LINES: usize = 512;
const BLOCK: usize = LINE * LINES;
/// Times each picked block is walked.
const WALKS: usize = 16;
/// Every `STORE_EVERY`th line is stored to, the others loaded from.
const STORE_EVERY: usize = 8;
/// Operations (line accesses) per block picked.
const OPS_PER_BLOCK: u64 = (LINES * WALKS) as u64;
/// Seed of the random block order; pass `n` uses `ORDER_SEED + n`.
const ORDER_SEED: u64 = 0x6D6D_6170;
/// The largest folio the page cache holds on x86-64 (PMD order): the fewest faults a fresh
/// shared file walk can take is one per this many bytes.
const MAX_FOLIO: usize = 2 << 20;
/// Free space a file backing needs besides the file.
const SLACK: u64 = 16 << 20;
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

    fn shared(self) -> bool {
        matches!(self, Backing::AnonShared | Backing::FileShared)
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
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

// --- the mapping of one pass ---

/// The memory of one pass, released when dropped (munmap, or free for malloc).
struct Mapping {
    /// Where the walk starts: the mapping's start, or the pointer malloc returned.
    base: *mut u8,
    /// The whole pages holding the walked bytes: what madvise, msync and mincore take.
    pages_start: *mut u8,
    pages_len: usize,
    malloc: bool,
}

impl Mapping {
    fn new(backing: Backing, len: usize, file: Option<&File>) -> Result<Mapping, String> {
        let page = page_size();
        if backing == Backing::Malloc {
            // SAFETY: malloc has no preconditions; the block is freed once, by Drop.
            let base = unsafe { libc::malloc(len) }.cast::<u8>();
            if base.is_null() {
                return Err(format!("malloc({len}) returned NULL"));
            }
            let start = base as usize / page * page;
            let end = (base as usize + len).next_multiple_of(page);
            return Ok(Mapping {
                base,
                pages_start: start as *mut u8,
                pages_len: end - start,
                malloc: true,
            });
        }
        let (share, fd) = match (backing.shared(), file) {
            (false, None) => (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1),
            (true, None) => (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1),
            (false, Some(f)) => (libc::MAP_PRIVATE, f.as_raw_fd()),
            (true, Some(f)) => (libc::MAP_SHARED, f.as_raw_fd()),
        };
        // SAFETY: a new mapping at an address the kernel picks; `fd` is open (or -1 for an
        // anonymous mapping) and the file is at least `len` bytes long.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                share,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {len} bytes failed: {}",
                io::Error::last_os_error()
            ));
        }
        Ok(Mapping {
            base: ptr.cast(),
            pages_start: ptr.cast(),
            pages_len: len,
            malloc: false,
        })
    }

    fn pages(&self) -> usize {
        self.pages_len / page_size()
    }

    fn advise(&self, advice: libc::c_int) -> io::Result<()> {
        // SAFETY: the range is whole pages of this mapping (of the malloc block's own
        // mapping, which M_MMAP_THRESHOLD guarantees).
        let rc = unsafe { libc::madvise(self.pages_start.cast(), self.pages_len, advice) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn msync(&self) -> io::Result<()> {
        // SAFETY: the range is whole pages of this mapping.
        let rc = unsafe { libc::msync(self.pages_start.cast(), self.pages_len, libc::MS_SYNC) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The share of the mapping's pages in memory (for a file mapping: in the page cache).
    fn resident_share(&self) -> io::Result<f64> {
        let mut vec = vec![0u8; self.pages()];
        // SAFETY: `vec` has one byte per page of the range, which is whole pages of ours.
        let rc =
            unsafe { libc::mincore(self.pages_start.cast(), self.pages_len, vec.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let resident = vec.iter().filter(|&&b| b & 1 == 1).count();
        Ok(resident as f64 / vec.len().max(1) as f64)
    }

    /// Resident pages of this mapping, in kB (mincore: for a file, in the page cache).
    fn resident_kb(&self) -> Option<f64> {
        let share = self.resident_share().ok()?;
        Some(share * self.pages_len as f64 / 1024.0)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.malloc {
            // SAFETY: `base` came from malloc and is freed once, here.
            unsafe { libc::free(self.base.cast()) };
        } else {
            // SAFETY: unmapping exactly the mapping this value owns, once.
            unsafe { libc::munmap(self.pages_start.cast(), self.pages_len) };
        }
    }
}

/// Walk one block: 16 times over its 512 lines, a store to every 8th line, loads from the
/// others. Returns the sum of the loaded bytes, so no load can be dropped.
#[inline(always)]
fn walk_block(block: *mut u8) -> u64 {
    let mut sum = 0u64;
    for walk in 0..WALKS {
        for group in 0..LINES / STORE_EVERY {
            // SAFETY: the block is BLOCK bytes inside the mapping (checked by the caller);
            // every offset here is below BLOCK.
            unsafe {
                let first = block.add(group * STORE_EVERY * LINE);
                first.write_volatile(walk as u8);
                for line in 1..STORE_EVERY {
                    sum = sum.wrapping_add(u64::from(first.add(line * LINE).read_volatile()));
                }
            }
        }
    }
    sum
}

// --- cold caches ---

/// The largest data or unified cache of `cpu` and the smallest line size, from sysfs
/// (CPUID's cache leaves are wrong on some VMs: FINDINGS).
fn largest_data_cache(cpu: usize) -> Option<(usize, usize)> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let read = |path: &Path| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mut largest = 0u64;
    let mut line = usize::MAX;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index")
            || read(&path.join("type")).as_deref() == Some("Instruction")
        {
            continue;
        }
        if let Some(size) = read(&path.join("size")).as_deref().and_then(parse_size) {
            largest = largest.max(size);
        }
        if let Some(l) = read(&path.join("coherency_line_size")).and_then(|l| l.parse().ok()) {
            line = line.min(l);
        }
    }
    let line = if line == usize::MAX { LINE } else { line };
    (largest > 0).then_some((largest as usize, line))
}

/// A resident buffer of twice the largest data cache, read line by line to evict the walk's
/// lines and translations before a pass.
struct Evictor {
    buf: Anon,
    line: usize,
}

impl Evictor {
    fn new(cpu: usize) -> Result<Evictor, SetupError> {
        let (cache, line) = largest_data_cache(cpu).ok_or_else(|| {
            SetupError::Unsupported(format!(
                "cold=true needs the cache sizes in /sys/devices/system/cpu/cpu{cpu}/cache, \
                 which this system does not describe"
            ))
        })?;
        let buf = Anon::private(2 * cache)?;
        // Written, not just mapped: reads of untouched anonymous memory all hit one zero page
        // and would evict nothing.
        // SAFETY: the whole mapping is ours.
        unsafe { std::ptr::write_bytes(buf.ptr(), 1, buf.len()) };
        Ok(Evictor { buf, line })
    }

    fn evict(&self) {
        let mut sum = 0u64;
        for off in (0..self.buf.len()).step_by(self.line) {
            // SAFETY: `off` is inside the buffer.
            sum = sum.wrapping_add(u64::from(unsafe {
                self.buf.ptr().add(off).read_volatile()
            }));
        }
        black_box(sum);
    }
}

// --- the routine ---

/// What the untimed steps of each pass cost, one entry per pass.
#[derive(Default)]
struct PassCosts {
    munmap_ns_per_page: Vec<f64>,
    populate_ns_per_page: Vec<f64>,
    populate_minflt: Vec<f64>,
    prepare_ns_per_page: Vec<f64>,
    prepare_oublock: Vec<f64>,
    prepare_minflt: Vec<f64>,
    prepare_majflt: Vec<f64>,
    page_cache_share: Vec<f64>,
}

struct Access {
    backing: Backing,
    populate: bool,
    memset_msync: bool,
    random: bool,
    len: usize,
    /// The backing file (already unlinked), for the file backings.
    file: Option<File>,
    map: Option<Mapping>,
    /// The blocks of this pass, in the order walked.
    order: Vec<u32>,
    pass: u64,
    evictor: Option<Evictor>,
    costs: PassCosts,
}

fn ns_per_page(start: Instant, pages: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / pages.max(1) as f64
}

impl Access {
    fn populate_advice(&self) -> libc::c_int {
        if self.backing.shared() {
            libc::MADV_POPULATE_READ
        } else {
            libc::MADV_POPULATE_WRITE
        }
    }

    /// Release the previous pass's mapping and make this pass's.
    fn remap(&mut self) -> Result<(), String> {
        if let Some(old) = self.map.take() {
            let pages = old.pages();
            let start = Instant::now();
            drop(old);
            self.costs
                .munmap_ns_per_page
                .push(ns_per_page(start, pages));
        }
        let map = Mapping::new(self.backing, self.len, self.file.as_ref())?;
        map.advise(libc::MADV_NOHUGEPAGE)
            .map_err(|e| format!("madvise(MADV_NOHUGEPAGE) failed: {e}"))?;
        if self.file.is_some() {
            let share = map
                .resident_share()
                .map_err(|e| format!("mincore failed: {e}"))?;
            self.costs.page_cache_share.push(share);
        }
        if self.populate {
            let before = rusage::this_process();
            let start = Instant::now();
            map.advise(self.populate_advice())
                .map_err(|e| format!("madvise(MADV_POPULATE_*) failed: {e}"))?;
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
            map.msync()
                .map_err(|e| format!("msync(MS_SYNC) failed: {e}"))?;
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
    fn prepare(&mut self, _ops: u64) -> Result<(), String> {
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

    fn run(&mut self, ops: u64) -> Result<(), String> {
        let expected = self.order.len() as u64 * OPS_PER_BLOCK;
        if ops != expected {
            return Err(format!(
                "a sample is one pass of {expected} accesses, asked for {ops}"
            ));
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
        // The first entry of every series belongs to the warm-up pass, which found the file
        // uncached and clean: leave it out.
        let median = |xs: &[f64]| {
            let rest = if xs.len() > 1 { &xs[1..] } else { xs };
            analysis::median(rest).unwrap_or(f64::NAN)
        };
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
            facts.push(Fact::new(
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
            ));
            facts.push(Fact::new(
                "populate_minflt",
                median(&c.populate_minflt),
                "faults",
                "minor faults the populate step took per pass (pre-faults count there, not in \
                 the walk)",
            ));
        }
        if self.memset_msync {
            facts.push(Fact::new(
                "prepare_ns_per_page",
                median(&c.prepare_ns_per_page),
                "ns/page",
                "memset of the region + msync(MS_SYNC), per page, median over passes",
            ));
            facts.push(Fact::new(
                "prepare_oublock",
                median(&c.prepare_oublock),
                "blocks",
                "512-byte blocks charged to memset+msync per pass: Linux charges the task that \
                 dirties a clean page, so pages the previous walk left dirty cost nothing here \
                 unless the flusher cleaned them in between (the walk after msync is charged \
                 the whole file)",
            ));
            facts.push(Fact::new(
                "prepare_minflt",
                median(&c.prepare_minflt),
                "faults",
                "minor faults of memset+msync per pass",
            ));
            facts.push(Fact::new(
                "prepare_majflt",
                median(&c.prepare_majflt),
                "faults",
                "major faults of memset+msync per pass",
            ));
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

/// Whether this kernel has MADV_POPULATE_READ/WRITE (Linux 5.14).
fn check_populate() -> Result<(), SetupError> {
    let probe = Anon::private(page_size())?;
    for (advice, name) in [
        (libc::MADV_POPULATE_READ, "MADV_POPULATE_READ"),
        (libc::MADV_POPULATE_WRITE, "MADV_POPULATE_WRITE"),
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
fn backing_file(dir: &Path, len: usize, p: &Params) -> Result<File, SetupError> {
    let path = dir.join(FILE_NAME);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| SetupError::Failed(format!("creating {}: {e}", path.display())))?;
    // SAFETY: fallocate on our own open descriptor.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
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

fn setup(p: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let backing = Backing::of(p);
    let populate = p.str("populate") == "true";
    let memset_msync = p.str("prepare") == "memset_msync";
    let blocks = blocks(p);
    let len = usize::try_from(blocks * BLOCK as u64)
        .map_err(|_| SetupError::Failed("size does not fit this address space".into()))?;
    if populate {
        check_populate()?;
    }
    let file = if backing.file() {
        let dir = ctx.work_dir.as_deref().ok_or_else(|| {
            SetupError::Failed("no work directory was created for this experiment".into())
        })?;
        if backing == Backing::FileShared && memset_msync {
            let mount = crate::platform::mount::mount_of(dir).map_err(SetupError::Failed)?;
            if mount.memory_backed() {
                return Err(SetupError::Unsupported(format!(
                    "{}: msync has no device to write back to on a memory-backed file system, \
                     so prepare=memset_msync would be a memset under a writeback's name; pass \
                     --dir on a disk-backed file system",
                    mount.describe()
                )));
            }
        }
        Some(backing_file(dir, len, p)?)
    } else {
        None
    };
    if backing == Backing::Malloc {
        set_mmap_threshold()?;
    }
    let evictor = if p.str("cold") == "true" {
        Some(Evictor::new(ctx.cpu.unwrap_or(0))?)
    } else {
        None
    };
    let order = (0..blocks)
        .map(|b| u32::try_from(b).map_err(|_| SetupError::Failed("too many blocks".into())))
        .collect::<Result<Vec<u32>, _>>()?;
    Ok(Box::new(Access {
        backing,
        populate,
        memset_msync,
        random: p.str("pattern") == "random",
        len,
        file,
        map: None,
        order,
        pass: 0,
        evictor,
        costs: PassCosts::default(),
    }))
}

/// Make glibc serve every allocation of 1 MiB or more (every region this experiment
/// allocates) with a fresh mmap, as it always does for a 1 GiB one; its dynamic threshold
/// would otherwise hand a smaller block back from the heap, already faulted.
#[cfg(target_env = "gnu")]
fn set_mmap_threshold() -> Result<(), SetupError> {
    // SAFETY: mallopt only changes the allocator's tuning.
    if unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20) } == 1 {
        Ok(())
    } else {
        Err(SetupError::Failed(
            "mallopt(M_MMAP_THRESHOLD) failed".into(),
        ))
    }
}

/// Other C libraries (musl) always serve large blocks with mmap.
#[cfg(not(target_env = "gnu"))]
fn set_mmap_threshold() -> Result<(), SetupError> {
    Ok(())
}

/// Refuse, before any worker starts, a region that would crowd the machine's memory (there
/// may be no swap) or a file that does not fit in `--dir`.
fn preflight(p: &Params, ctx: &Context) -> Result<(), String> {
    use procfs::Current;
    let size = p.u64("size");
    if let Some(available) = procfs::Meminfo::current()
        .ok()
        .and_then(|m| m.mem_available)
        && size > available / 2
    {
        return Err(format!(
            "size {} is more than half of MemAvailable ({}); pass a smaller --param size=",
            format_size(size),
            mib(available)
        ));
    }
    let Some(dir) = ctx.work_dir.as_deref().filter(|_| Backing::of(p).file()) else {
        return Ok(());
    };
    let free = super::fs::statvfs_free(dir)?;
    if free < size + SLACK {
        return Err(format!(
            "needs {} free in {} for its {} file but only {} is free; pass --dir on a larger \
             file system or a smaller --param size=",
            mib(size + SLACK),
            dir.display(),
            format_size(size),
            mib(free)
        ));
    }
    Ok(())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn expectations(p: &Params) -> Vec<Expectation> {
    let backing = Backing::of(p);
    let populate = p.str("populate") == "true";
    let memset_msync = p.str("prepare") == "memset_msync";
    let one = per_page();
    let mut out = Vec::new();
    match (backing, populate, memset_msync) {
        (Backing::FileShared, _, true) => out.push(Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Near {
                value: one,
                tolerance: 0.01 * one,
            },
            "msync's writeback left every page mapped but write-protected: the first store to \
             each page takes one write-protect fault, so the kernel hears of the write \
             (page_mkwrite)",
        )),
        (Backing::FileShared, true, false) => out.push(Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Below(1.01 * one),
            "populated by read faults: at most one write-protect fault per page (one on a file \
             system that tracks dirty pages, such as ext4; none on tmpfs, which maps them \
             writable)",
        )),
        (Backing::FileShared, false, false) => {
            out.push(Expectation::new(
                Metric::Rusage("minflt"),
                Bound::Below(1.01 * one),
                "a fresh shared file mapping: at most one fault per page (Linux 6.x maps a \
                 whole large folio of the page cache at one write fault)",
            ));
            out.push(Expectation::new(
                Metric::Rusage("minflt"),
                Bound::AtLeast(0.99 * one * page_size() as f64 / MAX_FOLIO as f64),
                "every page of a fresh mapping must be faulted in: at least one fault per \
                 2 MiB, the largest folio of the page cache",
            ));
        }
        (_, true, _) | (_, _, true) => out.push(Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Below(0.01 * one),
            "every page was mapped writable before the walk (its faults count in prepare): \
             under 1% of a fault per page",
        )),
        (_, false, false) => out.push(Expectation::new(
            Metric::Rusage("minflt"),
            Bound::Near {
                value: one,
                tolerance: 0.01 * one,
            },
            "a fresh mapping with 4 KiB pages (MADV_NOHUGEPAGE), every page touched once per \
             pass, its first touch a store: one minor fault per page",
        )),
    }
    if !backing.file() {
        out.push(Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.001 * one),
            "anonymous memory is zero-filled, never read from a file: no major fault",
        ));
    }
    if backing == Backing::FileShared && memset_msync {
        // A page is 8 blocks of 512 bytes: size/512 blocks per pass.
        let blocks_per_op = one * page_size() as f64 / 512.0;
        out.push(Expectation::new(
            Metric::Rusage("oublock"),
            Bound::Near {
                value: blocks_per_op,
                tolerance: 0.1 * blocks_per_op,
            },
            "msync wrote the whole file back and left every page clean, so the walk dirties \
             every page again and is charged the whole file: size/512 blocks per pass (± 10%)",
        ));
    }
    out
}

pub static ACCESS: ExperimentInfo = ExperimentInfo {
    name: "mmap.access",
    os: crate::experiment::LINUX,
    summary: "working-set walk over a fresh mapping: blocks of 512 cache lines walked 16 \
              times (a store to every 8th line), per backing (malloc, anonymous, file) with \
              populate and memset+msync variants; one sample is one pass. File backings keep \
              the file's pages in the page cache between passes (only the mapping is fresh), \
              and pages the walk dirtied stay dirty until written back",
    op: "access",
    path: "user loads and stores to a mapping (a page fault at the first touch of each page; \
           no system call)",
    params: PARAMS,
    syscalls: &[],
    subtract_loop_overhead: false,
    default_suite: false,
    ladder: false,
    counters_in_samples: true,
    work_dir: true,
    expectations,
    setup,
    preflight: Some(preflight),
    batch: Batch::Fixed(pass_ops),
    sweep: &[],
    quick_params: &[("size", "128M")],
};

#[cfg(test)]
mod tests;

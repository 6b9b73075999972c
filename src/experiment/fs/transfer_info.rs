//! What the transfers must show (blocks read and written per buffer, by sync and cache mode) and their registry entries.

use super::*;

crate::experiment::unix_setups!(super::transfer => setup_write, setup_read, setup_copy, setup_random_read, setup_random_write);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Write,
    Read,
    Copy,
}

/// The fact of a routine that fsyncs every N writes: blocks charged per write over one whole
/// period that starts on a clean file and ends with its fsync. The kernel charges a write's
/// blocks (oublock) when it dirties a clean page (`folio_account_dirtied`), not when the
/// page reaches the disk, so within a period the early writes are charged and the late ones,
/// landing on pages already dirty, are not: a run of samples that is not a whole number of
/// periods (a --quick run is less than two) measures anything from near 0 to twice the
/// period's rate, depending on where in the period it starts and stops.
pub(crate) const PERIOD_OUBLOCK: &str = "oublock_per_write_whole_period";

pub(super) fn sync_of(params: &Params) -> &str {
    params.get("sync").unwrap_or("none")
}

pub(super) fn cold(params: &Params) -> bool {
    params.get("cache") == Some("cold")
}

/// Random cold reads drop the whole file every `pages/16` reads: at most 1/16 of the pages,
/// on average 1/32, are cached when a read comes.
pub(super) fn cold_random_period(pages: u64) -> u64 {
    (pages / 16).max(1)
}

// --- expectations of the transfers ---

/// Mean number of pages a buffer at offset `k * bufsize` spans, over the file's buffers
/// (the first million of them).
pub(crate) fn pages_spanned(size: u64, bufsize: u64, page: u64) -> f64 {
    let blocks = (size / bufsize.max(1)).clamp(1, 1 << 20);
    let total: u64 = (0..blocks)
        .map(|k| {
            let start = k * bufsize;
            (start + bufsize - 1) / page - start / page + 1
        })
        .sum();
    total as f64 / blocks as f64
}

pub(crate) fn near(value: f64, fraction: f64) -> Bound {
    Bound::Near {
        value,
        tolerance: value * fraction + 0.01,
    }
}

pub(super) const WHY_NONE: &str = "the file was written just before sampling and not synced, so its pages \
    are still dirty: a rewrite dirties no clean page and starts no device write (oublock is \
    charged at page-dirtying time). Judged on the median sample: the flusher may write the \
    pages back once when another program's writes push dirty memory over its threshold \
    (measured while cargo built beside a run: 1.6 blocks per op over all samples), and the \
    samples that rewrite them then show it; more in most samples means the writes go to the \
    device again and again";
pub(super) const WHY_END: &str = "the fsync at the end of each pass cleans every page, so each pass \
    dirties the whole file again: bufsize/512 blocks per op";
pub(super) const WHY_EACH: &str = "O_DSYNC writes every buffer through to the device: each op dirties \
    (and cleans) the whole pages it touches, page/512 blocks per page";
pub(super) const WHY_DIRECT: &str = "O_DIRECT sends exactly bufsize bytes to the device per op, bypassing \
    the page cache: bufsize/512 blocks";
pub(crate) const WHY_NO_READ: &str = "the data is in the page cache: a block read from the device means \
    pages were evicted (DAMON, reclaim) and the figure includes device reads";
pub(super) const WHY_COLD: &str = "the file's pages are dropped before each pass, so every byte comes from \
    the device once: bufsize/512 blocks per op";
pub(super) const WHY_COLD_RANDOM: &str = "readahead is off (POSIX_FADV_RANDOM) and the file's pages are \
    dropped every pages/16 reads, so nearly every read fetches the whole pages it touches \
    from the device (about 1/32 are still cached)";
pub(super) const WHY_END_RANDOM: &str = "between two fsyncs (one per N random writes) each page is dirtied \
    once at most: blocks per op = pages × page/512 × (1 − e^(−N·span/pages)) / N";

pub(crate) fn syscalls(value: f64) -> Expectation {
    Expectation::new(
        Metric::Counter("syscalls"),
        Bound::Near {
            value,
            tolerance: 0.05,
        },
        "the system calls one operation makes (plus its share of the once-per-pass call)",
    )
}

pub(crate) fn no_major_faults() -> Expectation {
    Expectation::new(
        Metric::Rusage("majflt"),
        Bound::Below(0.01),
        "pread/pwrite copy through the worker's own resident buffer: nothing is faulted in \
         from a file",
    )
}

/// The calls a transfer makes: its pread/pwrite once per buffer, and the call it makes once
/// per pass (or, random cold reads, every pages/16 buffers) at whatever rate the pass's length gives: the cold
/// reads' posix_fadvise, sync=end's fsync. That rate is the `syscalls` counter's to check
/// (its bound holds the share); claimed as any number, so a short pass (a 64-buffer file
/// makes it 1/64 per op) is no difference.
pub(crate) fn transfer_claims(params: &Params, kind: Kind) -> Vec<Claim> {
    let mut out = match kind {
        Kind::Read => crate::experiment::each(&["pread64"]),
        Kind::Write => crate::experiment::each(&["pwrite64"]),
        Kind::Copy => crate::experiment::each(&["pread64", "pwrite64"]),
    };
    if kind == Kind::Read && cold(params) {
        out.push(Claim::any_number("fadvise64"));
    }
    if kind != Kind::Read && sync_of(params) == "end" {
        out.push(Claim::any_number("fsync"));
    }
    out
}

pub(crate) fn transfer_expectations(params: &Params, kind: Kind, random: bool) -> Vec<Expectation> {
    let page = page_size();
    let size = params.u64("size");
    let bufsize = params.u64("bufsize").max(1);
    let blocks = (size / bufsize).max(1);
    let pages = (blocks * bufsize).div_ceil(page);
    let sectors = bufsize as f64 / 512.0;
    let page_sectors = page as f64 / 512.0;
    let span = pages_spanned(size, bufsize, page);
    let mut out = vec![no_major_faults()];
    let per_op_calls = if kind == Kind::Copy { 2.0 } else { 1.0 };
    let mut calls = per_op_calls;

    if kind == Kind::Read {
        if cold(params) {
            if random {
                let period = cold_random_period(pages);
                calls += 1.0 / period as f64;
                let full = span * page_sectors;
                // On average 1/32 of the pages are cached when a read comes.
                out.push(Expectation::new(
                    Metric::Rusage("inblock"),
                    near(full * (1.0 - 1.0 / 32.0), 0.1),
                    WHY_COLD_RANDOM,
                ));
            } else {
                calls += 1.0 / blocks as f64;
                out.push(Expectation::new(
                    Metric::Rusage("inblock"),
                    near(sectors, 0.1),
                    WHY_COLD,
                ));
            }
        } else {
            out.push(Expectation::new(
                Metric::Rusage("inblock"),
                Bound::Below(0.05 * sectors + 0.01),
                WHY_NO_READ,
            ));
        }
        out.push(syscalls(calls));
        return out;
    }

    // Write and copy.
    out.push(Expectation::new(
        Metric::Rusage("inblock"),
        Bound::Below(0.05 * sectors + 0.01),
        WHY_NO_READ,
    ));
    let (bound, why) = match sync_of(params) {
        "end" if random => {
            let n = blocks as f64;
            let dirtied = pages as f64 * (1.0 - (-n * span / pages as f64).exp());
            (near(dirtied * page_sectors / n, 0.15), WHY_END_RANDOM)
        }
        "end" => (near(sectors, 0.1), WHY_END),
        "each" => (near(span * page_sectors, 0.1), WHY_EACH),
        "direct" => (near(sectors, 0.1), WHY_DIRECT),
        _ => (Bound::Below(0.1 * sectors + 0.01), WHY_NONE),
    };
    let metric = if sync_of(params) == "none" {
        Metric::TypicalRusage("oublock")
    } else {
        Metric::Rusage("oublock")
    };
    out.push(Expectation::new(metric, bound, why));
    if sync_of(params) == "end" {
        calls += 1.0 / blocks as f64;
    }
    out.push(syscalls(calls));
    out
}

pub(super) fn write_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Write, false)
}
pub(super) fn read_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Read, false)
}
pub(super) fn copy_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Copy, false)
}
pub(super) fn random_read_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Read, true)
}
pub(super) fn random_write_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Write, true)
}

pub static WRITE: ExperimentInfo = ExperimentInfo::new(
    "fs.write",
    "sequential pwrite of one buffer, rewriting a file in place and wrapping around it; \
     sync says which layer it reaches (MB/s = bufsize / median)",
    "buffer",
    "pwrite (sync=each: O_DSYNC; direct: O_DIRECT; end: + one fsync per pass over the \
     file, not per op)",
    setup_write,
)
.params(&[SIZE_PARAM, BUFSIZE_PARAM, SYNC_PARAM])
.syscalls(|p| transfer_claims(p, Kind::Write))
.ladder()
.work_dir()
.expectations(write_expectations)
.preflight(preflight_one)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static READ: ExperimentInfo = ExperimentInfo::new(
    "fs.read",
    "sequential pread of one buffer, wrapping around a file; cache=cold drops its \
     pages before each pass (MB/s = bufsize / median)",
    "buffer",
    "pread (cold: + one posix_fadvise DONTNEED per pass over the file, not per op)",
    setup_read,
)
.params(&[SIZE_PARAM, BUFSIZE_PARAM, CACHE_PARAM])
.syscalls(|p| transfer_claims(p, Kind::Read))
.work_dir()
.expectations(read_expectations)
.preflight(preflight_one)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static COPY: ExperimentInfo = ExperimentInfo::new(
    "fs.copy",
    "sequential copy of one buffer from a cached file into another (UnixBench \
     fstime's copy), rewriting in place; sync as for fs.write",
    "buffer",
    "pread + pwrite (sync as fs.write: end adds one fsync per pass, not per op)",
    setup_copy,
)
.params(&[SIZE_PARAM, BUFSIZE_PARAM, SYNC_PARAM])
.syscalls(|p| transfer_claims(p, Kind::Copy))
.work_dir()
.expectations(copy_expectations)
.preflight(preflight_two)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static RANDOM_READ: ExperimentInfo = ExperimentInfo::new(
    "fs.random_read",
    "pread of one buffer at a random buffer-aligned offset (seeded); cache=cold \
     turns readahead off and keeps the file nearly uncached",
    "buffer",
    "pread (cold: POSIX_FADV_RANDOM at setup, + one posix_fadvise DONTNEED every \
     pages/16 reads)",
    setup_random_read,
)
.params(&[SIZE_PARAM, BUFSIZE_PARAM, CACHE_PARAM])
.syscalls(|p| transfer_claims(p, Kind::Read))
.work_dir()
.expectations(random_read_expectations)
.preflight(preflight_one)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static RANDOM_WRITE: ExperimentInfo = ExperimentInfo::new(
    "fs.random_write",
    "pwrite of one buffer at a random buffer-aligned offset (seeded), in place; \
     sync=end fsyncs every N writes (N = buffers in the file)",
    "buffer",
    "pwrite (sync as fs.write; end: one fsync per N writes, not per op)",
    setup_random_write,
)
.params(&[SIZE_PARAM, BUFSIZE_PARAM, SYNC_PARAM])
.syscalls(|p| transfer_claims(p, Kind::Write))
.work_dir()
.expectations(random_write_expectations)
.preflight(preflight_one)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

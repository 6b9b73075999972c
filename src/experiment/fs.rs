//! What file I/O costs, and which layer it reached. Tools like UnixBench's fstime/fsbuffer/
//! fsdisk or `sysbench fileio` time a freshly written file and report the page cache's speed
//! as the disk's. Here every variant names its layer (page cache, fsync at the end of a pass,
//! O_DSYNC on every write, O_DIRECT, a read after the file's pages were dropped) and proves
//! it with the worker's `inblock`/`oublock` (getrusage).
//!
//! Every experiment works in the private directory the parent creates under `--dir`
//! (`Context::work_dir`) and removes afterwards, also when the worker is killed.
//!
//! **What the block counters count** (Linux task I/O accounting, proc(5) `write_bytes`,
//! verified on ext4/Linux 6.18): `oublock` is charged when a task *dirties* a clean page
//! (512-byte units, a whole page at a time) and when it submits an O_DIRECT write; writeback
//! itself, by the flusher or by fsync, charges nobody more. Rewriting a page that is still
//! dirty charges nothing: that write coalesces in the cache. `inblock` is charged when a
//! read is submitted to the device, readahead included. Hence:
//! - `sync=none` rewrites a file whose pages are all still dirty (written just before
//!   sampling, not synced): ≈ 0 blocks per op. Pages written back during the run (the
//!   flusher writes back what has been dirty for 30 s) would show up here.
//! - `sync=end` fsyncs at the end of each pass, so the next pass dirties every page again:
//!   `bufsize/512` per op. `sync=each` (O_DSYNC) dirties and cleans the pages of every
//!   write: whole pages per op. `sync=direct` submits exactly `bufsize` per op.
//! - `cache=cold` reads after the file's pages were dropped: `bufsize/512` per op over a
//!   pass; `cache=warm`: ≈ 0.
//!
//! **Operations under wrap-around.** The harness picks the batch size and calls `run(ops)`
//! again and again, so every routine keeps a position and wraps around its file: one op is
//! one `bufsize` buffer (`pread`/`pwrite` at the current offset). Whatever happens once per
//! pass (the fsync of `sync=end`, the cache drop of `cache=cold`) is done by the op that
//! ends the pass, so a figure is the mean cost of a buffer *including its share* of that
//! once-per-pass work (fsync/N for N buffers per pass). Files are rewritten in place: the
//! blocks were allocated in setup, so no figure includes block allocation or file growth.
//!
//! **fs.create.** Only `run(ops)` is timed and it must be repeatable forever, so a directory
//! cannot fill or empty between samples without that work being timed. The op is therefore
//! the steady state of a directory that holds `files` files throughout (pre-created in
//! setup): create a new file (O_CREAT|O_EXCL, write `filesize` bytes, close) and unlink the
//! oldest. O_EXCL and unlink fail loudly, so each op provably created one file and removed
//! one. Splitting the pair with a baseline (a create or an unlink timed elsewhere) was tried
//! and is wrong on ext4: creating a file whose inode is new costs ~330 µs here, against
//! ~20 µs for a create+unlink pair that recycles the inode it just freed. There is no
//! `fs.delete` until the harness can prepare files untimed (docs/experiments.md).

use crate::platform::mount;

use std::collections::VecDeque;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::mapping::Anon;
use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::rng::Rng;
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::experiment::params::format_size;

// --- parameters ---

const SIZE_PARAM: ParamSpec = ParamSpec {
    name: "size",
    kind: ParamKind::Size {
        min: 64 << 10,
        max: 1 << 42,
    },
    default: "64M",
    help: "size of the file the buffers wrap around (the directory needs twice this free)",
};

const BUFSIZE_PARAM: ParamSpec = ParamSpec {
    name: "bufsize",
    kind: ParamKind::Size {
        min: 1,
        max: 64 << 20,
    },
    default: "4096",
    help: "bytes per read/write: one operation (UnixBench fsbuffer 256, fstime 1024, fsdisk 4096)",
};

const SYNC_PARAM: ParamSpec = ParamSpec {
    name: "sync",
    kind: ParamKind::Choice(&["none", "end", "each", "direct"]),
    default: "none",
    help: "none: page cache only; end: fsync at the end of each pass; each: O_DSYNC; \
           direct: O_DIRECT",
};

const CACHE_PARAM: ParamSpec = ParamSpec {
    name: "cache",
    kind: ParamKind::Choice(&["warm", "cold"]),
    default: "warm",
    help: "warm: the file is in the page cache; cold: its pages are dropped \
           (posix_fadvise DONTNEED) before each pass",
};

const FILESIZE_PARAM: ParamSpec = ParamSpec {
    name: "filesize",
    kind: ParamKind::Size {
        min: 0,
        max: 1 << 20,
    },
    default: "0",
    help: "bytes written into each new file (lmbench lat_fs: 0, 1K, 4K, 10K)",
};

const FILES_PARAM: ParamSpec = ParamSpec {
    name: "files",
    kind: ParamKind::Int {
        min: 1,
        max: 1_000_000,
    },
    default: "1000",
    help: "files the directory holds throughout",
};

const FSYNC_BUFSIZE_PARAM: ParamSpec = ParamSpec {
    name: "bufsize",
    kind: ParamKind::Size {
        min: 512,
        max: 1 << 20,
    },
    default: "4096",
    help: "bytes written before each fsync",
};

/// Free space a transfer experiment needs besides its files.
const SLACK: u64 = 16 << 20;

// --- small system helpers ---

fn page_size() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

fn cpath(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", path.display()))
}

fn os_err(what: &str) -> String {
    format!("{what} failed: {}", io::Error::last_os_error())
}

/// A file descriptor closed on drop.
struct Fd(libc::c_int);

impl Fd {
    fn open(path: &Path, flags: libc::c_int) -> io::Result<Fd> {
        let c = cpath(path).map_err(io::Error::other)?;
        // SAFETY: `c` is a valid NUL-terminated path; the mode is read only with O_CREAT.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(Fd(fd))
        }
    }

    fn fsync(&self) -> Result<(), String> {
        // SAFETY: fsync on our own open descriptor.
        if unsafe { libc::fsync(self.0) } != 0 {
            return Err(os_err("fsync"));
        }
        Ok(())
    }

    fn fadvise(&self, advice: libc::c_int) -> Result<(), String> {
        // SAFETY: posix_fadvise on our own descriptor, whole file; it returns the error.
        let rc = unsafe { libc::posix_fadvise(self.0, 0, 0, advice) };
        if rc != 0 {
            return Err(format!(
                "posix_fadvise failed: {}",
                io::Error::from_raw_os_error(rc)
            ));
        }
        Ok(())
    }

    /// One pread/pwrite of exactly `len` bytes at `offset`; a short transfer is an error.
    fn transfer(&self, write: bool, buf: *mut u8, len: usize, offset: u64) -> io::Result<()> {
        // SAFETY: `buf` points to at least `len` bytes of our own mapping (callers pass the
        // routine's buffer, whose length is at least `len`).
        let n = unsafe {
            if write {
                libc::pwrite(self.0, buf.cast(), len, offset as libc::off_t)
            } else {
                libc::pread(self.0, buf.cast(), len, offset as libc::off_t)
            }
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n as usize != len {
            return Err(io::Error::other(format!(
                "short {}: {n} of {len} bytes at offset {offset}",
                if write { "pwrite" } else { "pread" }
            )));
        }
        Ok(())
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptor once.
        unsafe { libc::close(self.0) };
    }
}

fn failed(what: &str) -> impl FnOnce(io::Error) -> SetupError + '_ {
    move |e| SetupError::Failed(format!("{what}: {e}"))
}

/// The work directory, after `syncfs` on its file system: what earlier work left to do
/// (dirty data, a journal commit, the discards of freed blocks on a `discard` mount) is
/// done before this experiment measures. Measured here: fs.create after the transfer
/// experiments had removed their 64 MiB files cost 275 µs per op instead of 23 µs, while
/// ext4 committed and discarded the freed blocks.
fn work_dir(ctx: &Context) -> Result<&Path, SetupError> {
    let dir = ctx.work_dir.as_deref().ok_or_else(|| {
        SetupError::Failed("no work directory was created for this experiment".into())
    })?;
    let fd = Fd::open(dir, libc::O_RDONLY | libc::O_DIRECTORY)
        .map_err(failed("opening the work directory"))?;
    // SAFETY: syncfs on our own open descriptor.
    if unsafe { libc::syncfs(fd.0) } != 0 {
        return Err(SetupError::Failed(os_err("syncfs")));
    }
    Ok(dir)
}

/// The mount of the work directory; on a memory-backed file system `needs_device` variants
/// are unsupported: they would measure the page cache again under a device's name.
fn check_device(dir: &Path, needs_device: Option<&str>) -> Result<mount::Mount, SetupError> {
    let m = mount::mount_of(dir).map_err(SetupError::Failed)?;
    if let Some(what) = needs_device
        && m.memory_backed()
    {
        return Err(SetupError::Unsupported(format!(
            "{}: a memory-backed file system has no device, so {what} would measure the page \
             cache again; pass --dir on a disk-backed file system",
            m.describe()
        )));
    }
    Ok(m)
}

/// Write `len` bytes of a pattern to a new file at `path` in writes of `chunk` bytes,
/// optionally fsync it.
///
/// The chunk matters: the page cache keeps a file in folios as large as the writes that
/// filled it (ext4 has large folios on Linux 6.18), and dirtying any byte of a folio dirties,
/// charges to oublock and later writes back the whole folio. Measured here: after 1 MiB
/// writes, one 4 KiB O_DSYNC write cost 2048 blocks (1 MiB) of oublock. Files that the
/// experiment writes into are therefore laid out in writes of its own buffer size (at least a
/// page), as a program writing them with that buffer would have left them.
fn lay_out(path: &Path, len: u64, chunk: u64, sync: bool) -> Result<(), SetupError> {
    let what = format!("writing {}", path.display());
    let fd =
        Fd::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC).map_err(failed(&what))?;
    let chunk = chunk.clamp(page_size(), 1 << 20) as usize;
    let buf = Anon::private(chunk)?;
    // SAFETY: the mapping is `chunk` bytes long and ours.
    unsafe { std::ptr::write_bytes(buf.ptr(), 0xa5, chunk) };
    let mut off = 0;
    while off < len {
        let n = chunk.min((len - off) as usize);
        fd.transfer(true, buf.ptr(), n, off)
            .map_err(failed(&what))?;
        off += n as u64;
    }
    if sync {
        fd.fsync().map_err(SetupError::Failed)?;
    }
    Ok(())
}

/// Read a whole file once so it is in the page cache.
fn warm(fd: &Fd, len: u64) -> Result<(), SetupError> {
    let chunk = 1usize << 20;
    let buf = Anon::private(chunk)?;
    let mut off = 0;
    while off < len {
        let n = chunk.min((len - off) as usize);
        fd.transfer(false, buf.ptr(), n, off)
            .map_err(failed("warming the file"))?;
        off += n as u64;
    }
    Ok(())
}

/// Bytes free to an unprivileged user on the file system holding `dir`.
pub(super) fn statvfs_free(dir: &Path) -> Result<u64, String> {
    let c = cpath(dir)?;
    // SAFETY: an all-zero statvfs is a valid value to be overwritten.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid path and `st` a writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(os_err(&format!("statvfs of {}", dir.display())));
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// The room check of the transfer experiments: `copies` files of `size`, plus slack, must
/// fit, and a buffer must fit in the file.
fn room_for(params: &Params, ctx: &Context, copies: u64) -> Result<(), String> {
    let size = params.u64("size");
    let bufsize = params.u64("bufsize");
    if bufsize > size {
        return Err(format!(
            "bufsize {} is larger than size {}; pass a smaller --param bufsize= or a larger \
             --param size=",
            format_size(bufsize),
            format_size(size)
        ));
    }
    let Some(dir) = ctx.work_dir.as_deref() else {
        return Ok(());
    };
    let need = copies
        .saturating_mul(size)
        .saturating_add(size)
        .saturating_add(SLACK);
    let free = statvfs_free(dir)?;
    if free < need {
        return Err(format!(
            "needs {} free in {} for a {} file but only {} is free; pass --dir on a larger \
             file system or a smaller --param size=",
            human(need),
            dir.display(),
            format_size(size),
            human(free)
        ));
    }
    Ok(())
}

fn human(bytes: u64) -> String {
    let mib = bytes as f64 / (1u64 << 20) as f64;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

pub(super) fn preflight_one(params: &Params, ctx: &Context) -> Result<(), String> {
    room_for(params, ctx, 1)
}

fn preflight_two(params: &Params, ctx: &Context) -> Result<(), String> {
    room_for(params, ctx, 2)
}

// --- transfers: write, read, copy, random_read, random_write ---

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    Read,
    Copy,
}

/// Where the next buffer goes.
enum Order {
    /// Buffer after buffer, wrapping at the end of the file.
    Sequential,
    /// A uniformly random buffer-aligned offset.
    Random(Rng),
}

struct Transfer {
    kind: Kind,
    /// The file written (Write, Copy) or read (Read).
    fd: Fd,
    /// The source of a copy.
    src: Option<Fd>,
    buf: Anon,
    bufsize: usize,
    /// Buffers in the file.
    blocks: u64,
    order: Order,
    /// Ops since the last once-per-period event, and the period (`None`: no event).
    step: u64,
    every: Option<u64>,
    /// The event: fsync (sync=end) or drop the file's pages (cache=cold).
    fsync_at_event: bool,
    drop_at_event: bool,
}

impl Transfer {
    fn event(&self) -> Result<(), String> {
        if self.fsync_at_event {
            self.fd.fsync()?;
        }
        if self.drop_at_event {
            self.fd.fadvise(libc::POSIX_FADV_DONTNEED)?;
        }
        Ok(())
    }
}

impl Routine for Transfer {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            let block = match &mut self.order {
                Order::Sequential => self.step,
                Order::Random(rng) => rng.below(self.blocks),
            };
            let offset = block * self.bufsize as u64;
            let io = |fd: &Fd, write| fd.transfer(write, self.buf.ptr(), self.bufsize, offset);
            match self.kind {
                Kind::Write => io(&self.fd, true),
                Kind::Read => io(&self.fd, false),
                Kind::Copy => {
                    let src = self.src.as_ref().ok_or("copy without a source")?;
                    io(src, false).and_then(|()| io(&self.fd, true))
                }
            }
            .map_err(|e| format!("I/O at offset {offset}: {e}"))?;
            self.step += 1;
            let period = self.every.unwrap_or(self.blocks);
            if self.step >= period {
                self.step = 0;
                if self.every.is_some() {
                    self.event()?;
                }
            }
        }
        Ok(())
    }
}

fn sync_of(params: &Params) -> &str {
    params.get("sync").unwrap_or("none")
}

fn cold(params: &Params) -> bool {
    params.get("cache") == Some("cold")
}

fn setup_transfer(
    params: &Params,
    ctx: &Context,
    kind: Kind,
    random: bool,
) -> Result<Box<dyn Routine>, SetupError> {
    let dir = work_dir(ctx)?;
    let sync = sync_of(params);
    let cold = cold(params);
    let needs_device = match (sync, cold) {
        ("end", _) => Some("fsync"),
        ("each", _) => Some("O_DSYNC"),
        ("direct", _) => Some("O_DIRECT"),
        (_, true) => Some("a cold read"),
        _ => None,
    };
    let mount = check_device(dir, needs_device)?;
    let bufsize = params.u64("bufsize");
    let blocks = params.u64("size") / bufsize.max(1);
    if bufsize == 0 || blocks == 0 {
        return Err(SetupError::Failed(format!(
            "bufsize {bufsize} does not fit in size {}",
            params.u64("size")
        )));
    }
    let len = blocks * bufsize;
    let page = page_size();
    let buf = Anon::private(bufsize.div_ceil(page) as usize * page as usize)?;
    // SAFETY: the buffer is ours and at least `bufsize` bytes long.
    unsafe { std::ptr::write_bytes(buf.ptr(), 0x5a, bufsize as usize) };

    let path = dir.join("data");
    // A file written to stays dirty for sync=none (rewrites then dirty no clean page); every
    // other file is synced so it is on the device and its pages can be dropped.
    let writes = kind != Kind::Read;
    let chunk = if writes { bufsize } else { 1 << 20 };
    lay_out(&path, len, chunk, !(writes && sync == "none"))?;
    let mut src = None;
    if kind == Kind::Copy {
        let src_path = dir.join("source");
        lay_out(&src_path, len, 1 << 20, true)?;
        let fd = Fd::open(&src_path, libc::O_RDONLY).map_err(failed("opening the source"))?;
        warm(&fd, len)?;
        src = Some(fd);
    }

    let mut flags = if writes {
        libc::O_WRONLY
    } else {
        libc::O_RDONLY
    };
    match sync {
        "each" if writes => flags |= libc::O_DSYNC,
        "direct" if writes => flags |= libc::O_DIRECT,
        _ => {}
    }
    let fd = match Fd::open(&path, flags) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && flags & libc::O_DIRECT != 0 => {
            return Err(SetupError::Unsupported(format!(
                "{}: the file system refuses O_DIRECT (open: {e})",
                mount.describe()
            )));
        }
        Err(e) => {
            return Err(SetupError::Failed(format!(
                "opening {}: {e}",
                path.display()
            )));
        }
    };
    if flags & libc::O_DIRECT != 0 {
        // A trial write: O_DIRECT wants buffer, length and offset aligned to the device's
        // logical block size, which only a transfer reveals.
        if let Err(e) = fd.transfer(true, buf.ptr(), bufsize as usize, 0) {
            return Err(if e.raw_os_error() == Some(libc::EINVAL) {
                SetupError::Unsupported(format!(
                    "{}: O_DIRECT refuses a {bufsize}-byte write (EINVAL): the length must be a \
                     multiple of the device's logical block size; pass --param bufsize=4096",
                    mount.describe()
                ))
            } else {
                SetupError::Failed(format!("O_DIRECT trial write: {e}"))
            });
        }
    }
    if kind == Kind::Read {
        if cold {
            if random {
                fd.fadvise(libc::POSIX_FADV_RANDOM)
                    .map_err(SetupError::Failed)?;
            }
            fd.fadvise(libc::POSIX_FADV_DONTNEED)
                .map_err(SetupError::Failed)?;
        } else {
            warm(&fd, len)?;
        }
    }
    let pages = len.div_ceil(page);
    let (every, fsync_at_event, drop_at_event) = if sync == "end" && writes {
        (Some(blocks), true, false)
    } else if cold && random {
        (Some(cold_random_period(pages)), false, true)
    } else if cold {
        (Some(blocks), false, true)
    } else {
        (None, false, false)
    };
    Ok(Box::new(Transfer {
        kind,
        fd,
        src,
        buf,
        bufsize: bufsize as usize,
        blocks,
        order: if random {
            Order::Random(Rng::new(0x0f5_5eed))
        } else {
            Order::Sequential
        },
        step: 0,
        every,
        fsync_at_event,
        drop_at_event,
    }))
}

/// Random cold reads drop the whole file every `pages/16` reads: at most 1/16 of the pages,
/// on average 1/32, are cached when a read comes.
fn cold_random_period(pages: u64) -> u64 {
    (pages / 16).max(1)
}

fn setup_write(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Write, false)
}
fn setup_read(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Read, false)
}
fn setup_copy(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Copy, false)
}
fn setup_random_read(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Read, true)
}
fn setup_random_write(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Write, true)
}

// --- expectations of the transfers ---

/// Mean number of pages a buffer at offset `k * bufsize` spans, over the file's buffers
/// (the first million of them).
fn pages_spanned(size: u64, bufsize: u64, page: u64) -> f64 {
    let blocks = (size / bufsize.max(1)).clamp(1, 1 << 20);
    let total: u64 = (0..blocks)
        .map(|k| {
            let start = k * bufsize;
            (start + bufsize - 1) / page - start / page + 1
        })
        .sum();
    total as f64 / blocks as f64
}

fn near(value: f64, fraction: f64) -> Bound {
    Bound::Near {
        value,
        tolerance: value * fraction + 0.01,
    }
}

const WHY_NONE: &str = "the file was written just before sampling and not synced, so its pages \
    are still dirty: a rewrite dirties no clean page and starts no device write (oublock is \
    charged at page-dirtying time). More means pages were written back during the run (the \
    flusher, reclaim) and the writes began device writes again";
const WHY_END: &str = "the fsync at the end of each pass cleans every page, so each pass \
    dirties the whole file again: bufsize/512 blocks per op";
const WHY_EACH: &str = "O_DSYNC writes every buffer through to the device: each op dirties \
    (and cleans) the whole pages it touches, page/512 blocks per page";
const WHY_DIRECT: &str = "O_DIRECT sends exactly bufsize bytes to the device per op, bypassing \
    the page cache: bufsize/512 blocks";
const WHY_NO_READ: &str = "the data is in the page cache: a block read from the device means \
    pages were evicted (DAMON, reclaim) and the figure includes device reads";
const WHY_COLD: &str = "the file's pages are dropped before each pass, so every byte comes from \
    the device once: bufsize/512 blocks per op";
const WHY_COLD_RANDOM: &str = "readahead is off (POSIX_FADV_RANDOM) and the file's pages are \
    dropped every pages/16 reads, so nearly every read fetches the whole pages it touches \
    from the device (about 1/32 are still cached)";
const WHY_END_RANDOM: &str = "between two fsyncs (one per N random writes) each page is dirtied \
    once at most: blocks per op = pages × page/512 × (1 − e^(−N·span/pages)) / N";

fn syscalls(value: f64) -> Expectation {
    Expectation::new(
        Metric::Counter("syscalls"),
        Bound::Near {
            value,
            tolerance: 0.05,
        },
        "the system calls one operation makes (plus its share of the once-per-pass call)",
    )
}

fn no_major_faults() -> Expectation {
    Expectation::new(
        Metric::Rusage("majflt"),
        Bound::Below(0.01),
        "pread/pwrite copy through the worker's own resident buffer: nothing is faulted in \
         from a file",
    )
}

fn transfer_expectations(params: &Params, kind: Kind, random: bool) -> Vec<Expectation> {
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
    out.push(Expectation::new(Metric::Rusage("oublock"), bound, why));
    if sync_of(params) == "end" {
        calls += 1.0 / blocks as f64;
    }
    out.push(syscalls(calls));
    out
}

fn write_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Write, false)
}
fn read_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Read, false)
}
fn copy_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Copy, false)
}
fn random_read_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Read, true)
}
fn random_write_expectations(p: &Params) -> Vec<Expectation> {
    transfer_expectations(p, Kind::Write, true)
}

pub static WRITE: ExperimentInfo = ExperimentInfo {
    name: "fs.write",
    os: crate::experiment::LINUX,
    summary: "sequential pwrite of one buffer, rewriting a file in place and wrapping around it; \
              sync says which layer it reaches (MB/s = bufsize / median)",
    op: "buffer",
    path: "pwrite (sync=each: O_DSYNC; direct: O_DIRECT; end: + fsync per pass)",
    params: &[SIZE_PARAM, BUFSIZE_PARAM, SYNC_PARAM],
    syscalls: &["pwrite64", "fsync"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: true,
    expectations: write_expectations,
    setup: setup_write,
    preflight: Some(preflight_one),
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

pub static READ: ExperimentInfo = ExperimentInfo {
    name: "fs.read",
    os: crate::experiment::LINUX,
    summary: "sequential pread of one buffer, wrapping around a file; cache=cold drops its \
              pages before each pass (MB/s = bufsize / median)",
    op: "buffer",
    path: "pread (cold: + posix_fadvise DONTNEED per pass)",
    params: &[SIZE_PARAM, BUFSIZE_PARAM, CACHE_PARAM],
    syscalls: &["pread64", "fadvise64"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: true,
    expectations: read_expectations,
    setup: setup_read,
    preflight: Some(preflight_one),
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

pub static COPY: ExperimentInfo = ExperimentInfo {
    name: "fs.copy",
    os: crate::experiment::LINUX,
    summary: "sequential copy of one buffer from a cached file into another (UnixBench \
              fstime's copy), rewriting in place; sync as for fs.write",
    op: "buffer",
    path: "pread + pwrite (sync as fs.write)",
    params: &[SIZE_PARAM, BUFSIZE_PARAM, SYNC_PARAM],
    syscalls: &["pread64", "pwrite64", "fsync"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: true,
    expectations: copy_expectations,
    setup: setup_copy,
    preflight: Some(preflight_two),
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

pub static RANDOM_READ: ExperimentInfo = ExperimentInfo {
    name: "fs.random_read",
    os: crate::experiment::LINUX,
    summary: "pread of one buffer at a random buffer-aligned offset (seeded); cache=cold \
              turns readahead off and keeps the file nearly uncached",
    op: "buffer",
    path: "pread (cold: POSIX_FADV_RANDOM, + DONTNEED every pages/16 reads)",
    params: &[SIZE_PARAM, BUFSIZE_PARAM, CACHE_PARAM],
    syscalls: &["pread64", "fadvise64"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: true,
    expectations: random_read_expectations,
    setup: setup_random_read,
    preflight: Some(preflight_one),
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

pub static RANDOM_WRITE: ExperimentInfo = ExperimentInfo {
    name: "fs.random_write",
    os: crate::experiment::LINUX,
    summary: "pwrite of one buffer at a random buffer-aligned offset (seeded), in place; \
              sync=end fsyncs every N writes (N = buffers in the file)",
    op: "buffer",
    path: "pwrite (sync as fs.write)",
    params: &[SIZE_PARAM, BUFSIZE_PARAM, SYNC_PARAM],
    syscalls: &["pwrite64", "fsync"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: true,
    expectations: random_write_expectations,
    setup: setup_random_write,
    preflight: Some(preflight_one),
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- fs.fsync ---

/// Filebench's writefsync: overwrite `bufsize` bytes at offset 0 of an allocated file, then
/// fsync.
struct WriteFsync {
    fd: Fd,
    buf: Anon,
    bufsize: usize,
}

impl Routine for WriteFsync {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            self.fd
                .transfer(true, self.buf.ptr(), self.bufsize, 0)
                .map_err(|e| format!("pwrite: {e}"))?;
            self.fd.fsync()?;
        }
        Ok(())
    }
}

fn setup_fsync(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let dir = work_dir(ctx)?;
    check_device(dir, Some("fsync"))?;
    let bufsize = params.u64("bufsize");
    let path = dir.join("fsync");
    lay_out(&path, bufsize.max(page_size()), bufsize, true)?;
    let fd = Fd::open(&path, libc::O_WRONLY).map_err(failed("opening the file"))?;
    let buf = Anon::private(bufsize.div_ceil(page_size()) as usize * page_size() as usize)?;
    Ok(Box::new(WriteFsync {
        fd,
        buf,
        bufsize: bufsize as usize,
    }))
}

fn fsync_expectations(params: &Params) -> Vec<Expectation> {
    let page = page_size();
    let bufsize = params.u64("bufsize").max(1);
    let sectors = (bufsize.div_ceil(page) * page) as f64 / 512.0;
    vec![
        no_major_faults(),
        Expectation::new(
            Metric::Rusage("oublock"),
            near(sectors, 0.1),
            "fsync cleans the pages, so every write dirties its whole pages again: \
             page/512 blocks per page written",
        ),
        syscalls(2.0),
    ]
}

pub static FSYNC: ExperimentInfo = ExperimentInfo {
    name: "fs.fsync",
    os: crate::experiment::LINUX,
    summary: "overwrite bufsize bytes at the start of an allocated file, then fsync \
              (Filebench writefsync): the cost of making one small write durable",
    op: "write+fsync",
    path: "pwrite + fsync",
    params: &[FSYNC_BUFSIZE_PARAM],
    syscalls: &["pwrite64", "fsync"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    // Every fsync sleeps on the device twice or more; a task with perf events open pays
    // ~0.9 µs per switch (measured here), so counters are read in untimed batches.
    counters_in_samples: false,
    work_dir: true,
    expectations: fsync_expectations,
    setup: setup_fsync,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

// --- metadata: stat, open_close, rename, mkdir_rmdir ---

enum MetaOp {
    Stat(CString),
    OpenClose(CString),
    /// Renames `a` to `b`, then back: one rename per op.
    Rename {
        a: CString,
        b: CString,
        flip: bool,
    },
    MkdirRmdir(CString),
}

struct Meta(MetaOp);

impl Routine for Meta {
    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            // SAFETY: every pointer is a valid NUL-terminated path owned by `self`; `st` is
            // a writable stat buffer.
            unsafe {
                match &mut self.0 {
                    MetaOp::Stat(p) => {
                        let mut st: libc::stat = std::mem::zeroed();
                        if libc::stat(p.as_ptr(), &mut st) != 0 {
                            return Err(os_err("stat"));
                        }
                    }
                    MetaOp::OpenClose(p) => {
                        let fd = libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                        if fd < 0 {
                            return Err(os_err("open"));
                        }
                        libc::close(fd);
                    }
                    MetaOp::Rename { a, b, flip } => {
                        let (from, to) = if *flip { (&*b, &*a) } else { (&*a, &*b) };
                        if libc::rename(from.as_ptr(), to.as_ptr()) != 0 {
                            return Err(os_err("rename"));
                        }
                        *flip = !*flip;
                    }
                    MetaOp::MkdirRmdir(p) => {
                        if libc::mkdir(p.as_ptr(), 0o700) != 0 {
                            return Err(os_err("mkdir"));
                        }
                        if libc::rmdir(p.as_ptr()) != 0 {
                            return Err(os_err("rmdir"));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

fn meta_setup(
    ctx: &Context,
    make: fn(&Path) -> Result<MetaOp, String>,
) -> Result<Box<dyn Routine>, SetupError> {
    let dir = work_dir(ctx)?;
    Ok(Box::new(Meta(make(dir).map_err(SetupError::Failed)?)))
}

fn touch(path: &Path) -> Result<(), String> {
    Fd::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)
        .map(drop)
        .map_err(|e| format!("creating {}: {e}", path.display()))
}

fn setup_stat(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    meta_setup(ctx, |dir| {
        let p = dir.join("file");
        touch(&p)?;
        Ok(MetaOp::Stat(cpath(&p)?))
    })
}

fn setup_open_close(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    meta_setup(ctx, |dir| {
        let p = dir.join("file");
        touch(&p)?;
        Ok(MetaOp::OpenClose(cpath(&p)?))
    })
}

fn setup_rename(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    meta_setup(ctx, |dir| {
        let a = dir.join("a");
        touch(&a)?;
        Ok(MetaOp::Rename {
            a: cpath(&a)?,
            b: cpath(&dir.join("b"))?,
            flip: false,
        })
    })
}

fn setup_mkdir_rmdir(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    meta_setup(ctx, |dir| Ok(MetaOp::MkdirRmdir(cpath(&dir.join("d"))?)))
}

fn meta_expectations(calls: f64) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.01),
            "the directory and the inode are cached: a block read means they were evicted",
        ),
        Expectation::new(
            Metric::Faults,
            Bound::Below(0.01),
            "a path operation in a loop touches no new memory",
        ),
        syscalls(calls),
    ]
}

fn one_call(_: &Params) -> Vec<Expectation> {
    meta_expectations(1.0)
}
fn two_calls(_: &Params) -> Vec<Expectation> {
    meta_expectations(2.0)
}

macro_rules! meta_info {
    ($id:ident, $name:literal, $summary:literal, $op:literal, $path:literal, $calls:expr,
     $exp:ident, $setup:ident) => {
        pub static $id: ExperimentInfo = ExperimentInfo {
            name: $name,
            os: crate::experiment::LINUX,
            summary: $summary,
            op: $op,
            path: $path,
            params: &[],
            syscalls: $calls,
            subtract_loop_overhead: false,
            default_suite: true,
            ladder: false,
            counters_in_samples: true,
            work_dir: true,
            expectations: $exp,
            setup: $setup,
            preflight: None,
            batch: super::Batch::Sized,
            sweep: &[],
            quick_params: &[],
        };
    };
}

meta_info!(
    STAT,
    "fs.stat",
    "stat() of a file in the directory under test (a cached lookup of one component below it)",
    "call",
    "glibc stat (newfstatat)",
    &["newfstatat"],
    one_call,
    setup_stat
);
meta_info!(
    OPEN_CLOSE,
    "fs.open_close",
    "open(O_RDONLY) + close of a file in the directory under test",
    "open+close",
    "glibc open (openat) + close",
    &["openat", "close"],
    two_calls,
    setup_open_close
);
meta_info!(
    RENAME,
    "fs.rename",
    "rename() of a file within one directory, back and forth",
    "rename",
    "glibc rename",
    &["rename"],
    one_call,
    setup_rename
);
meta_info!(
    MKDIR_RMDIR,
    "fs.mkdir_rmdir",
    "mkdir() then rmdir() of one empty directory",
    "mkdir+rmdir",
    "glibc mkdir + rmdir",
    &["mkdir", "rmdir"],
    two_calls,
    setup_mkdir_rmdir
);

// --- fs.create ---

struct Lifecycle {
    dir: PathBuf,
    files: usize,
    /// Names (numbers) of the files in `dir`, oldest first.
    live: VecDeque<u64>,
    next: u64,
    data: Vec<u8>,
}

fn name(dir: &Path, n: u64) -> Result<CString, String> {
    cpath(&dir.join(format!("f{n:08}")))
}

fn create_file(dir: &Path, n: u64, data: &[u8]) -> Result<(), String> {
    let p = name(dir, n)?;
    // SAFETY: a valid path; O_EXCL makes the call fail if the name exists, so success
    // proves a new file was created.
    let fd = unsafe {
        libc::open(
            p.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd < 0 {
        return Err(os_err("open(O_CREAT|O_EXCL)"));
    }
    let mut result = Ok(());
    if !data.is_empty() {
        // SAFETY: `data` is a live slice of that length.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n != data.len() as isize {
            result = Err(os_err("write"));
        }
    }
    // SAFETY: our own descriptor, closed once.
    unsafe { libc::close(fd) };
    result
}

fn unlink_file(dir: &Path, n: u64) -> Result<(), String> {
    let p = name(dir, n)?;
    // SAFETY: a valid path.
    if unsafe { libc::unlink(p.as_ptr()) } != 0 {
        return Err(os_err("unlink"));
    }
    Ok(())
}

impl Lifecycle {
    fn create_next(&mut self) -> Result<(), String> {
        create_file(&self.dir, self.next, &self.data)?;
        self.live.push_back(self.next);
        self.next += 1;
        Ok(())
    }
}

/// `fs.create`: one op creates one new file. Before each timed batch, `prepare` unlinks the
/// oldest files so the batch ends with the directory holding `files` files again: the
/// deletions are neither timed nor in the sample's rusage (lmbench's lat_fs times creation
/// and deletion as separate passes for the same reason).
impl Routine for Lifecycle {
    fn prepare(&mut self, ops: u64) -> Result<(), String> {
        while !self.live.is_empty() && self.live.len() as u64 + ops > self.files as u64 {
            if let Some(old) = self.live.pop_front() {
                unlink_file(&self.dir, old)?;
            }
        }
        Ok(())
    }

    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            self.create_next()?;
        }
        Ok(())
    }
}

/// `fs.delete`: one op unlinks one file. Before each timed batch, `prepare` creates the
/// files the batch will remove (untimed, outside the sample's rusage), next to `files`
/// files that stay, so the directory is as full as for `fs.create`.
struct Deleter {
    dir: PathBuf,
    pending: VecDeque<u64>,
    next: u64,
    data: Vec<u8>,
}

impl Routine for Deleter {
    fn prepare(&mut self, ops: u64) -> Result<(), String> {
        while (self.pending.len() as u64) < ops {
            create_file(&self.dir, self.next, &self.data)?;
            self.pending.push_back(self.next);
            self.next += 1;
        }
        Ok(())
    }

    fn run(&mut self, ops: u64) -> Result<(), String> {
        for _ in 0..ops {
            let Some(n) = self.pending.pop_front() else {
                return Err("fs.delete: no file prepared to delete".into());
            };
            unlink_file(&self.dir, n)?;
        }
        Ok(())
    }
}

fn setup_delete(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let dir = work_dir(ctx)?.join("files");
    std::fs::create_dir(&dir).map_err(failed("creating a directory"))?;
    let data = vec![0xa5u8; params.u64("filesize") as usize];
    // The files that stay, named from the top of the range, apart from those prepared for
    // deletion (numbered from 0).
    for n in 0..params.u64("files").max(1) {
        create_file(&dir, u64::MAX - n, &data).map_err(SetupError::Failed)?;
    }
    Ok(Box::new(Deleter {
        dir,
        pending: VecDeque::new(),
        next: 0,
        data,
    }))
}

fn delete_expectations(_: &Params) -> Vec<Expectation> {
    let page = page_size();
    vec![
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.05),
            "the directory and inode tables are cached: a block read means they were evicted",
        ),
        Expectation::new(
            Metric::Rusage("oublock"),
            Bound::Below(page as f64 / 512.0),
            "an unlink dirties at most a directory or inode-table page now and then; the \
             file's own dirty data is dropped, not written",
        ),
        syscalls(1.0),
    ]
}

pub static DELETE: ExperimentInfo = ExperimentInfo {
    name: "fs.delete",
    os: crate::experiment::LINUX,
    summary: "unlink a file (created beforehand, untimed, with filesize bytes) in a directory \
              that holds `files` other files",
    op: "unlink",
    path: "glibc unlink",
    params: &[FILESIZE_PARAM, FILES_PARAM],
    syscalls: &["unlink"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: false,
    counters_in_samples: true,
    work_dir: true,
    expectations: delete_expectations,
    setup: setup_delete,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

fn setup_create(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let dir = work_dir(ctx)?.join("files");
    std::fs::create_dir(&dir).map_err(failed("creating a directory"))?;
    let mut routine = Lifecycle {
        dir,
        files: params.u64("files").max(1) as usize,
        live: VecDeque::new(),
        next: 0,
        data: vec![0xa5u8; params.u64("filesize") as usize],
    };
    // The steady state from the first op: the directory already holds `files` files.
    for _ in 0..routine.files {
        routine.create_next().map_err(SetupError::Failed)?;
    }
    Ok(Box::new(routine))
}

fn lifecycle_expectations(params: &Params) -> Vec<Expectation> {
    let page = page_size();
    let filesize = params.u64("filesize");
    // open, (write,) close: the unlinks happen in `prepare`, outside the counted batches.
    let calls = if filesize > 0 { 3.0 } else { 2.0 };
    vec![
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.05),
            "the directory and inode tables are cached: a block read means they were evicted",
        ),
        Expectation::new(
            Metric::Rusage("oublock"),
            Bound::Below((filesize.div_ceil(page) * page) as f64 / 512.0 + page as f64 / 512.0),
            "a new file dirties its own data pages (page/512 blocks each) and, now and then, a \
             metadata page (a directory or inode-table block: 0.3 per op measured on ext4 with \
             an empty file; 0 on a memory-backed file system); more than one page beyond the \
             data per op means the op wrote something else",
        ),
        syscalls(calls),
    ]
}

pub static CREATE: ExperimentInfo = ExperimentInfo {
    name: "fs.create",
    os: crate::experiment::LINUX,
    summary: "create a new file (O_CREAT|O_EXCL, write filesize bytes, close) in a directory \
              that holds `files` files (the oldest are unlinked between batches, untimed)",
    op: "create",
    path: "glibc open(O_CREAT|O_EXCL) + write + close",
    params: &[FILESIZE_PARAM, FILES_PARAM],
    syscalls: &["openat", "write", "close"],
    subtract_loop_overhead: false,
    default_suite: true,
    ladder: true,
    counters_in_samples: true,
    work_dir: true,
    expectations: lifecycle_expectations,
    setup: setup_create,
    preflight: None,
    batch: super::Batch::Sized,
    sweep: &[],
    quick_params: &[],
};

#[cfg(test)]
mod tests;

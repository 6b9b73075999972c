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

use super::{Claim, ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::equivalence as eq;

// What the routines (below and in the submodules) share, POSIX's.
#[cfg(unix)]
use {
    super::mapping::Anon,
    super::{Context, Routine, RoutineError, SetupError},
    crate::analysis::rng::Rng,
    crate::experiment::{params::format_size, refusal::Refusal},
    crate::platform::{fscache, mount},
    std::collections::VecDeque,
    std::ffi::{CStr, CString},
    std::io,
    std::path::{Path, PathBuf},
};

super::unix_setups!(pub(crate) system => ; preflights: preflight_one, preflight_two);

/// The transfers' routines, POSIX's.
#[cfg(unix)]
mod transfer;
// What the filemicro family shares with this one: the same mechanisms, one copy.
#[cfg(unix)]
pub(crate) use transfer::setup_transfer_every;
mod transfer_info;
pub use transfer_info::*;
mod meta;
pub use meta::*;
mod create;
pub use create::*;

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
#[cfg(unix)]
pub(crate) const SLACK: u64 = 16 << 20;

pub(crate) fn page_size() -> u64 {
    crate::platform::memory::page_size()
}

/// The family's system helpers and preflights, POSIX's: descriptors, paths, statvfs.
#[cfg(unix)]
mod system {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    pub(crate) fn cpath(path: &Path) -> Result<CString, RoutineError> {
        CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{} contains a NUL byte", path.display()).into())
    }

    /// A file descriptor closed on drop.
    pub(crate) struct Fd(pub(crate) libc::c_int);

    impl Fd {
        pub(crate) fn open(path: &Path, flags: libc::c_int) -> io::Result<Fd> {
            let c = cpath(path).map_err(io::Error::other)?;
            // SAFETY: `c` is a valid NUL-terminated path; the mode is read only with O_CREAT.
            let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
            if fd < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(Fd(fd))
            }
        }

        pub(crate) fn fsync(&self) -> Result<(), RoutineError> {
            // SAFETY: fsync on our own open descriptor.
            if unsafe { libc::fsync(self.0) } != 0 {
                return Err(RoutineError::last_os("fsync"));
            }
            Ok(())
        }

        /// Drop the file's clean pages from the cache (`platform::fscache::drop_file_cache`).
        pub(crate) fn drop_cache(&self) -> Result<(), RoutineError> {
            fscache::drop_file_cache(self.0).map_err(RoutineError::from)
        }

        /// Turn the file's readahead off (`platform::fscache::advise_random`).
        pub(crate) fn advise_random(&self) -> Result<(), RoutineError> {
            fscache::advise_random(self.0).map_err(RoutineError::from)
        }

        /// One pread/pwrite of exactly `len` bytes at `offset`; a short transfer is an error.
        pub(crate) fn transfer(
            &self,
            write: bool,
            buf: *mut u8,
            len: usize,
            offset: u64,
        ) -> io::Result<()> {
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

    pub(crate) fn failed(what: &str) -> impl FnOnce(io::Error) -> SetupError + '_ {
        move |e| SetupError::Failed(format!("{what}: {e}"))
    }

    /// The work directory, after its file system was synced
    /// (`platform::fscache::sync_file_system`): what earlier work left to do (dirty data, a
    /// journal commit, the discards of freed blocks on a `discard` mount) is done before this
    /// experiment measures. Measured here: fs.create after the transfer experiments had removed
    /// their 64 MiB files cost 275 µs per op instead of 23 µs, while ext4 committed and
    /// discarded the freed blocks.
    pub(crate) fn work_dir(ctx: &Context) -> Result<&Path, SetupError> {
        let dir = ctx.work_dir.as_deref().ok_or_else(|| {
            SetupError::Failed("no work directory was created for this experiment".into())
        })?;
        let fd = Fd::open(dir, libc::O_RDONLY | libc::O_DIRECTORY)
            .map_err(failed("opening the work directory"))?;
        fscache::sync_file_system(fd.0)
            .map_err(|e| SetupError::Failed(format!("syncfs failed: {e}")))?;
        Ok(dir)
    }

    /// The mount of the work directory; on a memory-backed file system `needs_device` variants
    /// are unsupported: they would measure the page cache again under a device's name.
    pub(crate) fn check_device(
        dir: &Path,
        needs_device: Option<&str>,
    ) -> Result<mount::Mount, SetupError> {
        let m = mount::mount_of(dir).map_err(|e| SetupError::Failed(e.to_string()))?;
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
    pub(crate) fn lay_out(path: &Path, len: u64, chunk: u64, sync: bool) -> Result<(), SetupError> {
        let what = format!("writing {}", path.display());
        let fd = Fd::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC)
            .map_err(failed(&what))?;
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
            fd.fsync()?;
        }
        Ok(())
    }

    /// Read a whole file once so it is in the page cache.
    pub(crate) fn warm(fd: &Fd, len: u64) -> Result<(), SetupError> {
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
    pub(crate) fn statvfs_free(dir: &Path) -> Result<u64, RoutineError> {
        let c = cpath(dir)?;
        // SAFETY: an all-zero statvfs is a valid value to be overwritten.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a valid path and `st` a writable statvfs.
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
            return Err(RoutineError::last_os(format!(
                "statvfs of {}",
                dir.display()
            )));
        }
        Ok(st.f_bavail as u64 * st.f_frsize as u64)
    }

    /// The room check of the transfer experiments: `copies` files of `size`, plus slack, must
    /// fit, and a buffer must fit in the file.
    pub(crate) fn room_for(params: &Params, ctx: &Context, copies: u64) -> Result<(), Refusal> {
        let size = params.u64("size");
        let bufsize = params.u64("bufsize");
        if bufsize > size {
            return Err(Refusal::Exceeds {
                param: "bufsize",
                value: format_size(bufsize),
                limit: "size",
                limit_value: format_size(size),
            });
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
            return Err(Refusal::Room {
                need,
                free,
                dir: dir.to_path_buf(),
                what: format!("a {} file", format_size(size)),
                shrink: Some("size"),
            });
        }
        Ok(())
    }

    pub(crate) fn preflight_one(params: &Params, ctx: &Context) -> Result<(), Refusal> {
        room_for(params, ctx, 1)
    }

    pub(crate) fn preflight_two(params: &Params, ctx: &Context) -> Result<(), Refusal> {
        room_for(params, ctx, 2)
    }
}
#[cfg(unix)]
pub(crate) use system::*;

/// Where `fs.*` run and how (the equivalence table's row).
pub(crate) const FS_FAMILY_CELLS: eq::Cells = eq::Cells {
    linux: eq::runs("O_DIRECT, posix_fadvise, syncfs, mountinfo"),
    freebsd: eq::Cell::No(
        "not enabled yet: FreeBSD has posix_fadvise and O_DIRECT (used by the backend), \
             but the cold-cache and sync expectations were written for Linux's page cache",
    ),
    macos: eq::Cell::No(
        "not enabled yet: F_NOCACHE/F_FULLFSYNC are in the backend; the cold-cache and \
             sync expectations were written for Linux's page cache",
    ),
    windows: eq::Cell::No(
        "not enabled yet: FILE_FLAG_NO_BUFFERING and FlushFileBuffers are Windows' means, \
             but the cold-cache and sync expectations were written for Linux's page cache",
    ),
};

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[
    &WRITE,
    &READ,
    &COPY,
    &RANDOM_READ,
    &RANDOM_WRITE,
    &CREATE,
    &DELETE,
    &STAT,
    &OPEN_CLOSE,
    &RENAME,
    &FSYNC,
    &MKDIR_RMDIR,
];

#[cfg(all(test, unix))]
mod tests;

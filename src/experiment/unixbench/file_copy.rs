//! unixbench.file_copy: UnixBench's "File Copy" tests (`fstime.c -c`): read `bufsize` bytes
//! from one file and write them to another, per loop; when the source reaches its end, both
//! files are rewound. The source is `maxblocks` KiB, as fstime's `-m` counts it (`max_buffs =
//! max_blocks * 1024 / bufsize` buffers): the index runs 1024 bytes × 2000 KiB, 256 × 500 and
//! 4096 × 8000 (`Run`'s `fstime`, `fsbuffer` and `fsdisk`), files of 2,000 buffers each.
//! Until 2026-11-29 oslab read `maxblocks` as a count of buffers, so its File Copy 4096 copied
//! a 32 MiB file where fstime copies 8 MiB (a C loop of the same copy, Intel VM: 1.7–1.8 µs a
//! loop with 32 MiB, 1.0–1.1 with 8 MiB, fstime 0.95–0.99) and File Copy 256 a quarter of
//! fstime's file (docs/unixbench.md).
//!
//! As fstime does, setup writes the source (its buffers of the bytes 0, 1, 2…) and
//! reads it once, so it is in the page cache before the copy starts; the copy then measures
//! the page cache, as UnixBench's does, unless memory is short. In timed passes (`--suite
//! unixbench`) every pass starts as fstime starts each time `Run` runs it: new files, a sync
//! and 4 s of sleep, 2 s of whole-file writes of the source, a sync and 4 s of sleep, 2 s of
//! reads, a sync and 3 s of sleep (scaled down for passes shorter than fstime's 30 s). That
//! start matters: the target's pages are then never older than the copy, so the kernel's
//! flusher, which writes back pages dirty for 30 s (`vm.dirty_expire_centisecs`), never
//! writes them back under a 30 s copy; files kept across passes had it writing while the copy
//! ran, 8–15% slower (docs/unixbench.md). KBps = bufsize / 1024 × loops per second,
//! UnixBench's count (it credits whole buffers copied).

use super::*;
use crate::experiment::refusal::Refusal;

crate::experiment::unix_setups!(routines => setup);

pub(super) const BUFSIZE_PARAM: ParamSpec = ParamSpec {
    name: "bufsize",
    kind: ParamKind::Int {
        min: 1,
        max: 1 << 20,
    },
    default: "1024",
    help: "bytes per read and per write (UnixBench: 1024, 256 or 4096)",
};

pub(super) const MAXBLOCKS_PARAM: ParamSpec = ParamSpec {
    name: "maxblocks",
    kind: ParamKind::Int {
        min: 1,
        max: 1 << 20,
    },
    default: "2000",
    help: "KiB in the source file, fstime's -m: the copy rewinds both files after \
           maxblocks × 1024 / bufsize buffers (UnixBench: 2000, 500 or 8000)",
};

/// fstime's `max_buffs`: the buffers in the source, `maxblocks` KiB of `bufsize` each
/// (rounded down, as fstime's integer division does).
pub(super) fn buffers(params: &Params) -> u64 {
    params.u64("maxblocks") * 1024 / params.u64("bufsize").max(1)
}

/// A source smaller than one buffer would leave nothing to copy (fstime would loop on
/// rewinds).
fn preflight(params: &Params, _: &Context) -> Result<(), Refusal> {
    if buffers(params) == 0 {
        return Err(Refusal::Exceeds {
            param: "bufsize",
            value: format!("{} bytes", params.u64("bufsize")),
            limit: "maxblocks",
            limit_value: format!("{} KiB (the source file)", params.u64("maxblocks")),
        });
    }
    Ok(())
}

/// The worker's calls per loop: a read and a write, plus once per pass of the source the
/// short read at its end and two lseeks.
pub(super) fn calls_per_loop(params: &Params) -> f64 {
    2.0 + 3.0 / buffers(params).max(1) as f64
}

fn expectations(params: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Counter("syscalls"),
            Bound::Near {
                value: calls_per_loop(params),
                tolerance: 0.05,
            },
            "one read and one write per loop, and a short read and two lseeks per pass of the \
             source",
        ),
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.01),
            "the source was just written and read, so it is in the page cache: reading it \
             from the device means memory was short and the figure is the disk's",
        ),
        no_major_faults(),
    ]
}

pub static FILE_COPY: ExperimentInfo = ExperimentInfo::new(
    "unixbench.file_copy",
    "UnixBench's File Copy: read bufsize bytes from one file and write them to \
     another, per loop, both rewound at the end of the maxblocks-KiB source",
    "loop",
    "libc read() and write() on two regular files in the work directory (page cache)",
    setup,
)
.params(&[BUFSIZE_PARAM, MAXBLOCKS_PARAM, PLACEMENT_FREE_SAME])
.syscalls(|_| crate::experiment::each(&["read", "write"]))
.outside_default_suite()
.work_dir()
.expectations(expectations)
.preflight(preflight)
.cells(crate::experiment::unixbench::UNIXBENCH_FAMILY_CELLS);

/// The routine, POSIX's: fstime's passes and its copy.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;
    use std::fs::File;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    /// The files, fstime's names (it appends its pid).
    const SOURCE: &str = "dummy0";
    const TARGET: &str = "dummy1";

    /// fstime's copy time in UnixBench's index (`-t 30`): the length its start is made for.
    const FSTIME_SECONDS: f64 = 30.0;

    struct FileCopy {
        source: File,
        target: File,
        buf: Vec<u8>,
        dir: PathBuf,
        blocks: u64,
    }

    /// A new, empty file `name` in `dir`, open for reading and writing: the old one (a previous
    /// pass's) is removed first, so that its pages and blocks are not reused.
    fn fresh(dir: &Path, name: &str) -> std::io::Result<File> {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
    }

    impl FileCopy {
        fn read_block(&mut self) -> Result<usize, RoutineError> {
            let fd = self.source.as_raw_fd();
            // SAFETY: `buf` is writable for its length.
            let n = unsafe { libc::read(fd, self.buf.as_mut_ptr().cast(), self.buf.len()) };
            if n < 0 {
                return Err(RoutineError::last_os("read of the source file"));
            }
            Ok(n as usize)
        }

        /// fstime's `w_test`: whole-file passes of writes to the source, rewinding after each,
        /// until `time` has passed (checked after each pass, as fstime's alarm flag is).
        fn write_for(&mut self, time: Duration) -> Result<(), RoutineError> {
            let start = Instant::now();
            loop {
                for _ in 0..self.blocks {
                    self.source
                        .write_all(&self.buf)
                        .map_err(|source| RoutineError::Os {
                            call: "write of the source file".into(),
                            source,
                        })?;
                }
                self.rewind()?;
                if start.elapsed() >= time {
                    return Ok(());
                }
            }
        }

        /// fstime's `r_test`: reads of the source, rewinding at its end, until `time` has passed.
        fn read_for(&mut self, time: Duration) -> Result<(), RoutineError> {
            let start = Instant::now();
            while start.elapsed() < time {
                if self.read_block()? != self.buf.len() {
                    self.rewind()?;
                }
            }
            Ok(())
        }

        fn rewind(&mut self) -> Result<(), RoutineError> {
            for (file, what) in [(&self.source, "source"), (&self.target, "target")] {
                // SAFETY: lseek on an open descriptor has no memory-safety preconditions.
                if unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_SET) } < 0 {
                    return Err(RoutineError::last_os(format!("lseek of the {what} file")));
                }
            }
            Ok(())
        }
    }

    impl Routine for FileCopy {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let out = self.target.as_raw_fd();
            for _ in 0..ops {
                let mut n = self.read_block()?;
                if n != self.buf.len() {
                    // The end of the source (fstime rewinds both files on a short read).
                    self.rewind()?;
                    n = self.read_block()?;
                    if n != self.buf.len() {
                        return Err(RoutineError::Check(format!(
                            "short read of {n} bytes after rewinding the source"
                        )));
                    }
                }
                // SAFETY: `buf` holds `n` readable bytes.
                let written = unsafe { libc::write(out, self.buf.as_ptr().cast(), n) };
                if written != n as isize {
                    return Err(RoutineError::last_os("write of the target file"));
                }
            }
            Ok(())
        }

        /// fstime's start (`main` and `-c`): new files, then `w_test(2)`, `r_test(2)` and the
        /// copy's own sync and sleep, each time scaled by `seconds` / 30 for shorter passes.
        fn before_pass(&mut self, seconds: f64) -> Result<(), RoutineError> {
            let scale = (seconds / FSTIME_SECONDS).clamp(0.0, 1.0);
            let secs = |s: f64| Duration::from_secs_f64(s * scale);
            let create = |name: &str| {
                fresh(&self.dir, name)
                    .map_err(|e| format!("cannot create {}: {e}", self.dir.join(name).display()))
            };
            (self.source, self.target) = (create(SOURCE)?, create(TARGET)?);
            let settle = crate::platform::sync_and_settle;
            settle(secs(2.0), secs(2.0));
            self.write_for(secs(2.0))?;
            settle(secs(2.0), secs(2.0));
            self.read_for(secs(2.0))?;
            settle(secs(2.0), secs(1.0));
            self.rewind()
        }
    }

    pub(super) fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        let dir = ctx.work_dir.as_ref().ok_or_else(|| {
            SetupError::Failed("the file copy needs a work directory, and none was created".into())
        })?;
        place(params, ctx)?;
        let bufsize = params.u64("bufsize") as usize;
        preflight(params, ctx).map_err(|e| SetupError::Failed(e.to_string()))?;
        let blocks = buffers(params);
        let failed = |what: &str, e: std::io::Error| SetupError::Failed(format!("{what}: {e}"));
        let open = |name: &str| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(dir.join(name))
                .map_err(|e| failed(&format!("cannot create {}", dir.join(name).display()), e))
        };
        let mut source = open(SOURCE)?;
        let target = open(TARGET)?;
        let buf: Vec<u8> = (0..bufsize).map(|i| (i & 0xff) as u8).collect();
        for _ in 0..blocks {
            source
                .write_all(&buf)
                .map_err(|e| failed("write of the source file", e))?;
        }
        source
            .seek(SeekFrom::Start(0))
            .map_err(|e| failed("lseek of the source file", e))?;
        let mut sink = Vec::with_capacity(bufsize * blocks as usize);
        source
            .read_to_end(&mut sink)
            .map_err(|e| failed("read of the source file", e))?;
        let mut copy = FileCopy {
            source,
            target,
            buf,
            dir: dir.clone(),
            blocks,
        };
        copy.rewind().map_err(|e| SetupError::Failed(e.into()))?;
        Ok(Box::new(copy))
    }
}

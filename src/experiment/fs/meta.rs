//! Metadata operations: fs.fsync after a small write, stat, open+close, rename, mkdir+rmdir.

use super::*;

crate::experiment::unix_setups!(routines => setup_fsync, setup_stat, setup_open_close, setup_rename, setup_mkdir_rmdir);
#[cfg(unix)]
pub(crate) use routines::open_close_routine;

// --- fs.fsync ---

pub(super) fn fsync_expectations(params: &Params) -> Vec<Expectation> {
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

pub static FSYNC: ExperimentInfo = ExperimentInfo::new(
    "fs.fsync",
    "overwrite bufsize bytes at the start of an allocated file, then fsync \
     (Filebench writefsync): the cost of making one small write durable",
    "write+fsync",
    "pwrite + fsync",
    setup_fsync,
)
.params(&[FSYNC_BUFSIZE_PARAM])
.syscalls(|_| crate::experiment::each(&["pwrite64", "fsync"]))
.ladder()
// Every fsync sleeps on the device twice or more; a task with perf events open pays
// ~0.9 µs per switch (measured here), so counters are read in untimed batches.
.counters_between_samples()
.work_dir()
.expectations(fsync_expectations)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

// --- metadata: stat, open_close, rename, mkdir_rmdir ---

pub(crate) fn meta_expectations(calls: f64) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.01),
            "the directory and the inode are cached: a block read means they were evicted",
        ),
        Expectation::new(
            Metric::TypicalRusage("minflt"),
            Bound::Below(0.01),
            "a path operation in a loop touches no new memory; judged on the median sample, \
             since the harness's own bookkeeping between samples faults now and then (measured \
             0.014 per op over all samples of fs.mkdir_rmdir in 1 run of 10)",
        ),
        syscalls(calls),
    ]
}

pub(super) fn one_call(_: &Params) -> Vec<Expectation> {
    meta_expectations(1.0)
}
pub(super) fn two_calls(_: &Params) -> Vec<Expectation> {
    meta_expectations(2.0)
}

pub static STAT: ExperimentInfo = ExperimentInfo::new(
    "fs.stat",
    "stat() of a file in the directory under test (a cached lookup of one component below it)",
    "call",
    "glibc stat (newfstatat)",
    setup_stat,
)
.syscalls(|_| crate::experiment::each(&["newfstatat"]))
.work_dir()
.expectations(one_call)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static OPEN_CLOSE: ExperimentInfo = ExperimentInfo::new(
    "fs.open_close",
    "open(O_RDONLY) + close of a file in the directory under test",
    "open+close",
    "glibc open (openat) + close",
    setup_open_close,
)
.syscalls(|_| crate::experiment::each(&["openat", "close"]))
.work_dir()
.expectations(two_calls)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static RENAME: ExperimentInfo = ExperimentInfo::new(
    "fs.rename",
    "rename() of a file within one directory, back and forth",
    "rename",
    "glibc rename",
    setup_rename,
)
.syscalls(|_| crate::experiment::each(&["rename"]))
.work_dir()
.expectations(one_call)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub static MKDIR_RMDIR: ExperimentInfo = ExperimentInfo::new(
    "fs.mkdir_rmdir",
    "mkdir() then rmdir() of one empty directory",
    "mkdir+rmdir",
    "glibc mkdir + rmdir",
    setup_mkdir_rmdir,
)
.syscalls(|_| crate::experiment::each(&["mkdir", "rmdir"]))
.work_dir()
.expectations(two_calls)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

/// The routines, POSIX's: a write and fsync, stat, open and close, rename, mkdir and rmdir.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;

    /// Filebench's writefsync: overwrite `bufsize` bytes at offset 0 of an allocated file, then
    /// fsync.
    pub(super) struct WriteFsync {
        pub(super) fd: Fd,
        pub(super) buf: Anon,
        pub(super) bufsize: usize,
    }

    impl Routine for WriteFsync {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                self.fd
                    .transfer(true, self.buf.ptr(), self.bufsize, 0)
                    .map_err(|e| format!("pwrite: {e}"))?;
                self.fd.fsync()?;
            }
            Ok(())
        }
    }

    pub(super) fn setup_fsync(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
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

    /// open() and close() of `path`, once per op (fs.open_close's loop), for an experiment that
    /// makes and removes its file itself (scale.open_close).
    pub(crate) fn open_close_routine(path: CString) -> Box<dyn Routine> {
        Box::new(Meta(MetaOp::OpenClose(path)))
    }

    pub(super) enum MetaOp {
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

    pub(super) struct Meta(MetaOp);

    impl Routine for Meta {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                // SAFETY: every pointer is a valid NUL-terminated path owned by `self`; `st` is
                // a writable stat buffer.
                unsafe {
                    match &mut self.0 {
                        MetaOp::Stat(p) => {
                            let mut st: libc::stat = std::mem::zeroed();
                            if libc::stat(p.as_ptr(), &mut st) != 0 {
                                return Err(RoutineError::last_os("stat"));
                            }
                        }
                        MetaOp::OpenClose(p) => {
                            let fd = libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                            if fd < 0 {
                                return Err(RoutineError::last_os("open"));
                            }
                            libc::close(fd);
                        }
                        MetaOp::Rename { a, b, flip } => {
                            let (from, to) = if *flip { (&*b, &*a) } else { (&*a, &*b) };
                            if libc::rename(from.as_ptr(), to.as_ptr()) != 0 {
                                return Err(RoutineError::last_os("rename"));
                            }
                            *flip = !*flip;
                        }
                        MetaOp::MkdirRmdir(p) => {
                            if libc::mkdir(p.as_ptr(), 0o700) != 0 {
                                return Err(RoutineError::last_os("mkdir"));
                            }
                            if libc::rmdir(p.as_ptr()) != 0 {
                                return Err(RoutineError::last_os("rmdir"));
                            }
                        }
                    }
                }
            }
            Ok(())
        }
    }

    pub(super) fn meta_setup(
        ctx: &Context,
        make: fn(&Path) -> Result<MetaOp, SetupError>,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let dir = work_dir(ctx)?;
        Ok(Box::new(Meta(make(dir)?)))
    }

    pub(super) fn touch(path: &Path) -> Result<(), SetupError> {
        Fd::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)
            .map(drop)
            .map_err(|e| SetupError::Failed(format!("creating {}: {e}", path.display())))
    }

    pub(super) fn setup_stat(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        meta_setup(ctx, |dir| {
            let p = dir.join("file");
            touch(&p)?;
            Ok(MetaOp::Stat(cpath(&p)?))
        })
    }

    pub(super) fn setup_open_close(
        _: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        meta_setup(ctx, |dir| {
            let p = dir.join("file");
            touch(&p)?;
            Ok(MetaOp::OpenClose(cpath(&p)?))
        })
    }

    pub(super) fn setup_rename(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
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

    pub(super) fn setup_mkdir_rmdir(
        _: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        meta_setup(ctx, |dir| Ok(MetaOp::MkdirRmdir(cpath(&dir.join("d"))?)))
    }
}

//! fs.create and fs.delete: files made or removed in a directory of `files` files, the other half prepared outside the timed region.

use super::*;

crate::experiment::unix_setups!(pub(crate) routines => setup_create, setup_delete);
#[cfg(unix)]
pub(crate) use routines::create_file_at;

// --- fs.create ---

pub(crate) fn delete_expectations(_: &Params) -> Vec<Expectation> {
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

pub static DELETE: ExperimentInfo = ExperimentInfo::new(
    "fs.delete",
    "unlink a file (created beforehand, untimed, with filesize bytes) in a directory \
     that holds `files` other files",
    "unlink",
    "glibc unlink",
    setup_delete,
)
.params(&[FILESIZE_PARAM, FILES_PARAM])
.syscalls(|_| crate::experiment::each(&["unlink"]))
.work_dir()
.expectations(delete_expectations)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

pub(crate) fn lifecycle_expectations(params: &Params) -> Vec<Expectation> {
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

/// open and close; the write only when there is something to write.
fn create_calls(params: &Params) -> Vec<crate::experiment::Claim> {
    if params.u64("filesize") > 0 {
        crate::experiment::each(&["openat", "write", "close"])
    } else {
        crate::experiment::each(&["openat", "close"])
    }
}

pub static CREATE: ExperimentInfo = ExperimentInfo::new(
    "fs.create",
    "create a new file (O_CREAT|O_EXCL, write filesize bytes, close) in a directory \
     that holds `files` files (the oldest are unlinked between batches, untimed)",
    "create",
    "glibc open(O_CREAT|O_EXCL) + write (filesize above 0) + close",
    setup_create,
)
.params(&[FILESIZE_PARAM, FILES_PARAM])
.syscalls(create_calls)
.ladder()
.work_dir()
.expectations(lifecycle_expectations)
.cells(crate::experiment::fs::FS_FAMILY_CELLS);

/// The routines, POSIX's: open(O_CREAT|O_EXCL), write, close; unlink.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;

    pub(crate) struct Lifecycle {
        pub(crate) dir: PathBuf,
        pub(crate) files: usize,
        /// Names (numbers) of the files in `dir`, oldest first.
        pub(crate) live: VecDeque<u64>,
        pub(crate) next: u64,
        pub(crate) data: Vec<u8>,
    }

    pub(crate) fn name(dir: &Path, n: u64) -> Result<CString, RoutineError> {
        cpath(&dir.join(format!("f{n:08}")))
    }

    pub(crate) fn create_file(dir: &Path, n: u64, data: &[u8]) -> Result<(), RoutineError> {
        create_file_at(&name(dir, n)?, data)
    }

    /// Creates the file `p` (which must not exist) with `data` in it.
    pub(crate) fn create_file_at(p: &CStr, data: &[u8]) -> Result<(), RoutineError> {
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
            return Err(RoutineError::last_os("open(O_CREAT|O_EXCL)"));
        }
        let mut result = Ok(());
        if !data.is_empty() {
            // SAFETY: `data` is a live slice of that length.
            let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
            if n != data.len() as isize {
                result = Err(RoutineError::last_os("write"));
            }
        }
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(fd) };
        result
    }

    pub(crate) fn unlink_file(dir: &Path, n: u64) -> Result<(), RoutineError> {
        let p = name(dir, n)?;
        // SAFETY: a valid path.
        if unsafe { libc::unlink(p.as_ptr()) } != 0 {
            return Err(RoutineError::last_os("unlink"));
        }
        Ok(())
    }

    impl Lifecycle {
        pub(crate) fn create_next(&mut self) -> Result<(), RoutineError> {
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
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            while !self.live.is_empty() && self.live.len() as u64 + ops > self.files as u64 {
                if let Some(old) = self.live.pop_front() {
                    unlink_file(&self.dir, old)?;
                }
            }
            Ok(())
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                self.create_next()?;
            }
            Ok(())
        }
    }

    /// `fs.delete`: one op unlinks one file. Before each timed batch, `prepare` creates the
    /// files the batch will remove (untimed, outside the sample's rusage), next to `files`
    /// files that stay, so the directory is as full as for `fs.create`.
    pub(crate) struct Deleter {
        pub(crate) dir: PathBuf,
        pub(crate) pending: VecDeque<u64>,
        pub(crate) next: u64,
        pub(crate) data: Vec<u8>,
    }

    impl Routine for Deleter {
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            while (self.pending.len() as u64) < ops {
                create_file(&self.dir, self.next, &self.data)?;
                self.pending.push_back(self.next);
                self.next += 1;
            }
            Ok(())
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                let Some(n) = self.pending.pop_front() else {
                    return Err("fs.delete: no file prepared to delete".into());
                };
                unlink_file(&self.dir, n)?;
            }
            Ok(())
        }
    }

    pub(crate) fn setup_delete(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let dir = work_dir(ctx)?.join("files");
        std::fs::create_dir(&dir).map_err(failed("creating a directory"))?;
        let data = vec![0xa5u8; params.u64("filesize") as usize];
        // The files that stay, named from the top of the range, apart from those prepared for
        // deletion (numbered from 0).
        for n in 0..params.u64("files").max(1) {
            create_file(&dir, u64::MAX - n, &data)?;
        }
        Ok(Box::new(Deleter {
            dir,
            pending: VecDeque::new(),
            next: 0,
            data,
        }))
    }

    pub(crate) fn setup_create(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
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
            routine.create_next()?;
        }
        Ok(Box::new(routine))
    }
}

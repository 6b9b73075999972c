//! The fileset personalities: createfiles and delete (fs's create and delete lifecycles with
//! Filebench's counts and sizes), statfile and openfiles (one call on a random file of a
//! fileset created in setup).

use super::*;

crate::experiment::unix_setups!(routines => setup_statfile, setup_openfiles; preflights: createfiles_room, fileset_room);

const NFILES_HELP: &str = "files in the fileset (Filebench entries; one flat directory here)";

const TREE_NFILES_HELP: &str = "files in the fileset (Filebench entries)";

/// Filebench's `meandirwidth` for statfile and openfiles, whose filesets are its trees.
const fn meandirwidth(default: &'static str) -> ParamSpec {
    ParamSpec {
        name: "meandirwidth",
        kind: ParamKind::Int {
            min: 2,
            max: 10_000_000,
        },
        default,
        help: "mean entries per directory of the fileset's tree (Filebench dirwidth): each \
               directory draws its width and depth as Filebench's do (gamma, shape 1.5, around \
               this width and ln(nfiles)/ln(width)), so a lookup walks as many directories",
    }
}

const FILESIZE_MAX: u64 = 1 << 20;

// --- createfiles and delete, on fs's lifecycles ---

/// fs's parameters for createfiles: the directory holds `nfiles × 50%` files throughout
/// (Filebench preallocates 50% of the entries and creates into the rest).
fn createfiles_fs(p: &Params) -> Params {
    let files = (p.u64("nfiles") / 2).max(1).to_string();
    Params::from_pairs(&[("files", &files), ("filesize", p.str("filesize"))])
}

fn setup_createfiles(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    fs::setup_create(&createfiles_fs(p), c)
}

fn createfiles_exp(p: &Params) -> Vec<Expectation> {
    fs::lifecycle_expectations(&createfiles_fs(p))
}

/// fs's parameters for delete: `nfiles` files stay beside those prepared for deletion.
fn delete_fs(p: &Params) -> Params {
    Params::from_pairs(&[("files", p.str("nfiles")), ("filesize", p.str("filesize"))])
}

fn setup_delete(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    fs::setup_delete(&delete_fs(p), c)
}

fn delete_exp(p: &Params) -> Vec<Expectation> {
    fs::delete_expectations(&delete_fs(p))
}

fn create_calls(p: &Params) -> Vec<crate::experiment::Claim> {
    if p.u64("filesize") > 0 {
        crate::experiment::each(&["openat", "write", "close"])
    } else {
        crate::experiment::each(&["openat", "close"])
    }
}

pub static CREATEFILES: ExperimentInfo = ExperimentInfo::new(
    "filemicro.createfiles",
    "Filebench filemicro_createfiles: create a file (createfile), write its filesize \
     bytes in one write (writewholefile, iosize 1M), close it, in a directory holding \
     nfiles/2 files (the oldest are unlinked between batches, untimed)",
    "file",
    "open(O_CREAT|O_EXCL) + write + close (fs.create's routine)",
    setup_createfiles,
)
.params(&[
    int("nfiles", "20000", NFILES_HELP),
    size(
        "filesize",
        "1K",
        FILESIZE_MAX,
        "bytes written into each new file",
    ),
])
.syscalls(create_calls)
.outside_default_suite()
.work_dir()
.expectations(createfiles_exp)
.preflight(createfiles_room)
.quick_params(&[("nfiles", "2000")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static DELETE: ExperimentInfo = ExperimentInfo::new(
    "filemicro.delete",
    "Filebench filemicro_delete: unlink a file of filesize bytes (deletefile) from a \
     directory of nfiles files; the files a batch deletes are created before it, \
     untimed",
    "unlink",
    "unlink (fs.delete's routine)",
    setup_delete,
)
.params(&[
    int("nfiles", "5000", NFILES_HELP),
    size("filesize", "16K", FILESIZE_MAX, "bytes in each file"),
])
.syscalls(|_| crate::experiment::each(&["unlink"]))
.outside_default_suite()
.work_dir()
.expectations(delete_exp)
.preflight(fileset_room)
.quick_params(&[("nfiles", "500")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

// --- statfile and openfiles ---

fn fileset_exp(calls: f64) -> Vec<Expectation> {
    let mut out = fs::meta_expectations(calls);
    out.push(Expectation::new(
        Metric::Rusage("oublock"),
        Bound::Below(0.05),
        "a lookup, stat or open for reading writes nothing (atime is not updated without a \
         read)",
    ));
    out
}

pub static STATFILE: ExperimentInfo = ExperimentInfo::new(
    "filemicro.statfile",
    "Filebench filemicro_statfile: stat() of a random file of a fileset of nfiles \
     files of filesize bytes (statfile)",
    "stat",
    "glibc stat (newfstatat)",
    setup_statfile,
)
.params(&[
    int("nfiles", "10000", TREE_NFILES_HELP),
    size("filesize", "128K", FILESIZE_MAX, "bytes in each file"),
    meandirwidth("20"),
])
.syscalls(|_| crate::experiment::each(&["newfstatat"]))
.outside_default_suite()
.work_dir()
.expectations(|_| fileset_exp(1.0))
.preflight(fileset_room)
.quick_params(&[("nfiles", "200")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static OPENFILES: ExperimentInfo = ExperimentInfo::new(
    "filemicro.openfiles",
    "Filebench openfiles (workloads/openfiles.f, not a filemicro_ file): open() and \
     close() of a random empty file of a fileset of nfiles files",
    "open+close",
    "glibc open (openat) + close",
    setup_openfiles,
)
.params(&[
    int("nfiles", "50000", TREE_NFILES_HELP),
    meandirwidth("100"),
    ParamSpec {
        name: "filesize",
        kind: ParamKind::Size {
            min: 0,
            max: FILESIZE_MAX,
        },
        default: "0",
        help: "bytes in each file",
    },
])
.syscalls(|_| crate::experiment::each(&["openat", "close"]))
.outside_default_suite()
.work_dir()
.expectations(|_| fileset_exp(2.0))
.preflight(fileset_room)
.quick_params(&[("nfiles", "1000")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

/// The routines and the room checks, POSIX's: a fileset made and synced, stat or open and close.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;
    use crate::platform::fscache;
    use std::ffi::CString;

    pub(super) fn createfiles_room(p: &Params, c: &Context) -> Result<(), Refusal> {
        let files = p.u64("nfiles") / 2 + 1;
        room(c, files * in_pages(p.u64("filesize")), "the fileset")
    }

    pub(super) fn fileset_room(p: &Params, c: &Context) -> Result<(), Refusal> {
        let files = p.u64("nfiles") + 1;
        room(c, files * in_pages(p.u64("filesize")), "the fileset")
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Call {
        Stat,
        OpenClose,
    }

    /// One op: `stat` (statfile) or `open` + `close` (openfiles) of a file picked at random
    /// (seeded) from the fileset.
    struct Fileset {
        paths: Vec<CString>,
        rng: Rng,
        call: Call,
    }

    impl Routine for Fileset {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                let path = &self.paths[self.rng.below(self.paths.len() as u64) as usize];
                match self.call {
                    Call::Stat => {
                        // SAFETY: an all-zero stat is a valid value to be overwritten.
                        let mut st: libc::stat = unsafe { std::mem::zeroed() };
                        // SAFETY: a valid path and a writable stat.
                        if unsafe { libc::stat(path.as_ptr(), &mut st) } != 0 {
                            return Err(RoutineError::last_os("stat"));
                        }
                    }
                    Call::OpenClose => {
                        // SAFETY: a valid path; the descriptor is closed right after.
                        let fd =
                            unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
                        if fd < 0 {
                            return Err(RoutineError::last_os("open"));
                        }
                        // SAFETY: our own descriptor, closed once.
                        unsafe { libc::close(fd) };
                    }
                }
            }
            Ok(())
        }
    }

    /// `nfiles` files of `filesize` bytes in Filebench's tree of `meandirwidth` (`tree`), synced,
    /// so the measurement starts with nothing left to write back.
    fn setup_fileset(
        p: &Params,
        ctx: &Context,
        call: Call,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let dir = work_dir(ctx)?.join("fileset");
        std::fs::create_dir(&dir).map_err(fs::failed("creating the fileset's directory"))?;
        let mut rng = Rng::new(0x0f11_e5e7);
        let tree = tree::Tree::filebench(p.u64("nfiles").max(1), p.u64("meandirwidth"), &mut rng);
        for d in &tree.dirs {
            std::fs::create_dir(dir.join(d)).map_err(fs::failed("creating the fileset's tree"))?;
        }
        let data = vec![0xa5u8; p.u64("filesize") as usize];
        let mut paths = Vec::with_capacity(tree.files.len());
        for f in &tree.files {
            let path = fs::cpath(&dir.join(f))?;
            fs::create_file_at(&path, &data)?;
            paths.push(path);
        }
        let d = Fd::open(&dir, libc::O_RDONLY | libc::O_DIRECTORY)
            .map_err(fs::failed("opening the fileset's directory"))?;
        fscache::sync_file_system(d.0)
            .map_err(|e| SetupError::Failed(format!("syncfs failed: {e}")))?;
        Ok(Box::new(Fileset { paths, rng, call }))
    }

    pub(super) fn setup_statfile(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
        setup_fileset(p, c, Call::Stat)
    }

    pub(super) fn setup_openfiles(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
        setup_fileset(p, c, Call::OpenClose)
    }
}

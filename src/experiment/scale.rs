//! Scaling experiments: kernel paths whose cost depends on how many CPUs take them at once,
//! meant for `--copies` (will-it-scale's questions). Each is cheap and independent on one
//! CPU; run as copies, what they share is the point.
//!
//! - `scale.mmap_munmap`: mmap of an anonymous region and its munmap, nothing touched
//!   (will-it-scale's mmap1). Every call takes the address space's mmap lock for writing: as
//!   threads (`--copy-mode threads`) the copies queue on one lock; as processes each has its
//!   own.
//! - `scale.open_close`: open and close of a file of the copy's own, in a directory of the
//!   copy's own (`dir=private`, will-it-scale's open2) or in one directory all the copies
//!   share (`dir=shared`, open1): the path walk takes a reference on each directory it passes
//!   (a lockref on the dentry), and the shared one's cache line moves between the CPUs.
//!
//! Page faults of N threads in one address space against N processes are `pagefault.anon`
//! with `--copy-mode threads` and without; fork from N processes is `process.fork` with
//! `--copies`; pipe ping-pong pairs are `ctxswitch.pipe` with `--copies` (each copy a pair).

use super::{ExperimentInfo, ParamKind, ParamSpec, Params};
use crate::analysis::validate::{Expectation, Metric};
use crate::model::copies::Copies;
use crate::model::equivalence as eq;

super::unix_setups!(routines => setup_mmap_munmap, setup_open_close);

/// What a system call in a loop shows (`syscall::ladder_expectations`: no fault, no voluntary
/// switch, two calls per op: mmap and munmap, open and close), but with copies no switch bound: waiting for a lock the
/// other copies hold is a voluntary switch, and that is what is measured.
fn two_calls(params: &Params) -> Vec<Expectation> {
    let alone = Copies::of(params.as_map()).count == 1;
    crate::experiment::syscall::ladder_expectations(2.0)
        .into_iter()
        .filter(|e| alone || e.metric != Metric::Rusage("nvcsw"))
        .collect()
}

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[&MMAP_MUNMAP, &OPEN_CLOSE];

pub static MMAP_MUNMAP: ExperimentInfo = ExperimentInfo::new(
    "scale.mmap_munmap",
    "mmap() of an anonymous region and munmap() of it, untouched: the mmap lock \
     taken for writing twice (will-it-scale's mmap1); run it with --copies",
    "mmap+munmap",
    "mmap and munmap system calls: a VMA created and removed under the mmap lock",
    setup_mmap_munmap,
)
.params(&[ParamSpec {
    name: "size",
    kind: ParamKind::Size {
        min: 4096,
        max: 1 << 40,
    },
    default: "128M",
    help: "bytes mapped (never touched, so no page is allocated)",
}])
.syscalls(|_| crate::experiment::each(&["mmap", "munmap"]))
.outside_default_suite()
.expectations(two_calls)
.cells(eq::Cells {
    linux: eq::runs("mmap and munmap of an anonymous region"),
    freebsd: eq::runs("mmap and munmap of an anonymous region"),
    macos: eq::runs("mmap and munmap of an anonymous region"),
    windows: eq::Cell::No(
        "not enabled yet: VirtualAlloc and VirtualFree would be Windows' means, under the \
             process's address-space lock",
    ),
});

pub static OPEN_CLOSE: ExperimentInfo = ExperimentInfo::new(
    "scale.open_close",
    "open() and close() of the copy's own file, in its own directory (private) or in \
     one directory every copy shares (shared): will-it-scale's open2 and open1; run \
     it with --copies",
    "open+close",
    "openat and close: a path walk through the directory, a file descriptor allocated \
     and freed",
    setup_open_close,
)
.params(&[ParamSpec {
    name: "dir",
    kind: ParamKind::Choice(&["private", "shared"]),
    default: "private",
    help: "private: each copy's file in a directory of its own; shared: every copy's file \
           in one directory",
}])
.syscalls(|_| crate::experiment::each(&["openat", "close"]))
.outside_default_suite()
.work_dir()
.expectations(two_calls)
.sweep(&[("dir", &["private", "shared"])])
.cells(eq::Cells {
    linux: eq::runs("open and close of a file"),
    freebsd: eq::runs("open and close of a file"),
    macos: eq::runs("open and close of a file"),
    windows: eq::Cell::No(
        "not enabled yet: CreateFileW and CloseHandle would be Windows' means \
             (syscall.create_file measures them alone)",
    ),
});

/// The routines, POSIX's: mmap and munmap, open and close of a copy's own file.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::params::parse_size;
    use crate::experiment::{Context, Routine, RoutineError, SetupError};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct MmapMunmap {
        bytes: usize,
    }

    pub(super) fn setup_mmap_munmap(
        params: &Params,
        _: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let bytes = parse_size(params.str("size"))
            .and_then(|b| usize::try_from(b).ok())
            .filter(|&b| b > 0)
            .ok_or_else(|| SetupError::Failed(format!("bad size {}", params.str("size"))))?;
        Ok(Box::new(MmapMunmap { bytes }))
    }

    impl Routine for MmapMunmap {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                // SAFETY: a fresh anonymous private mapping, unmapped at once, never accessed.
                let ptr = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        self.bytes,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if ptr == libc::MAP_FAILED {
                    return Err(RoutineError::last_os("mmap"));
                }
                // SAFETY: `ptr` is the mapping of `bytes` just made.
                if unsafe { libc::munmap(ptr, self.bytes) } != 0 {
                    return Err(RoutineError::last_os("munmap"));
                }
            }
            Ok(())
        }
    }

    /// A name no other copy (process or thread) uses.
    fn copy_name() -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        format!("copy-{}-{n}", std::process::id())
    }

    /// fs.open_close's loop on the copy's own file, which it removes afterwards (then the copy's
    /// directory, if it made one).
    struct OpenClose {
        open_close: Box<dyn Routine>,
        file: PathBuf,
        own_dir: Option<PathBuf>,
    }

    pub(super) fn setup_open_close(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let missing = || SetupError::Failed("no work directory".into());
        let name = copy_name();
        let (dir, own_dir) = match params.str("dir") {
            "shared" => (ctx.shared_dir.clone().ok_or_else(missing)?, None),
            _ => {
                let own = ctx.work_dir.as_ref().ok_or_else(missing)?.join(&name);
                std::fs::create_dir(&own).map_err(|e| {
                    SetupError::Failed(format!("cannot create {}: {e}", own.display()))
                })?;
                (own.clone(), Some(own))
            }
        };
        let file = dir.join(format!("{name}.file"));
        std::fs::write(&file, b"oslab")
            .map_err(|e| SetupError::Failed(format!("cannot create {}: {e}", file.display())))?;
        let path = crate::experiment::fs::cpath(&file)?;
        Ok(Box::new(OpenClose {
            open_close: crate::experiment::fs::open_close_routine(path),
            file,
            own_dir,
        }))
    }

    impl Routine for OpenClose {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            self.open_close.run(ops)
        }
    }

    impl Drop for OpenClose {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.file);
            if let Some(dir) = &self.own_dir {
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::experiment::Context;

    #[test]
    fn copies_of_open_close_use_their_own_files_in_one_or_their_own_directory() {
        let work = tempfile::tempdir().unwrap();
        let ctx = Context {
            work_dir: Some(work.path().to_path_buf()),
            shared_dir: Some(work.path().to_path_buf()),
            ..Context::default()
        };
        for dir in ["private", "shared"] {
            let params = Params::from_pairs(&[("dir", dir)]);
            let mut a = (OPEN_CLOSE.setup)(&params, &ctx).unwrap();
            let mut b = (OPEN_CLOSE.setup)(&params, &ctx).unwrap();
            a.run(10).unwrap();
            b.run(10).unwrap();
            let entries = std::fs::read_dir(work.path()).unwrap().count();
            assert_eq!(entries, 2, "{dir}: two copies, two entries");
            drop((a, b));
            assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0, "{dir}");
        }
    }

    #[test]
    fn mmap_munmap_maps_and_unmaps() {
        let params = Params::from_pairs(&[("size", "1M")]);
        let mut r = setup_mmap_munmap(&params, &Context::default()).unwrap();
        r.run(100).unwrap();
        let alone = (MMAP_MUNMAP.expectations)(&params);
        let mut copies = params.as_map().clone();
        crate::model::copies::Copies {
            count: 2,
            mode: crate::model::copies::Mode::Threads,
        }
        .record(&mut copies);
        let together = (MMAP_MUNMAP.expectations)(&Params::from_map(copies));
        assert_eq!(
            alone.len(),
            together.len() + 1,
            "no switch bound with copies"
        );
    }
}

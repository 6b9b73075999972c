//! pagefault.cow: a forked child's write to each inherited page, one copy-on-write fault per page.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup_cow);

// --- pagefault.cow ---

pub(super) fn cow_expectations(_: &Params) -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::Children("minflt"),
            Bound::AtLeast(0.99),
            "the child writes each inherited page once: at least one copy-on-write fault per \
             page, or the write did not copy",
        ),
        Expectation::new(
            Metric::Children("minflt"),
            Bound::Below(1.1),
            "beyond one fault per page, only the child's own few (its stack, glibc's fork \
             handlers: 8–30 measured) spread over a batch of at least 4096 pages",
        ),
        Expectation::new(
            Metric::Rusage("majflt"),
            Bound::Below(0.0001),
            "the region is resident anonymous memory: no major fault in the parent",
        ),
        Expectation::new(
            Metric::Children("majflt"),
            Bound::Below(0.0001),
            "copying a resident anonymous page reads nothing from disk: no major fault in \
             the child",
        ),
    ]
}

#[cfg(unix)]
/// The fewest pages a batch writes. A batch carries a fork, an exit and a wait besides its
/// pages, and the child's own faults (its stack, glibc's fork handlers: 8–30); sized by time
/// alone on a host where that fixed part takes the whole sample time (a slow wake-up of an
/// idle vCPU), a batch held 4 pages and claimed 3.25 faults a page, and the baseline's noise
/// made medians negative. At 4096 pages (16 MiB, the default region) the fixed faults are
/// under 0.01 a page and the copies outweigh the fork by tens of times.
pub(super) const MIN_BATCH_PAGES: u64 = 4096;

pub static COW: ExperimentInfo = ExperimentInfo::new(
    "pagefault.cow",
    "copy-on-write: a forked child writes one byte to each of N inherited 4 KiB \
     pages; per page, after subtracting the same fork+exit+wait without writes \
     (includes freeing the copy at the child's exit); one fork, exit and wait per \
     batch of at least 4096 pages, so no system call per page",
    "page",
    "fork(), the child stores → page fault → wp_page_copy, _exit; waitpid; minus the \
     same without stores",
    setup_cow,
)
.params(&[ParamSpec {
    name: "size",
    kind: ParamKind::Size {
        min: 1 << 20,
        max: 4 << 30,
    },
    default: "16M",
    help: "the region the parent touches in setup and the child inherits (grown when a \
           batch needs more pages; a batch writes at least 4096)",
}])
// One fork, exit and wait per batch of pages, not per page: nothing is claimed per op.
.syscalls(crate::experiment::no_claims)
.expectations(cow_expectations)
.cells(eq::Cells {
    linux: eq::runs("fork, then the child's first write to each page (copy-on-write)"),
    freebsd: eq::runs("fork, then the child's first write to each page (copy-on-write)"),
    macos: super::NOT_YET_ON_MACOS,
    windows: eq::Cell::No("not available: Windows has no fork"),
});

/// The routine, POSIX's: fork, the child's writes, waitpid.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::RoutineError;

    pub(super) struct Cow {
        pub(super) region: Region,
    }

    impl Cow {
        /// Fork a child that writes one byte to each of the first `pages` pages and exits.
        pub(super) fn fork_writing(&self, pages: usize) -> Result<(), RoutineError> {
            let base = self.region.base;
            // SAFETY: fork has no memory-safety preconditions. The child only stores to the
            // inherited region (plain memory writes) and calls `_exit`: no allocator, lock or
            // destructor runs in it.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                for page in 0..pages {
                    // SAFETY: `page` is below the region's page count (checked by the caller).
                    unsafe { base.add(page * PAGE).write_volatile(2) };
                }
                // SAFETY: _exit is async-signal-safe and never returns.
                unsafe { libc::_exit(0) };
            }
            if pid < 0 {
                return Err(RoutineError::last_os("fork"));
            }
            crate::experiment::process::reap(pid, "writing")
        }
    }

    impl Routine for Cow {
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            let ops = ops as usize;
            if ops > self.region.pages {
                self.region = touched_region(ops)?;
            }
            Ok(())
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let pages = ops as usize;
            if pages > self.region.pages {
                return Err("run with more pages than prepared".into());
            }
            self.fork_writing(pages)
        }

        fn run_baseline(&mut self, _ops: u64) -> Option<Result<(), RoutineError>> {
            Some(self.fork_writing(0))
        }

        fn baseline_per_batch(&self) -> bool {
            true
        }

        fn min_batch(&self) -> Option<u64> {
            Some(MIN_BATCH_PAGES)
        }
    }

    /// A 4 KiB-page region of `pages` pages, every page written by this process.
    pub(super) fn touched_region(pages: usize) -> Result<Region, SetupError> {
        let region = Region::new(pages, false)?;
        for page in 0..pages {
            region.touch(page, 1);
        }
        Ok(region)
    }

    pub(super) fn setup_cow(p: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
        let pages = (p.u64("size") as usize).div_ceil(PAGE);
        Ok(Box::new(Cow {
            region: touched_region(pages)?,
        }))
    }
}

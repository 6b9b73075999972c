//! mmap.access's setup, preflight, expectations and registry entry.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup; preflights: preflight);

pub(super) fn expectations(p: &Params) -> Vec<Expectation> {
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

pub static ACCESS: ExperimentInfo = ExperimentInfo::new(
    "mmap.access",
    "working-set walk over a fresh mapping: blocks of 512 cache lines walked 16 \
     times (a store to every 8th line), per backing (malloc, anonymous, file) with \
     populate and memset+msync variants; one sample is one pass. File backings keep \
     the file's pages in the page cache between passes (only the mapping is fresh), \
     and pages the walk dirtied stay dirty until written back",
    "access",
    "user loads and stores to a mapping (a page fault at the first touch of each page; \
     no system call)",
    setup,
)
.params(PARAMS)
.outside_default_suite()
.work_dir()
.expectations(expectations)
.preflight(preflight)
.batch(Batch::Fixed(pass_ops))
.quick_params(&[("size", "128M")])
.cells(eq::Cells {
    linux: eq::runs("MAP_POPULATE, MADV_POPULATE_*, THP advice and prctl"),
    freebsd: eq::Cell::No(
        "not enabled yet: the mmap lab's flags (MAP_POPULATE, MADV_POPULATE_READ, THP \
             advice) are Linux's",
    ),
    macos: eq::Cell::No(
        "not enabled: those flags are Linux's; a POSIX-only variant is future work",
    ),
    windows: eq::Cell::No(
        "not enabled: those flags are Linux's; pagefault.virtual_alloc is Windows' first \
             touch",
    ),
});

/// The setup and the preflight, POSIX's.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::refusal::Refusal;

    pub(super) fn setup(p: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
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
                let mount = crate::platform::mount::mount_of(dir)
                    .map_err(|e| SetupError::Failed(e.to_string()))?;
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
    pub(super) fn set_mmap_threshold() -> Result<(), SetupError> {
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
    pub(super) fn set_mmap_threshold() -> Result<(), SetupError> {
        Ok(())
    }

    /// Refuse, before any worker starts, a region that would crowd the machine's memory (there
    /// may be no swap) or a file that does not fit in `--dir`.
    pub(super) fn preflight(p: &Params, ctx: &Context) -> Result<(), Refusal> {
        let size = p.u64("size");
        if let Ok(available) = crate::platform::memory::meminfo().map(|m| m.available)
            && size > available / 2
        {
            return Err(Refusal::Memory {
                param: "size",
                value: format_size(size),
                available,
            });
        }
        let Some(dir) = ctx.work_dir.as_deref().filter(|_| Backing::of(p).file()) else {
            return Ok(());
        };
        let free = crate::experiment::fs::statvfs_free(dir)?;
        if free < size + SLACK {
            return Err(Refusal::Room {
                need: size + SLACK,
                free,
                dir: dir.to_path_buf(),
                what: format!("its {} file", format_size(size)),
                shrink: Some("size"),
            });
        }
        Ok(())
    }
}

//! The competitor's own side (the hidden `oslab memload` process): join the cgroup, map the region, fill it, keep writing random pages.

use super::*;

/// Entry point of the competitor (`oslab load --memory BYTES`): join the cgroup, fill `bytes`
/// of anonymous memory, say so on stdout, then write random pages until killed or orphaned.
pub fn competitor_main(
    bytes: u64,
    cpu: Option<usize>,
    cgroup_procs: Option<&Path>,
    parent: u32,
) -> i32 {
    // The parent may have died before this process was tied to it: then nobody would stop
    // it.
    if !process::die_with_parent_of(parent) {
        return 1;
    }
    let mut out = io::stdout();
    let region = match fill(bytes, cpu, cgroup_procs) {
        Ok(region) => region,
        Err(reason) => {
            let _ = writeln!(out, "error: {reason}");
            return 1;
        }
    };
    if writeln!(out, "{READY}").and_then(|()| out.flush()).is_err() {
        return 1;
    }
    region.churn()
}

/// The competitor's memory: mapped for the process's lifetime (it ends by being killed).
pub(super) struct Region {
    pub(super) base: *mut u8,
    pub(super) pages: u64,
    pub(super) page: u64,
}

/// Join the cgroup, make this process the OOM killer's first choice, pin it, then map and
/// write every page of `bytes`.
pub(super) fn fill(
    bytes: u64,
    cpu: Option<usize>,
    cgroup_procs: Option<&Path>,
) -> Result<Region, String> {
    if let Some(procs) = cgroup_procs {
        cgroup::join(procs)
            .map_err(|e| format!("cannot join the cgroup ({}): {e}", procs.display()))?;
    }
    process::prefer_for_oom_kill().map_err(|e| format!("cannot set oom_score_adj: {e}"))?;
    if let Some(cpu) = cpu {
        cpu::pin(&[cpu]).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    }
    let page = memory::page_size();
    let pages = bytes / page;
    if pages == 0 {
        return Err(format!("{bytes} bytes is less than a page"));
    }
    let len = usize::try_from(pages * page).map_err(|_| format!("{bytes} bytes is too large"))?;
    // SAFETY: a fresh anonymous mapping at an address the kernel picks.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(format!(
            "mmap of {bytes} bytes failed: {}",
            io::Error::last_os_error()
        ));
    }
    // 4 KiB pages, so the region is charged and touched page by page as the experiment's is
    // (where the system has huge pages to refuse).
    if let Some(advice) = crate::platform::memory::MADV_NO_HUGE_PAGES
        // SAFETY: the range is exactly the mapping made above.
        && unsafe { libc::madvise(base, len, advice) } != 0
    {
        return Err(format!(
            "madvise(MADV_NOHUGEPAGE) failed: {}",
            io::Error::last_os_error()
        ));
    }
    let region = Region {
        base: base.cast(),
        pages,
        page,
    };
    for i in 0..pages {
        region.write(i, i);
    }
    Ok(region)
}

impl Region {
    #[inline(always)]
    pub(super) fn write(&self, page: u64, value: u64) {
        // SAFETY: `page < pages`, so the write lies inside the mapping, 8-byte aligned.
        unsafe {
            self.base
                .add((page * self.page) as usize)
                .cast::<u64>()
                .write_volatile(value)
        };
    }

    /// Write random pages forever (xorshift64), so the whole region stays in use.
    pub(super) fn churn(&self) -> ! {
        let mut x = u64::from(std::process::id()) | 0x9E37_79B9_7F4A_7C15;
        loop {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.write(x % self.pages, x);
        }
    }
}

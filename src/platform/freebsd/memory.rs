//! Memory as FreeBSD reports it: `hw.physmem`, the free and inactive page counts of
//! `vm.stats.vm`, `vm.swap_total`; the rest is shared with macOS.

use std::io;

pub use crate::platform::unix::bsd::memory::*;
use crate::platform::unix::bsd::sysctl::number;

/// The machine's memory: total, available (free plus inactive pages, which the page daemon
/// reclaims first) and swap.
pub fn meminfo() -> io::Result<MemInfo> {
    let missing = |name: &str| io::Error::new(io::ErrorKind::NotFound, format!("no sysctl {name}"));
    let page = page_size();
    let pages = |name: &str| number(name).map(|n| n.saturating_mul(page));
    Ok(MemInfo {
        total: number("hw.physmem").ok_or_else(|| missing("hw.physmem"))?,
        available: pages("vm.stats.vm.v_free_count")
            .ok_or_else(|| missing("vm.stats.vm.v_free_count"))?
            .saturating_add(pages("vm.stats.vm.v_inactive_count").unwrap_or(0)),
        swap_total: number("vm.swap_total").unwrap_or(0),
    })
}

/// How a range of anonymous memory is faulted in for writing from user space here: FreeBSD has
/// no MADV_POPULATE_WRITE, but wiring a range (mlock(2): `vm_map_wire` faults every page in
/// with the entry's protection, writable for a private read-write mapping) does it, and
/// munlock(2) unwires it again, leaving the pages mapped. Both calls are in the figure.
pub const POPULATE_WRITE_CALL: &str = "mlock(2) + munlock(2)";
pub const POPULATE_WRITE_SYSCALL: &str = "mlock";

/// Fault `[ptr, ptr + len)`, inside one of our writable anonymous mappings, in for writing:
/// mlock then munlock. Fails where RLIMIT_MEMLOCK or vm.max_user_wired forbid the wiring.
pub fn populate_write(ptr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: the caller's range lies inside its own mapping; wiring and unwiring change no
    // contents.
    unsafe {
        if libc::mlock(ptr.cast(), len) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::munlock(ptr.cast(), len) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

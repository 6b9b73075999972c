//! Memory as macOS reports it: `hw.memsize`, the free and speculative page counts of
//! `vm.page_*_count`, `vm.swapusage`; the rest is shared with FreeBSD.

use std::io;

pub use crate::platform::unix::bsd::memory::*;
use crate::platform::unix::bsd::sysctl;

/// The machine's memory: total, available (free plus speculative pages, which macOS hands
/// out first) and the swap files' current total (macOS grows swap on demand).
pub fn meminfo() -> io::Result<MemInfo> {
    let page = page_size();
    let pages = |name: &str| sysctl::number(name).map(|n| n.saturating_mul(page));
    Ok(MemInfo {
        total: sysctl::number("hw.memsize")
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no sysctl hw.memsize"))?,
        available: pages("vm.page_free_count")
            .unwrap_or(0)
            .saturating_add(pages("vm.page_speculative_count").unwrap_or(0)),
        // struct xsw_usage starts with xsu_total, a u64.
        swap_total: sysctl::bytes("vm.swapusage")
            .and_then(|b| Some(u64::from_ne_bytes(b.get(..8)?.try_into().ok()?)))
            .unwrap_or(0),
    })
}

/// No write pre-fault of anonymous memory here yet (mlock, as on FreeBSD, is not tried).
pub const POPULATE_WRITE_CALL: &str = "no write pre-fault";
pub const POPULATE_WRITE_SYSCALL: &str = "";

/// Refused: this system's backend has no way to fault memory in for writing.
pub fn populate_write(_ptr: *mut u8, _len: usize) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{} has no write pre-fault in oslab yet",
            crate::platform::CURRENT.title()
        ),
    ))
}

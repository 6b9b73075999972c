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

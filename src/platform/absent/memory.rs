//! Memory as the systems without Linux's /proc report it, the parts they share: no pressure
//! stall information, transparent huge pages (Linux's THP), free page reporting or
//! /proc/PID/status. Each backend adds `meminfo()` and `page_size()` of its own.

use std::io;

pub use crate::platform::contract::memory::{MemInfo, Psi, PsiLine};

/// Linux names files here in messages; these systems have none of them.
pub const PRESSURE_FILE: &str = "memory pressure (PSI, Linux only)";
pub const THP_ENABLED: &str = "transparent huge pages (Linux only)";
pub const THP_DEFRAG: &str = "transparent huge page defrag (Linux only)";

/// No transparent huge pages to refuse: the BSDs promote superpages themselves, with no advice
/// to keep a region in base pages, and Windows uses large pages only when asked.
pub const MADV_NO_HUGE_PAGES: Option<i32> = None;

/// Why anonymous memory cannot be pre-faulted for writing here (Linux's MAP_POPULATE and
/// MADV_POPULATE_WRITE): FreeBSD's MAP_PREFAULT_READ and macOS's advice only map pages that
/// are already resident, which a fresh anonymous mapping has none of.
pub fn populate_unsupported() -> Option<String> {
    Some(format!(
        "MAP_POPULATE and MADV_POPULATE_WRITE are Linux's; {} has no write pre-fault of \
         anonymous memory (its prefault maps only pages already resident)",
        crate::platform::CURRENT.title()
    ))
}

/// A process's peak or resident size by Linux's /proc/PID/status field name: not read here.
pub fn status_bytes(_pid: i32, _field: &str) -> Option<u64> {
    None
}

/// No pressure stall information on this system.
pub fn system_pressure() -> Option<Psi> {
    None
}

/// Linux's transparent-huge-page mode: not on this system.
pub fn thp_mode() -> io::Result<String> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "transparent huge pages are Linux's; {} manages large pages on its own",
            crate::platform::CURRENT.title()
        ),
    ))
}

/// No virtio balloon free page reporting is known here.
pub fn free_page_reporting() -> Option<String> {
    None
}

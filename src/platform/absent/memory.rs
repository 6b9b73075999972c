//! Memory as the systems without Linux's /proc report it, the parts they share: no pressure
//! stall information, transparent huge pages (Linux's THP), free page reporting or
//! /proc/PID/status. Each backend adds `meminfo()` and `page_size()` of its own.

use std::io;

/// Linux names files here in messages; these systems have none of them.
pub const PRESSURE_FILE: &str = "memory pressure (PSI, Linux only)";
pub const THP_ENABLED: &str = "transparent huge pages (Linux only)";
pub const THP_DEFRAG: &str = "transparent huge page defrag (Linux only)";

/// No transparent huge pages to refuse: the BSDs promote superpages themselves, with no advice
/// to keep a region in base pages, and Windows uses large pages only when asked.
pub const MADV_NO_HUGE_PAGES: Option<i32> = None;

/// A process's peak or resident size by Linux's /proc/PID/status field name: not read here.
pub fn status_bytes(_pid: i32, _field: &str) -> Option<u64> {
    None
}

/// The machine's memory, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    /// What can be allocated without swapping: free and reclaimable pages.
    pub available: u64,
    pub swap_total: u64,
    pub total: u64,
}

/// One line of Linux's pressure stall information (none here).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsiLine {
    pub avg10: f64,
    pub total_us: u64,
}

/// Memory pressure (none here).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Psi {
    pub some: PsiLine,
    pub full: Option<PsiLine>,
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

//! Memory as Windows reports it: GlobalMemoryStatusEx for the machine, GetSystemInfo for the
//! page size; no pressure stall information or transparent huge pages (`absent::memory`).

use std::io;

use windows_sys::Win32::System::SystemInformation::{
    GetSystemInfo, GlobalMemoryStatusEx, MEMORYSTATUSEX, SYSTEM_INFO,
};

pub use crate::platform::absent::memory::*;

/// The system call a write pre-fault of anonymous memory makes: none here (no experiment
/// pre-faults on Windows).
pub const POPULATE_WRITE_SYSCALL: &str = "";

/// The machine's memory: physical total and available (free, zeroed and standby pages), and
/// the page files' size (the commit limit less physical memory).
pub fn meminfo() -> io::Result<MemInfo> {
    // SAFETY: an all-zero MEMORYSTATUSEX is valid; dwLength tells its size.
    let mut status: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    status.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: a valid, sized structure.
    if unsafe { GlobalMemoryStatusEx(&mut status) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(MemInfo {
        total: status.ullTotalPhys,
        available: status.ullAvailPhys,
        swap_total: status.ullTotalPageFile.saturating_sub(status.ullTotalPhys),
    })
}

/// The size of a page, bytes.
pub fn page_size() -> u64 {
    // SAFETY: an all-zero SYSTEM_INFO is valid output space.
    let mut info: SYSTEM_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { GetSystemInfo(&mut info) };
    u64::from(info.dwPageSize).max(4096)
}

/// The number of logical processors Windows reports.
pub fn processors() -> u32 {
    // SAFETY: as in `page_size`.
    let mut info: SYSTEM_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { GetSystemInfo(&mut info) };
    info.dwNumberOfProcessors
}

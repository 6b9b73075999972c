//! Anonymous memory on Windows (`platform::anon`): VirtualAlloc of committed, zero-filled
//! pages; demand-zero faults happen at first touch, as with mmap. Windows has no fork, so
//! nothing is shared.

use windows_sys::Win32::System::Memory::{
    MEM_COMMIT, MEM_DECOMMIT, MEM_RELEASE, MEM_RESERVE, PAGE_READWRITE, VirtualAlloc, VirtualFree,
};

use crate::model::SetupError;

/// Fresh private memory of `len` bytes (`shared` is never asked for here).
pub fn map(len: usize, _shared: bool) -> Result<*mut u8, SetupError> {
    // SAFETY: a fresh allocation at an address the system picks.
    let ptr = unsafe {
        VirtualAlloc(
            std::ptr::null(),
            len,
            MEM_RESERVE | MEM_COMMIT,
            PAGE_READWRITE,
        )
    };
    if ptr.is_null() {
        return Err(SetupError::Failed(format!(
            "VirtualAlloc of {len} bytes failed: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(ptr.cast())
}

/// Decommit and commit again: the next touch of each page faults in a zero page (what
/// MADV_DONTNEED does on Unix).
pub fn release(ptr: *mut u8, len: usize) -> std::io::Result<()> {
    // SAFETY: the range is exactly one of our allocations, which stays reserved.
    let decommitted = unsafe { VirtualFree(ptr.cast(), len, MEM_DECOMMIT) } != 0;
    // SAFETY: committing the same reserved range again.
    if decommitted
        && !unsafe { VirtualAlloc(ptr.cast(), len, MEM_COMMIT, PAGE_READWRITE) }.is_null()
    {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Nothing to ask: Windows maps large pages only when asked (MEM_LARGE_PAGES).
pub fn base_pages_only(_ptr: *mut u8, _len: usize) {}

pub fn unmap(ptr: *mut u8, _len: usize) {
    // SAFETY: releasing exactly one of our allocations, dropped after its last use.
    unsafe { VirtualFree(ptr.cast(), 0, MEM_RELEASE) };
}

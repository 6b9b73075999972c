//! Anonymous memory on Unix (`platform::anon`): mmap, madvise, munmap.

use std::os::fd::{AsRawFd, BorrowedFd};

use crate::model::SetupError;

/// A fresh anonymous mapping of `len` bytes, shared with forked children or private.
pub fn map(len: usize, shared: bool) -> Result<*mut u8, SetupError> {
    map_fd(len, shared, None)
        .map_err(|e| SetupError::Failed(format!("mmap of {len} bytes failed: {e}")))
}

/// A fresh readable and writable mapping of `len` bytes at an address the kernel picks: of
/// the open file `fd` from its start (at least `len` bytes long), or anonymous; shared (with
/// forked children, and for a file with the page cache) or private (copied on write).
pub fn map_fd(len: usize, shared: bool, fd: Option<BorrowedFd<'_>>) -> std::io::Result<*mut u8> {
    let kind = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    let (kind, fd) = match fd {
        Some(fd) => (kind, fd.as_raw_fd()),
        None => (kind | libc::MAP_ANONYMOUS, -1),
    };
    // SAFETY: a fresh mapping at an address the kernel picks, of an open file (borrowed for
    // the call) or anonymous; no existing memory is affected.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            kind,
            fd,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ptr.cast())
}

/// madvise(2) on a mapping of ours.
pub fn advise(ptr: *mut u8, len: usize, advice: libc::c_int) -> std::io::Result<()> {
    // SAFETY: the range is exactly one of our mappings (`platform::anon::Anon`).
    let rc = unsafe { libc::madvise(ptr.cast(), len, advice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Drop a private mapping's contents: it reads as zeros again, faulting page by page. Linux's
/// MADV_DONTNEED does that; the BSDs' only lowers the pages' priority and keeps the contents
/// (measured on FreeBSD 13.2: a byte written before it read back unchanged), so there a new
/// anonymous mapping replaces the range in place (MAP_FIXED).
pub fn release(ptr: *mut u8, len: usize) -> std::io::Result<()> {
    if cfg!(target_os = "linux") {
        return advise(ptr, len, libc::MADV_DONTNEED);
    }
    // SAFETY: MAP_FIXED replaces exactly [ptr, ptr + len), a range of one of our private
    // mappings (`platform::anon::Anon` or a region inside it), with fresh zero-fill memory of
    // the same protection; nothing else lives there.
    let got = unsafe {
        libc::mmap(
            ptr.cast(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if got == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Keep a mapping in base pages where the system has transparent huge pages (advice only).
pub fn base_pages_only(ptr: *mut u8, len: usize) {
    if let Some(advice) = crate::platform::memory::MADV_NO_HUGE_PAGES {
        let _ = advise(ptr, len, advice);
    }
}

pub fn unmap(ptr: *mut u8, len: usize) {
    // SAFETY: unmapping exactly one of our mappings, dropped after its last use.
    unsafe { libc::munmap(ptr.cast(), len) };
}

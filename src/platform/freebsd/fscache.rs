//! File-system cache control on FreeBSD: posix_fadvise(2) DONTNEED and RANDOM, O_DIRECT,
//! and fsync(2) of the file in place of Linux's syncfs (FreeBSD has none).

use std::io;
use std::os::fd::RawFd;

/// The open flag that bypasses the buffer cache where the file system honours it (O_DIRECT:
/// UFS does; ZFS accepts it and still caches in the ARC).
pub const DIRECT_IO: libc::c_int = libc::O_DIRECT;

pub use crate::platform::unix::fadvise::{advise_random, drop_file_cache};

/// Write back what is pending for the file open as `fd` (fsync): FreeBSD has no syncfs, and
/// sync(2) would start the writes of every file system without waiting for them.
pub fn sync_file_system(fd: RawFd) -> io::Result<()> {
    // SAFETY: fsync on the caller's open descriptor.
    if unsafe { libc::fsync(fd) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Why a file's cached pages cannot be dropped from user space here: FreeBSD's
/// posix_fadvise(DONTNEED) only deactivates them (`vop_stdadvise` →
/// `vm_object_page_noreuse`: moved to the inactive queue, still resident), so a pass after it
/// finds the file cached and "cold" would measure warm.
pub fn cold_cache_unsupported() -> Option<String> {
    Some(
        "FreeBSD's posix_fadvise(POSIX_FADV_DONTNEED) deactivates a file's cached pages \
         without freeing them, so a cold cache cannot be made from user space (unmount the \
         file system to empty it)"
            .into(),
    )
}

//! File-system cache control on macOS: fcntl F_NOCACHE on the descriptor in place of
//! posix_fadvise (which macOS lacks), F_RDAHEAD off for random reads, F_FULLFSYNC.

use std::io;
use std::os::fd::RawFd;

use crate::platform::OsError;

/// No open flag bypasses the cache on macOS: F_NOCACHE is set on the open descriptor instead
/// (see [`drop_file_cache`]). 0: no flag.
pub const DIRECT_IO: libc::c_int = 0;

fn fcntl(fd: RawFd, cmd: libc::c_int, arg: libc::c_int, call: &'static str) -> Result<(), OsError> {
    // SAFETY: fcntl on the caller's open descriptor with an integer argument.
    if unsafe { libc::fcntl(fd, cmd, arg) } == -1 {
        return Err(OsError::last(call));
    }
    Ok(())
}

/// Stop caching the file open as `fd` from now on (F_NOCACHE): macOS cannot drop the pages
/// already cached, but reads through this descriptor then bypass the cache.
pub fn drop_file_cache(fd: RawFd) -> Result<(), OsError> {
    fcntl(fd, libc::F_NOCACHE, 1, "fcntl(F_NOCACHE)")
}

/// Turn readahead off for `fd` (F_RDAHEAD 0), as random access does elsewhere.
pub fn advise_random(fd: RawFd) -> Result<(), OsError> {
    fcntl(fd, libc::F_RDAHEAD, 0, "fcntl(F_RDAHEAD)")
}

/// Flush the file to the device, through the drive's own cache (F_FULLFSYNC): macOS's fsync
/// stops at the drive.
pub fn sync_file_system(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on the caller's open descriptor.
    if unsafe { libc::fcntl(fd, libc::F_FULLFSYNC) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Why a file's cached pages cannot be dropped from user space here: macOS has no
/// posix_fadvise, and F_NOCACHE only stops new caching.
pub fn cold_cache_unsupported() -> Option<String> {
    Some("macOS cannot drop a file's cached pages from user space (no posix_fadvise)".into())
}

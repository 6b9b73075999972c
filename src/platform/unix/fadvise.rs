//! posix_fadvise(2) on a whole file, where the system has it (Linux, FreeBSD; not macOS,
//! which uses fcntl F_NOCACHE and F_RDAHEAD instead).

use std::io;
use std::os::fd::RawFd;

use crate::platform::OsError;

fn advise(fd: RawFd, advice: libc::c_int) -> Result<(), OsError> {
    // SAFETY: posix_fadvise on the caller's open descriptor, whole file; it returns the error
    // instead of setting errno.
    let rc = unsafe { libc::posix_fadvise(fd, 0, 0, advice) };
    if rc != 0 {
        return Err(OsError {
            call: "posix_fadvise",
            source: io::Error::from_raw_os_error(rc),
        });
    }
    Ok(())
}

/// Drop the clean cached pages of the whole file open as `fd` (posix_fadvise DONTNEED), so
/// that the next read of them goes to the device. Dirty pages stay: sync the file first.
pub fn drop_file_cache(fd: RawFd) -> Result<(), OsError> {
    advise(fd, libc::POSIX_FADV_DONTNEED)
}

/// Tell the kernel the file open as `fd` will be read at random offsets (posix_fadvise
/// RANDOM), which turns its readahead off: each read then brings in only what it asked for.
pub fn advise_random(fd: RawFd) -> Result<(), OsError> {
    advise(fd, libc::POSIX_FADV_RANDOM)
}

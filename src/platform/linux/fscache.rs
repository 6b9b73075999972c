//! File-system cache control: dropping a file's cached pages, hinting random access, opening
//! past the page cache, flushing a whole file system.
//!
//! Each function works on a descriptor the caller owns and keeps open for the call.

use std::io;
use std::os::fd::RawFd;

/// The open flag that sends reads and writes straight to the device, past the page cache
/// (O_DIRECT). A file system may refuse it at open (EINVAL), and a transfer whose buffer,
/// length or offset is not aligned to the device's logical block size fails with EINVAL.
pub const DIRECT_IO: libc::c_int = libc::O_DIRECT;

fn advise(fd: RawFd, advice: libc::c_int) -> Result<(), String> {
    // SAFETY: posix_fadvise on the caller's open descriptor, whole file; it returns the error
    // instead of setting errno.
    let rc = unsafe { libc::posix_fadvise(fd, 0, 0, advice) };
    if rc != 0 {
        return Err(format!(
            "posix_fadvise failed: {}",
            io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(())
}

/// Drop the clean cached pages of the whole file open as `fd` (posix_fadvise DONTNEED), so
/// that the next read of them goes to the device. Dirty pages stay: sync the file first.
pub fn drop_file_cache(fd: RawFd) -> Result<(), String> {
    advise(fd, libc::POSIX_FADV_DONTNEED)
}

/// Tell the kernel the file open as `fd` will be read at random offsets (posix_fadvise
/// RANDOM), which turns its readahead off: each read then brings in only what it asked for.
pub fn advise_random(fd: RawFd) -> Result<(), String> {
    advise(fd, libc::POSIX_FADV_RANDOM)
}

/// Write back everything pending on the file system that holds the file or directory open
/// as `fd` (syncfs): dirty data, a journal commit and, on a `discard` mount, the discards of
/// freed blocks.
pub fn sync_file_system(fd: RawFd) -> io::Result<()> {
    // SAFETY: syncfs on the caller's open descriptor.
    if unsafe { libc::syncfs(fd) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn cache_control_accepts_an_open_file() {
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        drop_file_cache(fd).unwrap();
        advise_random(fd).unwrap();
        sync_file_system(fd).unwrap();
    }

    #[test]
    fn a_closed_descriptor_is_an_error() {
        assert!(
            drop_file_cache(-1)
                .unwrap_err()
                .starts_with("posix_fadvise failed")
        );
        assert!(sync_file_system(-1).is_err());
    }
}

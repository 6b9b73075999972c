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

pub use crate::platform::unix::fadvise::{advise_random, drop_file_cache};

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

/// Why a file's cached pages cannot be dropped from user space here, or `None`: on Linux
/// posix_fadvise(DONTNEED) frees the clean, unmapped pages of a file on a disk-backed file
/// system.
pub fn cold_cache_unsupported() -> Option<String> {
    None
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
                .to_string()
                .starts_with("posix_fadvise failed")
        );
        assert!(sync_file_system(-1).is_err());
    }
}

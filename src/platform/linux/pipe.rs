//! Pipes: their capacity (fcntl F_SETPIPE_SZ) and the limit an unprivileged process may set.

use std::os::fd::RawFd;

pub use super::super::unix::fds::{pipe_cloexec, socketpair_cloexec};
pub use crate::platform::contract::pipe::CapacityError;

const MAX_SIZE: &str = "/proc/sys/fs/pipe-max-size";

/// Set the capacity of pipe `fd` to exactly `capacity` bytes, or say why it cannot be (the
/// kernel refused it, or rounded it to another size).
pub fn set_capacity(fd: RawFd, capacity: usize) -> Result<(), CapacityError> {
    let wanted = libc::c_int::try_from(capacity).map_err(|_| CapacityError::TooLarge(capacity))?;
    // SAFETY: fcntl on a descriptor the caller owns, with an integer argument.
    let got = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, wanted) };
    if got < 0 {
        let source = std::io::Error::last_os_error();
        let limit = std::fs::read_to_string(MAX_SIZE)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(CapacityError::Refused {
            capacity,
            limit,
            source,
        });
    }
    if got != wanted {
        return Err(CapacityError::Rounded {
            capacity,
            got: i64::from(got),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> [RawFd; 2] {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        fds
    }

    #[test]
    fn capacities() {
        let fds = pipe();
        assert!(set_capacity(fds[0], 64 << 10).is_ok());
        assert!(set_capacity(fds[0], 16 << 10).is_ok());
        // 5 pages are rounded up to 8.
        let page = super::super::memory::page_size() as usize;
        let rounded = set_capacity(fds[0], 5 * page).unwrap_err();
        assert!(
            matches!(rounded, CapacityError::Rounded { got, .. } if got == 8 * page as i64),
            "{rounded}"
        );
        assert!(rounded.to_string().contains("rounds"), "{rounded}");
        assert!(matches!(
            set_capacity(fds[0], usize::MAX),
            Err(CapacityError::TooLarge(_))
        ));
        for fd in fds {
            // SAFETY: closing the descriptors this test opened.
            unsafe { libc::close(fd) };
        }
    }
}

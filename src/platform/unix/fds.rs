//! Pipes and socket pairs that are close-on-exec from birth where the system can (pipe2,
//! SOCK_CLOEXEC: Linux, FreeBSD), else set right after (macOS: pipe, socketpair, fcntl).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

fn owned(fds: [RawFd; 2]) -> (OwnedFd, OwnedFd) {
    // SAFETY: the call that filled `fds` succeeded: both are open and owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// A pipe as (read end, write end), close-on-exec, with extra status `flags` (O_NONBLOCK).
#[cfg(not(target_os = "macos"))]
pub fn pipe_cloexec(flags: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(owned(fds))
}

/// A connected pair of Unix stream sockets, close-on-exec.
#[cfg(not(target_os = "macos"))]
pub fn socketpair_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as RawFd; 2];
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(owned(fds))
}

/// Set close-on-exec and the status `flags` on both descriptors (macOS has no pipe2).
#[cfg(target_os = "macos")]
fn set_flags(pair: (OwnedFd, OwnedFd), flags: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::AsRawFd;
    for fd in [pair.0.as_raw_fd(), pair.1.as_raw_fd()] {
        // SAFETY: fcntl on descriptors we own, with integer arguments.
        let ok = unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
                && (flags == 0 || libc::fcntl(fd, libc::F_SETFL, flags) == 0)
        };
        if !ok {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(pair)
}

/// A pipe as (read end, write end), close-on-exec, with extra status `flags` (O_NONBLOCK).
#[cfg(target_os = "macos")]
pub fn pipe_cloexec(flags: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    set_flags(owned(fds), flags)
}

/// A connected pair of Unix stream sockets, close-on-exec.
#[cfg(target_os = "macos")]
pub fn socketpair_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    set_flags(owned(fds), 0)
}

//! Pipes: their capacity cannot be set on the BSDs (no F_SETPIPE_SZ; FreeBSD grows a pipe's
//! buffer itself up to 64 KiB, macOS up to 64 KiB as well).

use std::os::fd::RawFd;

pub use super::super::fds::{pipe_cloexec, socketpair_cloexec};

/// Refused: there is no call that sets a pipe's capacity here.
pub fn set_capacity(_fd: RawFd, capacity: usize) -> Result<(), String> {
    Err(format!(
        "pipe capacity cannot be set on {} (no F_SETPIPE_SZ): cannot give a pipe {capacity} bytes",
        crate::platform::CURRENT.title()
    ))
}

//! Pipes: their capacity cannot be set on the BSDs (no F_SETPIPE_SZ; FreeBSD grows a pipe's
//! buffer itself up to 64 KiB, macOS up to 64 KiB as well).

use std::os::fd::RawFd;

pub use super::super::fds::{pipe_cloexec, socketpair_cloexec};
pub use crate::platform::contract::pipe::CapacityError;

/// Refused: there is no call that sets a pipe's capacity here.
pub fn set_capacity(_fd: RawFd, capacity: usize) -> Result<(), CapacityError> {
    Err(CapacityError::NoCall {
        os: crate::platform::CURRENT.title(),
        capacity,
    })
}

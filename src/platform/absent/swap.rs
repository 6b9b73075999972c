//! No temporary swap: `--swap` makes a swap area with Linux's swapon(2) (a file, or a zram
//! device), and this system's swap is not managed by oslab yet; a run with it is refused in
//! one line.

use std::path::Path;

pub use crate::platform::contract::swap::SwapError;

/// What kind of temporary swap to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapKind {
    File,
    Zram,
}

/// Never built: see the module.
pub enum TempSwap {}

impl TempSwap {
    /// Refused: see the module.
    pub fn create(_kind: SwapKind, _bytes: u64) -> Result<TempSwap, SwapError> {
        Err(SwapError::Unsupported {
            os: crate::platform::CURRENT.title(),
            why: "oslab makes a temporary swap area with Linux's swapon(2) only",
        })
    }

    pub fn path(&self) -> &Path {
        match *self {}
    }

    pub fn describe(&self) -> String {
        match *self {}
    }
}

/// Nothing to remove: no oslab made swap here.
pub fn remove_stale() {}

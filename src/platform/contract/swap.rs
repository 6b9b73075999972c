//! Why a temporary swap area could not be made or removed, as every backend says it; the
//! command line adds what the user can change (its option names are not this layer's).

use std::io;
use std::path::PathBuf;

/// Why `swap::TempSwap::create` made no area, or an area was not removed.
#[derive(Debug, thiserror::Error)]
pub enum SwapError {
    /// swapon(2) needs CAP_SYS_ADMIN, which only root has here.
    #[error("needs root (swapon(2) needs CAP_SYS_ADMIN)")]
    NotRoot,
    /// Making the file or device failed: `what` says which step, `hint` what may help.
    #[error("{what}: {source}{hint}")]
    Make {
        what: String,
        #[source]
        source: io::Error,
        hint: &'static str,
    },
    /// The zram control file answered something that is not a device number.
    #[error("{0}")]
    Zram(String),
    /// swapon refused the area; `file`: a swap file, which some file systems cannot hold.
    #[error(
        "swapon {} failed: {source}{}",
        path.display(),
        if *file { "; its file system may not hold swap files (tmpfs, btrfs without nocow)" } else { "" }
    )]
    Swapon {
        path: PathBuf,
        file: bool,
        #[source]
        source: io::Error,
    },
    /// An area made for a run could not be switched off or removed: `what` says which, `fix`
    /// how to do it by hand.
    #[error("{what}: {source}{fix}")]
    Leftover {
        what: String,
        #[source]
        source: io::Error,
        fix: String,
    },
    /// This system's swap is not oslab's to make.
    #[error("a temporary swap area is not available on {os}: {why}")]
    Unsupported { os: &'static str, why: &'static str },
}

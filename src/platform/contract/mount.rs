//! The mount a directory is on, as every backend describes it; which file systems keep their
//! files in memory is the backend's (`mount::MEMORY_FILE_SYSTEMS`).

/// Why the mount of a directory was not found.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// The directory does not resolve to a canonical path.
    #[error("cannot resolve {}: {source}", path.display())]
    Resolve {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The path has a NUL byte, which no system call takes.
    #[error("{} holds a NUL byte", path.display())]
    Nul { path: std::path::PathBuf },
    /// The system would not say: `asking` is the call or the file (`statfs /home`,
    /// `cannot read /proc/self/mountinfo`).
    #[error("{asking}: {source}")]
    Query {
        asking: String,
        #[source]
        source: std::io::Error,
    },
    /// No mount covers the path (a mount table without `/`).
    #[error("no mount covers {}", path.display())]
    Uncovered { path: std::path::PathBuf },
}

/// The mount a directory is on, reduced to what a result needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub mount_point: String,
    /// `ext4`, `tmpfs`, `ufs`, `apfs`, `NTFS`…
    pub fstype: String,
    /// The mounted device, data set or volume (`/dev/vda`, `zroot/ROOT/default`,
    /// `\\?\Volume{…}\`).
    pub source: String,
    /// The mount's options, comma-joined (`rw,relatime`).
    pub options: String,
}

impl Mount {
    /// File systems whose files live only in memory: nothing they do reaches a device, so
    /// fsync, O_DSYNC, O_DIRECT and "cold" reads measure the cache again.
    pub fn memory_backed(&self) -> bool {
        crate::platform::mount::MEMORY_FILE_SYSTEMS.contains(&self.fstype.as_str())
    }

    /// `ext4 on /dev/vda at / (rw,relatime,…)`.
    pub fn describe(&self) -> String {
        format!(
            "{} on {} at {} ({})",
            self.fstype, self.source, self.mount_point, self.options
        )
    }
}

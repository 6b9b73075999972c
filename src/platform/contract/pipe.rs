//! Why a pipe could not be given the capacity asked for, as every backend says it: the
//! caller decides whether that makes an experiment unsupported or failed.

/// Why `pipe::set_capacity` did not set exactly the capacity asked for.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// More than the call's integer argument holds.
    #[error("a pipe capacity of {0} bytes is too large")]
    TooLarge(usize),
    /// The kernel refused it (above `fs.pipe-max-size` without CAP_SYS_RESOURCE, most often).
    #[error(
        "cannot set a pipe capacity of {capacity} bytes: {source} (fs.pipe-max-size is \
         {limit}; more needs CAP_SYS_RESOURCE)"
    )]
    Refused {
        capacity: usize,
        /// `fs.pipe-max-size` as read, `?` when unreadable.
        limit: String,
        #[source]
        source: std::io::Error,
    },
    /// The kernel set another capacity: it rounds up to a power of two of pages.
    #[error(
        "the kernel rounds a pipe capacity of {capacity} bytes to {got}: give a power of two \
         of pages (e.g. 64K)"
    )]
    Rounded { capacity: usize, got: i64 },
    /// The system has no call that sets a pipe's capacity.
    #[error(
        "pipe capacity cannot be set on {os} (no F_SETPIPE_SZ): cannot give a pipe {capacity} \
         bytes"
    )]
    NoCall { os: &'static str, capacity: usize },
}

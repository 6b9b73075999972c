//! The tracer's types, the same for every backend (`platform::systrace`).

use std::ffi::OsString;
use std::io;

/// What to run traced, and how its standard input and output are connected.
#[derive(Debug, Clone, Default)]
pub struct TraceCommand {
    pub argv: Vec<OsString>,
    /// Written to the command's stdin (a pipe, closed after it) before it is released;
    /// `None`: stdin is inherited. At most [`MAX_STDIN`] bytes: it must fit in the pipe.
    pub stdin: Option<Vec<u8>>,
    /// Collect stdout into `Traced::stdout` instead of inheriting it.
    pub capture_stdout: bool,
    /// Send the command's stdout to oslab's stderr (when oslab's stdout carries a document).
    pub stdout_to_stderr: bool,
    /// Variables set in the command's environment, besides oslab's own.
    pub env: Vec<(OsString, OsString)>,
    /// Count only between the first two marker calls (`MARK_NR`). The eBPF backend does
    /// this in the kernel (`Traced::marked`); the records backend keeps every record, and
    /// `analysis::trace::claims` finds the window in them.
    pub marked: bool,
    /// A perf record per call instead of counting in the kernel.
    pub records: bool,
}

/// The most bytes [`TraceCommand::stdin`] may hold: a pipe's default capacity is 64 KiB, and
/// the held command reads nothing until it is released.
pub const MAX_STDIN: usize = 60 << 10;

/// Why a command could not be traced.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot run {0}: {1}")]
    Command(String, io::Error),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C, SIGTERM or SIGHUP came (the signal's number): the traced command and all it
    /// started were killed.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

//! No system-call tracing: Linux's tracer counts in the kernel with eBPF or reads perf
//! records of the raw_syscalls tracepoints, neither of which exists here; `oslab trace`
//! refuses in one line.

use std::ffi::OsString;

use crate::model::trace::Traced;

/// The number of Linux's marker call (see the Linux backend); kept so a trace read from
/// elsewhere is analysed alike. No marker call is made here.
pub const MARK_NR: i64 = 0x6f73_6c62;

/// The marker call bounds a traced window; without a tracer there is no window to bound.
pub fn mark() {}

pub use crate::platform::contract::systrace::{MAX_STDIN, TraceCommand, TraceError};

fn refused() -> TraceError {
    TraceError::Refused(super::refusal(
        "system-call tracing",
        super::super::this_os::why::TRACING,
    ))
}

/// Refused: see the module.
pub fn trace_command(
    _argv: &[OsString],
    _stdout_to_stderr: bool,
    _records: bool,
) -> Result<Traced, TraceError> {
    Err(refused())
}

/// Refused: see the module.
pub fn trace(_command: &TraceCommand) -> Result<Traced, TraceError> {
    Err(refused())
}

/// A call by its number: no table of names is kept here.
pub fn syscall_name(nr: i64) -> String {
    format!("nr{nr}")
}

/// execve's number (59 on FreeBSD and macOS alike).
pub const EXECVE: i64 = 59;
/// The calls that end a task and never return: exit (1) on FreeBSD and macOS.
pub const EXITS: [i64; 2] = [1, 1];

#[cfg(unix)]
pub use crate::platform::unix::process::describe_status;

/// An exit code in words (Windows has no wait status: the code is all there is).
#[cfg(windows)]
pub fn describe_status(status: i32) -> (String, Option<i32>) {
    (format!("exit code {status}"), Some(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracing_is_refused_in_one_line() {
        let e = trace_command(&["true".into()], false, false).unwrap_err();
        assert!(matches!(&e, TraceError::Refused(why) if !why.contains('\n')));
    }
}

//! `oslab trace -- COMMAND`: every system call a command and its children make.

use super::*;
use crate::platform::systrace::{self, TraceError};

pub(super) fn trace(command: &[std::ffi::OsString], json: bool) -> Result<ExitCode> {
    let shown = command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let traced = systrace::trace_command(command).map_err(|e| match e {
        TraceError::Command(..) => {
            UserError::BadOption(format!("{e}; check the command's name and PATH"))
        }
        TraceError::Refused(why) => UserError::BadOption(format!("cannot trace here: {why}")),
        TraceError::Failed(why) => UserError::BadOption(format!("cannot trace {shown}: {why}")),
    })?;
    let summary = crate::analysis::trace::summarize(
        &traced,
        &systrace::syscall_name,
        systrace::EXECVE,
        &systrace::EXITS,
    );
    let (status, code) = systrace::describe_status(traced.status);
    let heading = report::trace::Heading {
        command: &shown,
        status,
        wall_ns: traced.wall.as_nanos() as f64,
        method: "perf_event records of the raw_syscalls tracepoints (every call is written to a ring buffer)",
    };
    let text = if json {
        let mut s = serde_json::to_string_pretty(&report::trace::json(&summary, &heading, code))?;
        s.push('\n');
        s
    } else {
        report::trace::render(&summary, &heading)
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

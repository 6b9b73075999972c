//! `oslab trace -- COMMAND`: every system call a command and its children make.

use super::*;
use crate::model::trace::Method;
use crate::platform::systrace::{self, TraceError};

pub(super) fn trace(command: &[std::ffi::OsString], json: bool, records: bool) -> Result<ExitCode> {
    let shown = command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let traced = systrace::trace_command(command, records).map_err(|e| match e {
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
    let method = match &traced.method {
        Method::Counted => "eBPF programs on the raw_syscalls tracepoints, counting in the kernel \
                            (medians from quarter-octave histograms)"
            .to_string(),
        Method::Recorded { not_counted: None } => {
            "perf_event records of the raw_syscalls tracepoints (a record per call, as --records \
             asked)"
                .to_string()
        }
        Method::Recorded {
            not_counted: Some(not_counted),
        } => format!(
            "perf_event records of the raw_syscalls tracepoints (a record per call; slower), \
             because {not_counted}"
        ),
    };
    let heading = report::trace::Heading {
        command: &shown,
        status,
        wall_ns: traced.wall.as_nanos() as f64,
        backend: match traced.method {
            Method::Counted => "ebpf",
            Method::Recorded { .. } => "perf_records",
        },
        method: &method,
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

//! `oslab maps`: the annotated memory map of a process.

use super::*;

/// `oslab maps [PID]`: without a PID, a fresh child is mapped (and a second one started to see
/// what ASLR moved).
pub(super) fn maps(pid: Option<u32>, json: bool) -> Result<ExitCode> {
    let report = match pid {
        Some(pid) => crate::harness::maps::inspect_pid(pid)?,
        None => crate::harness::maps::inspect_child()?,
    };
    let text = if json {
        let mut s = serde_json::to_string_pretty(&report::maps::document(&report))?;
        s.push('\n');
        s
    } else {
        report::maps::render(&report)
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

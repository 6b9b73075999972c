//! The system calls of a traced command as the platform recorded them (`oslab trace`): each
//! entry and exit, and the executable files mapped into the traced processes.

use std::time::Duration;

/// One tracepoint record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysEvent {
    /// A task entered system call `nr`, from user address `ip` (0 if unknown).
    Enter {
        pid: u32,
        tid: u32,
        time: u64,
        nr: i64,
        ip: u64,
    },
    /// A task left system call `nr` with `ret` (-4095..-1: an error, its errno negated).
    Exit {
        pid: u32,
        tid: u32,
        time: u64,
        nr: i64,
        ret: i64,
    },
}

impl SysEvent {
    pub fn time(&self) -> u64 {
        match *self {
            SysEvent::Enter { time, .. } | SysEvent::Exit { time, .. } => time,
        }
    }
}

/// An executable file mapped into a traced process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub pid: u32,
    pub start: u64,
    pub len: u64,
    pub path: String,
}

/// What tracing a command gave.
#[derive(Debug, Clone, Default)]
pub struct Traced {
    /// In time order.
    pub events: Vec<SysEvent>,
    pub mappings: Vec<Mapping>,
    /// The command's process id.
    pub pid: u32,
    /// Records the kernel dropped (a ring buffer was full).
    pub lost: u64,
    /// The command's wait status.
    pub status: i32,
    pub wall: Duration,
    /// What the command wrote to its stdout, when it was captured.
    pub stdout: Vec<u8>,
}

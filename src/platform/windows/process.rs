//! Processes on Windows. A worker and everything it starts run in a job object that kills
//! them all when oslab closes it (or dies: the system closes its handles); a process tied to
//! its parent keeps a thread waiting on the parent's handle and ends itself when the parent
//! does. A crash ends a process with an NTSTATUS exception code as its exit code.

pub use crate::platform::contract::killed::Killed;

use std::process::{Child, Command, ExitStatus};

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_ACCESS_DENIED, GetLastError, HANDLE, INVALID_HANDLE_VALUE, STILL_ACTIVE,
    WAIT_OBJECT_0,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, INFINITE, OpenProcess,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, TerminateProcess, WaitForSingleObject,
};

/// A worker's job object: the worker and whatever it starts, killed together, also when
/// oslab dies (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
pub struct Group {
    job: HANDLE,
}

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for Group {}

impl Group {
    /// Nothing to prepare: the job is made after the start (see [`Group::of`]).
    pub fn prepare(_command: &mut Command) {}

    /// A new job holding `child` (which has not started anything yet: it waits for its job
    /// on stdin).
    pub fn of(child: &Child) -> std::io::Result<Group> {
        use std::os::windows::io::AsRawHandle;
        // SAFETY: an anonymous job with default security; closed on drop.
        let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let group = Group { job };
        // SAFETY: an all-zero limit structure is valid; one flag is set.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the job handle above and a sized structure.
        let set = unsafe {
            SetInformationJobObject(
                job,
                JobObjectExtendedLimitInformation,
                (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        // SAFETY: the job and the child's process handle, both open.
        if set == 0 || unsafe { AssignProcessToJobObject(job, child.as_raw_handle()) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(group)
    }

    /// End every process of the job.
    pub fn kill(&self) {
        // SAFETY: our job handle.
        unsafe { TerminateJobObject(self.job, 1) };
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: closing our job handle (which kills what is left in it).
        unsafe { CloseHandle(self.job) };
    }
}

/// The NTSTATUS codes a crash ends a process with, by name.
const EXCEPTIONS: [(u32, &str); 7] = [
    (0xC000_0005, "STATUS_ACCESS_VIOLATION"),
    (0xC000_001D, "STATUS_ILLEGAL_INSTRUCTION"),
    (0xC000_0094, "STATUS_INTEGER_DIVIDE_BY_ZERO"),
    (0xC000_00FD, "STATUS_STACK_OVERFLOW"),
    (0xC000_0409, "STATUS_STACK_BUFFER_OVERRUN (abort)"),
    (0xC000_013A, "STATUS_CONTROL_C_EXIT"),
    (0x8000_0003, "STATUS_BREAKPOINT"),
];

/// How a process ended: `Ok(code)`, or `Err` naming the exception that ended it.
pub fn ending(status: ExitStatus) -> Result<i32, Killed> {
    let code = status.code().unwrap_or(-1);
    let raw = code as u32;
    match EXCEPTIONS.iter().find(|(c, _)| *c == raw) {
        Some((_, name)) => Err(Killed::Exception {
            code: raw,
            name: Some(name),
        }),
        None if raw >= 0xC000_0000 => Err(Killed::Exception {
            code: raw,
            name: None,
        }),
        None => Ok(code),
    }
}

/// The id of this process's parent (a Toolhelp snapshot: Windows keeps it, even after the
/// parent has gone and its id was reused).
fn parent_id() -> Option<u32> {
    // SAFETY: a snapshot of the process list, closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return None;
    }
    // SAFETY: an all-zero entry is valid; dwSize tells its size.
    let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    let me = std::process::id();
    let mut parent = None;
    // SAFETY: the snapshot and a sized entry.
    let mut more = unsafe { Process32FirstW(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32ProcessID == me {
            parent = Some(entry.th32ParentProcessID);
            break;
        }
        // SAFETY: as above.
        more = unsafe { Process32NextW(snapshot, &mut entry) } != 0;
    }
    // SAFETY: closing the snapshot taken above.
    unsafe { CloseHandle(snapshot) };
    parent
}

/// Be ended when the parent process ends (see [`die_with_parent_of`]).
pub fn die_with_parent() {
    if let Some(parent) = parent_id() {
        die_with_parent_of(parent);
    }
}

/// End this process when process `parent` ends: a thread waits on the parent's handle. False
/// when the parent is already gone (exit now).
pub fn die_with_parent_of(parent: u32) -> bool {
    // SAFETY: OpenProcess with plain values; the handle lives as long as the waiting thread.
    let handle = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, parent) };
    if handle.is_null() {
        return false;
    }
    let handle = handle as usize;
    std::thread::spawn(move || {
        // SAFETY: waiting on the parent's handle, then ending this process.
        unsafe {
            if WaitForSingleObject(handle as HANDLE, INFINITE) == WAIT_OBJECT_0 {
                TerminateProcess(GetCurrentProcess(), 1);
            }
        }
    });
    true
}

/// The exit code of process `pid` (STILL_ACTIVE while it runs); `Err(true)` when it exists
/// but may not be queried, `Err(false)` when there is no such process.
fn exit_code(pid: u32) -> Result<u32, bool> {
    // SAFETY: OpenProcess with plain values; the handle is closed below.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        // SAFETY: no preconditions.
        return Err(unsafe { GetLastError() } == ERROR_ACCESS_DENIED);
    }
    let mut code = 0u32;
    // SAFETY: an open handle with query rights, a pointer to a local.
    let ok = unsafe { GetExitCodeProcess(handle, &mut code) } != 0;
    // SAFETY: closing the handle opened above.
    unsafe { CloseHandle(handle) };
    if ok { Ok(code) } else { Err(true) }
}

/// Whether process `pid` still runs (one of another user counts as running).
pub fn is_alive(pid: u32) -> bool {
    match exit_code(pid) {
        Ok(code) => code == STILL_ACTIVE as u32,
        Err(exists) => exists,
    }
}

/// Whether process `pid` has ended.
pub fn has_ended(pid: i32) -> bool {
    u32::try_from(pid).map_or(true, |pid| !is_alive(pid))
}

/// Windows has no out-of-memory killer to steer: nothing to do.
pub fn prefer_for_oom_kill() -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_lives_and_its_parent_is_known() {
        assert!(is_alive(std::process::id()));
        assert!(!is_alive(u32::MAX - 3));
        assert!(parent_id().is_some());
    }
}

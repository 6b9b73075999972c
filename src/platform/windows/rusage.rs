//! Resource usage on Windows, in getrusage's terms: CPU times from GetProcessTimes, page
//! faults and the peak working set from GetProcessMemoryInfo, and what only the kernel's
//! process records hold (NtQuerySystemInformation(SystemProcessInformation)): hard faults
//! and each thread's context switches.
//!
//! What maps how:
//! - `minflt` = PageFaultCount less the hard faults (Windows counts soft faults, demand-zero
//!   and copy-on-write ones together, like Linux's minor faults), `majflt` = hard faults (read
//!   from a file or the page file);
//! - `nvcsw` = the context switches of the process's live threads (Windows does not split
//!   voluntary from involuntary: the total is recorded as voluntary and `nivcsw` is 0). The
//!   switches of a thread that has ended leave the sum with it, so only experiments whose
//!   threads live through the samples check switches;
//! - `inblock`/`oublock` = 0: Windows counts I/O operations, not blocks, and cannot tell the
//!   cache's from the disk's. No reaped-children totals exist.

use windows_sys::Wdk::System::SystemInformation::{
    NtQuerySystemInformation, SystemProcessInformation,
};
use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, HANDLE};
use windows_sys::Win32::System::ProcessStatus::{GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::System::WindowsProgramming::{
    SYSTEM_PROCESS_INFORMATION, SYSTEM_THREAD_INFORMATION,
};

use crate::model::Rusage;

/// Microseconds in a FILETIME span (100 ns units).
fn us(t: FILETIME) -> i64 {
    ((u64::from(t.dwHighDateTime) << 32 | u64::from(t.dwLowDateTime)) / 10) as i64
}

/// What the kernel's process record adds to the documented calls.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Record {
    hard_faults: u32,
    /// Context switches of every thread, or of the one asked for.
    switches: u64,
}

/// STATUS_INFO_LENGTH_MISMATCH: the buffer was too small.
const TOO_SMALL: i32 = 0xC000_0004_u32 as i32;

/// The record of process `pid` (and of its thread `tid`) in the system's process records.
///
/// The records are read into one buffer kept for the thread and grown, never freed: a fresh
/// buffer per reading would fault its pages in between the two readings around a sample, and
/// those faults would be counted as the sample's.
fn record_of(pid: u32, tid: Option<u32>) -> Option<Record> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|buffer| {
        if buffer.is_empty() {
            buffer.resize(64 * 1024, 0);
        }
        for _ in 0..8 {
            let bytes = (buffer.len() * 8) as u32;
            let mut needed = 0u32;
            // SAFETY: `buffer` has `bytes` writable bytes.
            let status = unsafe {
                NtQuerySystemInformation(
                    SystemProcessInformation,
                    buffer.as_mut_ptr().cast(),
                    bytes,
                    &mut needed,
                )
            };
            match status {
                0 => return find(buffer, pid, tid),
                TOO_SMALL => buffer.resize((needed as usize / 8 + 1).max(buffer.len()) * 2, 0),
                _ => return None,
            }
        }
        None
    })
}

/// The record of process `pid` (and of its thread `tid`, when given) in `records`.
fn find(records: &[u64], pid: u32, tid: Option<u32>) -> Option<Record> {
    let bytes = records.len() * 8;
    let base = records.as_ptr().cast::<u8>();
    let mut offset = 0usize;
    let process_size = std::mem::size_of::<SYSTEM_PROCESS_INFORMATION>();
    let thread_size = std::mem::size_of::<SYSTEM_THREAD_INFORMATION>();
    while offset + process_size <= bytes {
        // SAFETY: in bounds (checked above); read unaligned: Wine packs its records.
        let p = unsafe {
            std::ptr::read_unaligned(base.add(offset).cast::<SYSTEM_PROCESS_INFORMATION>())
        };
        if p.UniqueProcessId as usize == pid as usize {
            let threads = p.NumberOfThreads as usize;
            let first = offset + process_size;
            if first + threads * thread_size > bytes {
                return None;
            }
            let switches = (0..threads)
                .map(|i| {
                    // SAFETY: the thread records follow the process record, in bounds
                    // (checked above).
                    unsafe {
                        std::ptr::read_unaligned(
                            base.add(first + i * thread_size)
                                .cast::<SYSTEM_THREAD_INFORMATION>(),
                        )
                    }
                })
                .filter(|t| tid.is_none_or(|tid| t.ClientId.UniqueThread as usize == tid as usize))
                // Reserved3 is ContextSwitches in the full structure.
                .map(|t| u64::from(t.Reserved3))
                .sum();
            // Reserved1 holds WorkingSetPrivateSize (8 bytes), then HardFaultCount.
            let hard_faults = u32::from_ne_bytes(p.Reserved1[8..12].try_into().ok()?);
            return Some(Record {
                hard_faults,
                switches,
            });
        }
        match p.NextEntryOffset as usize {
            0 => break,
            next => offset += next,
        }
    }
    None
}

/// A process's usage through its handle, completed by its kernel record.
fn of_handle(process: HANDLE, pid: u32, tid: Option<u32>) -> Option<Rusage> {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: a process handle with query rights and pointers to locals.
    if unsafe { GetProcessTimes(process, &mut created, &mut exited, &mut kernel, &mut user) } == 0 {
        return None;
    }
    // The kernel's record first, so that anything reading it costs is counted before the
    // page-fault count is taken, not in the next sample.
    let record = record_of(pid, tid).unwrap_or_default();
    // SAFETY: an all-zero PROCESS_MEMORY_COUNTERS is valid; cb tells its size.
    let mut memory: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    memory.cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    // SAFETY: as above.
    unsafe { GetProcessMemoryInfo(process, &mut memory, memory.cb) };
    let faults = i64::from(memory.PageFaultCount);
    let hard = i64::from(record.hard_faults).min(faults);
    Some(Rusage {
        utime_us: us(user),
        stime_us: us(kernel),
        maxrss_kb: (memory.PeakWorkingSetSize / 1024) as i64,
        minflt: faults - hard,
        majflt: hard,
        inblock: 0,
        oublock: 0,
        nvcsw: record.switches as i64,
        nivcsw: 0,
    })
}

/// This process's usage.
pub fn this_process() -> Rusage {
    // SAFETY: the pseudo-handle of this process.
    of_handle(unsafe { GetCurrentProcess() }, std::process::id(), None).unwrap_or_default()
}

/// Windows counts page faults per process only (GetProcessMemoryInfo): no thread's own usage.
pub fn this_thread() -> Option<Rusage> {
    None
}

/// Windows keeps no totals of ended children: always zero.
pub fn reaped_children() -> Rusage {
    Rusage::default()
}

/// The usage of process `pid`, with the context switches of its thread `tid` only when `tid`
/// differs from `pid`; `None` when it is gone.
pub fn of_task(pid: i32, tid: i32) -> Option<Rusage> {
    let pid = u32::try_from(pid).ok()?;
    // SAFETY: OpenProcess with plain values; the handle is closed below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return None;
    }
    let tid = u32::try_from(tid).ok().filter(|&t| t != pid);
    let usage = of_handle(process, pid, tid);
    // SAFETY: closing the handle opened above.
    unsafe { CloseHandle(process) };
    usage
}

/// Whether a yield that picks the caller again counts as a switch: no (Windows counts the
/// thread's context switches, and SwitchToThread without a ready thread switches nowhere).
pub const YIELD_COUNTS_VOLUNTARY: bool = false;

/// Whether a thread's exit adds a switch to the process's usage: no (the switches are summed
/// over the threads that exist).
pub const THREAD_EXIT_COUNTS_VOLUNTARY: bool = false;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_described() {
        let before = this_process();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let after = this_process();
        assert!(after.utime_us + after.stime_us >= before.utime_us + before.stime_us);
        assert!(after.maxrss_kb > 0);
        assert!(of_task(std::process::id() as i32, std::process::id() as i32).is_some());
        assert!(record_of(std::process::id(), None).is_some());
    }
}

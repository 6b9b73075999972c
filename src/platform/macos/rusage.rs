//! getrusage(2) for this process and its children (shared with every Unix), and another
//! process's usage from proc_pidinfo(PROC_PIDTASKINFO).

use crate::model::Rusage;

pub use super::super::unix::rusage::{from_libc, reaped_children, this_process, this_thread};

/// The task information of process `pid`; `None` when it is gone or a zombie.
pub(super) fn task_info(pid: libc::pid_t) -> Option<libc::proc_taskinfo> {
    // SAFETY: an all-zero proc_taskinfo is a valid value of the plain C struct.
    let mut info: libc::proc_taskinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_taskinfo>() as libc::c_int;
    // SAFETY: `info` has `size` writable bytes.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTASKINFO,
            0,
            (&mut info as *mut libc::proc_taskinfo).cast(),
            size,
        )
    };
    (n == size).then_some(info)
}

/// Nanoseconds per Mach time unit: proc_taskinfo's times are Mach ticks (1 ns on Intel,
/// 125/3 ns on Apple silicon), from the timebase frequency `hw.tbfrequency`.
fn nanos_per_tick() -> f64 {
    match super::super::unix::bsd::sysctl::number("hw.tbfrequency") {
        Some(hz) if hz > 0 => 1e9 / hz as f64,
        _ => 1.0,
    }
}

/// The usage of process `pid` (`tid` is not used: macOS gives no per-thread figures to
/// another process; the partners are single-threaded). Context switches come as one total,
/// recorded as voluntary; minor faults are the faults less the page-ins; the peak RSS is not
/// known (0). `None` when the process is gone.
pub fn of_task(pid: i32, _tid: i32) -> Option<Rusage> {
    let info = task_info(pid)?;
    let us = |ticks: u64| (ticks as f64 * nanos_per_tick() / 1000.0) as i64;
    Some(Rusage {
        utime_us: us(info.pti_total_user),
        stime_us: us(info.pti_total_system),
        maxrss_kb: 0,
        minflt: i64::from(info.pti_faults.saturating_sub(info.pti_pageins)),
        majflt: i64::from(info.pti_pageins),
        inblock: 0,
        oublock: 0,
        nvcsw: i64::from(info.pti_csw),
        nivcsw: 0,
    })
}

/// Whether a `sched_yield` that picks the caller again counts as a voluntary switch: assumed
/// not, as on Linux (not yet observed on macOS).
pub const YIELD_COUNTS_VOLUNTARY: bool = false;

/// Whether a thread's exit adds a voluntary switch to the process's usage: assumed not, as
/// on Linux (not yet observed on macOS).
pub const THREAD_EXIT_COUNTS_VOLUNTARY: bool = false;

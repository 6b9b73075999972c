//! getrusage(2) deltas: the kernel's own per-process accounting, available without perf.

use crate::model::Rusage;

pub use super::super::unix::rusage::{from_libc, reaped_children, this_process, this_thread};

/// The rusage-shaped figures of another task, read from /proc: faults and CPU time from
/// `/proc/PID/task/TID/stat` (proc(5) fields 10, 12, 14, 15), context switches from `status`,
/// the high-water RSS from the process's `status`. Block I/O is not available per task (0).
/// `None` when the task is gone or unreadable.
pub fn of_task(pid: i32, tid: i32) -> Option<Rusage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let process_status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_task(&stat, &status, &process_status, clock_ticks_per_second())
}

pub(super) fn clock_ticks_per_second() -> i64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz } else { 100 }
}

/// Parse /proc task files (pure, for tests).
pub(super) fn parse_task(
    stat: &str,
    status: &str,
    process_status: &str,
    ticks_per_s: i64,
) -> Option<Rusage> {
    // The command name (field 2) may hold spaces and parentheses: fields start after the
    // last ')'. Field 3 (state) is then the first.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Option<i64> { fields.get(n - 3)?.parse().ok() };
    let status_field = |text: &str, key: &str| -> Option<i64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    // A tick count too large for microseconds in an i64 is no process's (a garbled file).
    let us = |ticks: i64| Some(ticks.checked_mul(1_000_000)? / ticks_per_s.max(1));
    Some(Rusage {
        utime_us: us(field(14)?)?,
        stime_us: us(field(15)?)?,
        maxrss_kb: status_field(process_status, "VmHWM:").unwrap_or(0),
        minflt: field(10)?,
        majflt: field(12)?,
        inblock: 0,
        oublock: 0,
        nvcsw: status_field(status, "voluntary_ctxt_switches:")?,
        nivcsw: status_field(status, "nonvoluntary_ctxt_switches:")?,
    })
}

/// Whether a `sched_yield` that picks the caller again counts as a voluntary switch: no on
/// Linux, where `__schedule` counts a switch only when it switches, and counts a yield's as
/// involuntary (the task stays runnable).
pub const YIELD_COUNTS_VOLUNTARY: bool = false;

/// Whether a thread's exit adds a voluntary switch to the process's usage: no on Linux (the
/// dead thread's last switch happens after its counts were added to the process's).
pub const THREAD_EXIT_COUNTS_VOLUNTARY: bool = false;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_task_files() {
        let stat =
            "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1234 0 5 0 250 75 0 0 20 0 1 0 1 0 0";
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
        let pstatus = "VmHWM:\t    2048 kB\n";
        let r = parse_task(stat, status, pstatus, 100).unwrap();
        assert_eq!((r.minflt, r.majflt), (1234, 5));
        assert_eq!((r.utime_us, r.stime_us), (2_500_000, 750_000));
        assert_eq!((r.nvcsw, r.nivcsw, r.maxrss_kb), (17, 3, 2048));
        assert!(parse_task("garbage", status, pstatus, 100).is_none());
        // Found by the fuzz target proc_text: ticks beyond i64 microseconds overflowed.
        let huge = stat.replace(" 250 75 ", " 9223372036854775807 75 ");
        assert!(parse_task(&huge, status, pstatus, 100).is_none());
    }

    #[test]
    fn reads_this_thread_from_proc() {
        // SAFETY: getpid and gettid have no preconditions.
        let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
        let before = of_task(pid, tid).expect("own task is readable");
        let mut v = vec![0u8; 4 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let after = of_task(pid, tid).expect("own task is readable");
        let faults = after.minflt - before.minflt;
        assert!(
            faults >= 1000,
            "touched 1024 pages, this thread faulted {faults} times"
        );
    }

    #[test]
    fn touching_memory_counts_minor_faults() {
        let before = super::this_process();
        let mut v = vec![0u8; 16 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let after = super::this_process();
        let d = crate::model::Rusage::delta(&before, &after);
        assert!(
            d.minflt >= 1000,
            "4096 pages touched, {} minor faults",
            d.minflt
        );
        assert!(d.maxrss_kb >= 16 << 10);
    }
}

//! getrusage(2) for this process and its children (shared with every Unix), and another
//! process's or thread's usage from its `kinfo_proc` (sysctl KERN_PROC_PID, `ki_rusage`).

use crate::model::Rusage;

pub use super::super::unix::rusage::{from_libc, reaped_children, this_process, this_thread};

/// The `kinfo_proc` entries of process `pid`: one for the process, or one per thread with
/// `threads` (KERN_PROC_INC_THREAD). Empty when it is gone or cannot be read.
pub(super) fn kinfo(pid: libc::pid_t, threads: bool) -> Vec<libc::kinfo_proc> {
    let flag = if threads {
        libc::KERN_PROC_INC_THREAD
    } else {
        0
    };
    let mib = [
        libc::CTL_KERN,
        libc::KERN_PROC,
        libc::KERN_PROC_PID | flag,
        pid,
    ];
    let size = std::mem::size_of::<libc::kinfo_proc>();
    // Room for 64 threads; a busier process reports ENOMEM and gives the first ones only.
    let mut buf: Vec<libc::kinfo_proc> = Vec::with_capacity(64);
    let mut len: libc::size_t = size * buf.capacity();
    // SAFETY: `buf` has room for `len` bytes; the kernel writes at most that and says how
    // much it wrote.
    let rc = unsafe {
        libc::sysctl(
            mib.as_ptr(),
            mib.len() as libc::c_uint,
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null(),
            0,
        )
    };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOMEM) {
        return Vec::new();
    }
    let count = (len / size).min(buf.capacity());
    // SAFETY: the kernel filled `count` whole entries.
    unsafe { buf.set_len(count) };
    // An entry of another size than this build's struct is not one we can read.
    buf.retain(|k| k.ki_structsize as usize == size);
    buf
}

/// The usage of thread `tid` of process `pid` (the process's own total when `tid == pid`, as
/// for a single-threaded partner), from `ki_rusage`. `None` when it is gone or unreadable.
pub fn of_task(pid: i32, tid: i32) -> Option<Rusage> {
    let entry = if tid == pid {
        kinfo(pid, false).into_iter().next()?
    } else {
        kinfo(pid, true).into_iter().find(|k| k.ki_tid == tid)?
    };
    Some(from_libc(&entry.ki_rusage))
}

/// Whether a `sched_yield` that picks the caller again counts as a voluntary switch: yes on
/// FreeBSD, where `sched_yield` calls `sched_relinquish`, which calls `mi_switch(SW_VOL)`;
/// mi_switch counts the switch before choosing the next thread (measured on 13.2: 1000
/// voluntary and 0 involuntary switches for 1000 lone calls).
pub const YIELD_COUNTS_VOLUNTARY: bool = true;

/// Whether a thread's exit adds a voluntary switch to the process's usage: yes on FreeBSD,
/// whose `thread_exit` counts the exiting thread's last switch as voluntary and then adds
/// its usage to the process's (measured on 13.2: pthread_create + pthread_join is 1.000
/// voluntary switch for the joining thread, RUSAGE_THREAD, and 2.00 for the process).
pub const THREAD_EXIT_COUNTS_VOLUNTARY: bool = true;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_reads_as_another() {
        let pid = std::process::id() as i32;
        let r = of_task(pid, pid).unwrap();
        assert!(r.utime_us + r.stime_us >= 0);
        assert!(of_task(1 << 30, 1 << 30).is_none());
    }
}

//! The call stacks of the calling thread, sampled: a software `cpu-clock` event at a chosen
//! frequency with `PERF_SAMPLE_CALLCHAIN` (kernel and user frames), read from the event's
//! ring buffer (perf_event_open(2); the ring buffer and record parsing are perf-event2's
//! `Sampler`). `cpu-clock` needs no PMU, so it samples in VMs too (FINDINGS); kernel frames
//! need `perf_event_paranoid` ≤ 1 or CAP_PERFMON, and their names need /proc/kallsyms readable
//! (`kptr_restrict`), which [`KernelSymbols`] reads.
//!
//! The worker enables the sampler around the batches of its profile pass (after its timed
//! samples, which the sampling would slow) and drains it between them, so the stacks are
//! those of the measured operation, not of set-up or warm-up.

use std::io;

use perf_event::events::{Hardware, Software};
use perf_event::{Builder, SampleFlag, Sampler};

/// Callchain entries at or above this are context markers (`PERF_CONTEXT_KERNEL`,
/// `PERF_CONTEXT_USER`, …: -128 and below as u64), not addresses.
const CONTEXT_MAX: u64 = (-4095i64) as u64;
/// `PERF_CONTEXT_KERNEL`: the frames after it, up to the next marker, are the kernel's.
const CONTEXT_KERNEL: u64 = (-128i64) as u64;
/// Frames kept per stack: deeper ones are cut by the kernel (`sample_max_stack`).
const MAX_STACK: u16 = 127;

/// A sampler of one task's stacks, disabled until [`StackSampler::enable`]: one ring buffer,
/// or one per CPU for [`Task::Me`] (the kernel refuses to map the buffer of an inherited
/// event that follows a task on every CPU, so `perf record` opens one per CPU too).
pub struct StackSampler {
    samplers: Vec<Sampler>,
}

pub use crate::platform::contract::stacks::{Clock, Drained, RawStack, Task};

/// Ring buffer sizes a stack sampler tries in turn, per buffer: 1 MiB holds a batch's samples
/// with room to spare; an unprivileged user's locked-memory allowance (`perf_event_mlock_kb`,
/// 516 KiB for all its buffers) fits 256 KiB.
const RINGS: [usize; 2] = [1 << 20, 1 << 18];

/// The event `builder` describes, opened with the largest ring buffer of `rings` (largest
/// first) this user may lock; the last error when none fits.
pub(super) fn sampled_in_largest(builder: &Builder, rings: &[usize]) -> io::Result<Sampler> {
    let mut opened = Err(io::Error::other("no ring buffer size to try"));
    for &ring in rings {
        opened = builder.build().and_then(|c| c.sampled(ring));
        if opened.is_ok() {
            break;
        }
    }
    opened
}

impl StackSampler {
    /// Open, disabled, a sampler of `task` (on whichever CPU it runs) by `clock` at
    /// `frequency_hz` samples per second, each ring buffer the largest of [`RINGS`] this user
    /// may lock.
    pub fn open(task: Task, clock: Clock, frequency_hz: u64) -> io::Result<StackSampler> {
        let mut builder = match clock {
            Clock::Cycles => Builder::new(Hardware::CPU_CYCLES),
            Clock::CpuClock => Builder::new(Software::CPU_CLOCK),
        };
        builder
            .sample_frequency(frequency_hz)
            .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CALLCHAIN)
            .sample_max_stack(MAX_STACK)
            .include_kernel()
            .exclude_hv(true)
            .enabled(false);
        let mut samplers = Vec::new();
        match task {
            Task::Me => {
                builder.inherit(true);
                for cpu in online_cpus() {
                    builder.one_cpu(cpu);
                    samplers.push(sampled_in_largest(&builder, &RINGS)?);
                }
            }
            Task::Thread(tid) => {
                builder.observe_pid(tid);
                samplers.push(sampled_in_largest(&builder, &RINGS)?);
            }
        }
        Ok(StackSampler { samplers })
    }

    pub fn enable(&mut self) -> io::Result<()> {
        self.samplers.iter_mut().try_for_each(|s| s.enable())
    }

    pub fn disable(&mut self) -> io::Result<()> {
        self.samplers.iter_mut().try_for_each(|s| s.disable())
    }

    /// Every record the ring buffer holds now, taken out of it: the samples' stacks and the
    /// count of lost samples. A record that does not parse is skipped.
    pub fn drain(&mut self) -> Drained {
        let mut drained = Drained::default();
        for sampler in &mut self.samplers {
            drain_one(sampler, &mut drained);
        }
        drained
    }
}

/// The CPUs that are online (/sys/devices/system/cpu/online); CPU 0 where that cannot be read.
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| super::cpu::parse_list(t.trim()))
        .filter(|cpus| !cpus.is_empty())
        .unwrap_or_else(|| vec![0])
}

/// Every record one ring buffer holds, into `drained`.
fn drain_one(sampler: &mut Sampler, drained: &mut Drained) {
    while let Some(record) = sampler.next_record() {
        match record.parse_record() {
            Ok(perf_event::data::Record::Sample(sample)) => {
                if let Some(chain) = sample.callchain() {
                    drained.stacks.push(split(chain));
                }
            }
            Ok(perf_event::data::Record::Lost(lost)) => {
                drained.lost = drained.lost.saturating_add(lost.lost);
            }
            _ => {}
        }
    }
}

/// A raw callchain split by its context markers into kernel and user frames (a guest's or
/// hypervisor's frames, which this sampler excludes, go with the user's).
fn split(chain: &[u64]) -> RawStack {
    let mut stack = RawStack::default();
    let mut in_kernel = false;
    for &entry in chain {
        if entry >= CONTEXT_MAX {
            in_kernel = entry == CONTEXT_KERNEL;
        } else if in_kernel {
            stack.kernel.push(entry);
        } else {
            stack.user.push(entry);
        }
    }
    stack
}

/// The kernel's limit on samples per second (`kernel.perf_event_max_sample_rate`), if
/// readable.
pub fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether this process may sample its stacks at `frequency_hz`; `Err`: why not
/// ([`refusal`] words it with the fix).
pub fn check_sampling(frequency_hz: u64) -> io::Result<()> {
    StackSampler::open(Task::Me, Clock::CpuClock, frequency_hz).map(drop)
}

/// One line saying why sampling could not start, naming the fix where there is one.
pub fn refusal(e: &io::Error) -> String {
    if e.raw_os_error() == Some(libc::ENOSYS)
        && let Some(why) = super::env::perf_refusal_under_emulation()
    {
        return why;
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok());
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => format!(
            "perf_event_open refused ({e}; kernel.perf_event_paranoid = {}): run as root, grant \
             CAP_PERFMON, or set `sysctl kernel.perf_event_paranoid=1`",
            paranoid.map_or("unknown".to_string(), |p| p.to_string())
        ),
        Some(libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP | libc::ENOSYS) => {
            format!("this kernel cannot sample cpu-clock with call stacks ({e})")
        }
        _ => format!("perf_event_open failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_markers_split_kernel_from_user_frames() {
        let kernel = (-128i64) as u64;
        let user = (-512i64) as u64;
        let chain = [
            kernel,
            0xffff_ffff_8100_0000,
            0xffff_ffff_8100_0100,
            user,
            0x5555_0000,
        ];
        assert_eq!(
            split(&chain),
            RawStack {
                kernel: vec![0xffff_ffff_8100_0000, 0xffff_ffff_8100_0100],
                user: vec![0x5555_0000],
            }
        );
        assert_eq!(split(&[user, 0x10]).kernel, Vec::<u64>::new());
    }

    #[test]
    fn a_refusal_names_the_fix() {
        let denied = refusal(&io::Error::from_raw_os_error(libc::EACCES));
        assert!(denied.contains("perf_event_paranoid"), "{denied}");
        assert!(denied.contains("CAP_PERFMON"), "{denied}");
        let missing = refusal(&io::Error::from_raw_os_error(libc::ENOENT));
        assert!(missing.contains("cannot sample"), "{missing}");
        let not_implemented = refusal(&io::Error::from_raw_os_error(libc::ENOSYS));
        if crate::platform::unsupported_under_emulation("perf_event_open") {
            assert!(
                not_implemented.starts_with("unsupported under emulation: "),
                "{not_implemented}"
            );
        } else {
            assert!(
                not_implemented.contains("cannot sample"),
                "{not_implemented}"
            );
        }
    }

    /// Samples a busy loop of system calls for real. Where perf_event_open is refused (no
    /// permission, a seccomp filter) there is nothing to check.
    #[test]
    fn a_busy_loop_of_system_calls_is_sampled_with_kernel_frames() {
        let Ok(mut sampler) = StackSampler::open(Task::Me, Clock::CpuClock, 4000) else {
            eprintln!("perf_event_open refused here: nothing sampled");
            return;
        };
        sampler.enable().unwrap();
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(200) {
            // SAFETY: getppid takes no arguments and cannot fail.
            unsafe { libc::getppid() };
        }
        sampler.disable().unwrap();
        let drained = sampler.drain();
        // 200 ms of CPU at 4 kHz is ~800 samples; a loaded VM gives fewer.
        assert!(
            drained.stacks.len() > 50,
            "{} samples",
            drained.stacks.len()
        );
        let kernel = drained
            .stacks
            .iter()
            .filter(|s| !s.kernel.is_empty())
            .count();
        assert!(kernel > 0, "no sample has a kernel frame");
        assert!(
            drained
                .stacks
                .iter()
                .all(|s| !s.kernel.is_empty() || !s.user.is_empty())
        );
    }
}

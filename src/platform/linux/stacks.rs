//! The call stacks of the calling thread, sampled: a software `cpu-clock` event at a chosen
//! frequency with `PERF_SAMPLE_CALLCHAIN` (kernel and user frames), read from the event's
//! ring buffer (perf_event_open(2); the ring buffer and record parsing are perf-event2's
//! `Sampler`). `cpu-clock` needs no PMU, so it samples in VMs too (FINDINGS); kernel frames
//! need `perf_event_paranoid` ≤ 1 or CAP_PERFMON, and their names need /proc/kallsyms readable
//! (`kptr_restrict`), which [`KernelSymbols`] reads.
//!
//! The worker enables the sampler around its timed samples and drains it between them, so
//! the stacks are those of the measured operation, not of set-up or warm-up.

use std::io;

use perf_event::events::Software;
use perf_event::{Builder, SampleFlag, Sampler};

/// Callchain entries at or above this are context markers (`PERF_CONTEXT_KERNEL`,
/// `PERF_CONTEXT_USER`, …: -128 and below as u64), not addresses.
const CONTEXT_MAX: u64 = (-4095i64) as u64;
/// Frames kept per stack: deeper ones are cut by the kernel (`sample_max_stack`).
const MAX_STACK: u16 = 127;

/// A sampler of the calling thread's stacks, disabled until [`StackSampler::enable`].
pub struct StackSampler {
    sampler: Sampler,
}

/// What a drain read: each sample's stack (leaf first, context markers dropped) and how many
/// samples the kernel lost because the ring buffer was full.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Drained {
    pub stacks: Vec<Vec<u64>>,
    pub lost: u64,
}

impl StackSampler {
    /// Open, disabled, a `cpu-clock` sampler of the calling thread (on whichever CPU it runs)
    /// at `frequency_hz` samples per second of CPU time, with a ring buffer of `ring_bytes`
    /// (rounded up to a power of two pages).
    pub fn open(frequency_hz: u64, ring_bytes: usize) -> io::Result<StackSampler> {
        let counter = Builder::new(Software::CPU_CLOCK)
            .sample_frequency(frequency_hz)
            .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CALLCHAIN)
            .sample_max_stack(MAX_STACK)
            .include_kernel()
            .exclude_hv(true)
            .enabled(false)
            .build()?;
        Ok(StackSampler {
            sampler: counter.sampled(ring_bytes)?,
        })
    }

    pub fn enable(&mut self) -> io::Result<()> {
        self.sampler.enable()
    }

    pub fn disable(&mut self) -> io::Result<()> {
        self.sampler.disable()
    }

    /// Every record the ring buffer holds now, taken out of it: the samples' stacks and the
    /// count of lost samples. A record that does not parse is skipped.
    pub fn drain(&mut self) -> Drained {
        let mut drained = Drained::default();
        while let Some(record) = self.sampler.next_record() {
            match record.parse_record() {
                Ok(perf_event::data::Record::Sample(sample)) => {
                    if let Some(chain) = sample.callchain() {
                        drained.stacks.push(addresses(chain));
                    }
                }
                Ok(perf_event::data::Record::Lost(lost)) => {
                    drained.lost = drained.lost.saturating_add(lost.lost);
                }
                _ => {}
            }
        }
        drained
    }
}

/// A raw callchain without its context markers.
fn addresses(chain: &[u64]) -> Vec<u64> {
    chain.iter().copied().filter(|&a| a < CONTEXT_MAX).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_markers_are_not_frames() {
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
            addresses(&chain),
            vec![0xffff_ffff_8100_0000, 0xffff_ffff_8100_0100, 0x5555_0000]
        );
    }

    /// Samples a busy loop of system calls for real. Where perf_event_open is refused (no
    /// permission, a seccomp filter) there is nothing to check.
    #[test]
    fn a_busy_loop_of_system_calls_is_sampled_with_kernel_frames() {
        let Ok(mut sampler) = StackSampler::open(4000, 1 << 20) else {
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
            .filter(|s| s.iter().any(|&a| a >= 0xffff_0000_0000_0000))
            .count();
        assert!(kernel > 0, "no sample has a kernel frame");
        assert!(drained.stacks.iter().all(|s| !s.is_empty()));
    }
}

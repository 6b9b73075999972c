//! What the host did around each sample, read after the timed window: the time the
//! hypervisor stole from the worker's CPU since the sample before (`platform::cpustat::Steal`,
//! in clock ticks of 10 ms), a canary — a fixed chain of integer work, timed — whose time
//! moves only with the CPU's speed (the host's other tenants, a frequency change, a
//! hypervisor's slice), and a kernel canary — a few calls into the kernel that do no work
//! (`platform::null_call`) — whose time moves with the cost of entering the kernel, which a
//! host can change while the CPU canary stays put (measured on an AMD EPYC VM, 2026-12-06: a
//! null system call went from about 165 to 215 ns and back from one second to the next, 44.8%
//! over three minutes, while the CPU canary moved 0.9%). All go into the sample's counters
//! under `model::host`'s names (not counters of the worker: `analysis::host` reads them, no
//! counter table shows them).

use std::collections::BTreeMap;

use super::clock::Clock;
use crate::model::CounterValue;
use crate::model::host::{CANARY, KERNEL_CANARY, STEAL};
use crate::platform::cpustat::Steal;

/// Steps of the canary's chain: about 4 cycles each (a multiply and its dependants), so some
/// 3–6 µs on a 2–4 GHz core — under 1% of a sample of a millisecond, and long enough that the
/// clock's overhead (20–40 ns) and resolution do not matter.
const CANARY_STEPS: u64 = 4096;

/// Calls of the kernel canary: 16 null calls are 2–4 µs here (160–240 ns each), a fraction of
/// a percent of a sample, and their median over a second of samples followed a loop of 1000
/// such calls (correlation 0.967 over 218 medians of about 0.8 s, 2026-12-06).
const KERNEL_CANARY_CALLS: u32 = 16;

/// The host's readings around each sample.
pub struct HostWatch {
    clock: Clock,
    steal: Option<Steal>,
    last_steal: Option<u64>,
    null_call: Option<fn()>,
}

impl HostWatch {
    /// Watch the host of a worker pinned to `cpu` (`None`: unpinned, the machine's steal).
    pub fn open(clock: Clock, cpu: Option<usize>) -> HostWatch {
        let mut steal = Steal::open(cpu);
        let last_steal = steal.as_mut().and_then(Steal::read_ns);
        HostWatch {
            clock,
            steal,
            last_steal,
            null_call: crate::platform::null_call(),
        }
    }

    /// After a sample's timed window: the canary, the kernel canary (per call), then the steal
    /// since the last reading.
    pub fn after_sample(&mut self) -> BTreeMap<String, CounterValue> {
        let mut out = BTreeMap::new();
        let t0 = self.clock.start();
        std::hint::black_box(canary(std::hint::black_box(CANARY_STEPS)));
        let t1 = self.clock.stop();
        out.insert(CANARY.to_string(), value(self.clock.ns(t0, t1)));
        if let Some(call) = self.null_call {
            let t0 = self.clock.start();
            for _ in 0..KERNEL_CANARY_CALLS {
                call();
            }
            let t1 = self.clock.stop();
            let per_call = self.clock.ns(t0, t1) / f64::from(KERNEL_CANARY_CALLS);
            out.insert(KERNEL_CANARY.to_string(), value(per_call));
        }
        if let Some(now) = self.steal.as_mut().and_then(Steal::read_ns)
            && let Some(last) = self.last_steal.replace(now)
        {
            out.insert(STEAL.to_string(), value(now.saturating_sub(last) as f64));
        }
        out
    }
}

fn value(v: f64) -> CounterValue {
    CounterValue {
        value: Some(v),
        raw: v.max(0.0) as u64,
        enabled_ns: 0,
        running_ns: 0,
    }
}

/// A chain of dependent multiplies and shifts (xorshift-multiply): no memory, no branch but
/// the loop's, the same instructions on every run.
#[inline(never)]
fn canary(steps: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..steps {
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_has_a_canary_and_steal_after_the_first_reading() {
        let mut host = HostWatch::open(Clock::MonotonicRaw, Some(0));
        for _ in 0..3 {
            let r = host.after_sample();
            let canary = r[CANARY].value.unwrap();
            assert!(canary > 0.0 && canary < 1e9, "{canary}");
            #[cfg(unix)]
            {
                let call = r[KERNEL_CANARY].value.unwrap();
                assert!(call > 0.0 && call < 1e9, "{call}");
            }
            #[cfg(target_os = "linux")]
            assert!(r[STEAL].value.unwrap() >= 0.0);
        }
    }

    #[test]
    fn the_canary_is_the_same_chain_every_time() {
        assert_eq!(canary(CANARY_STEPS), canary(CANARY_STEPS));
        assert_ne!(canary(1), canary(2));
    }
}

//! The stack sampler's types, the same for every backend (`platform::stacks`).

/// One sample's call stack: its kernel frames and its user frames, each leaf first.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RawStack {
    pub kernel: Vec<u64>,
    pub user: Vec<u64>,
}

/// What a drain read: each sample's stack and how many samples the kernel lost because the
/// ring buffer was full.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Drained {
    pub stacks: Vec<RawStack>,
    pub lost: u64,
}

/// The task a sampler follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// The calling thread, and the threads and processes it starts while the sampler is open
    /// (their samples come to this sampler's ring buffer).
    Me,
    /// Another thread, by its thread id (a partner started before the sampler).
    Thread(i32),
}

/// What clock the samples are taken by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// CPU cycles, counted by the PMU (none in most VMs).
    Cycles,
    /// The kernel's CPU-time clock (hrtimer): works everywhere, but cannot sample code that
    /// runs with interrupts off.
    CpuClock,
}

impl Clock {
    /// perf's name of the event.
    pub fn name(self) -> &'static str {
        match self {
            Clock::Cycles => "cycles",
            Clock::CpuClock => "cpu-clock",
        }
    }
}

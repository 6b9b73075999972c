//! What a profile pass saw: the stacks the worker's CPU time was spent in, folded, and what
//! the profiled batches cost, to set beside the unprofiled samples (the profiler's overhead).
//!
//! A frame is a function name. Kernel frames end in [`KERNEL_SUFFIX`] (`_[k]`, the convention
//! of Brendan Gregg's `stackcollapse-perf.pl --kernel`, which flame-graph tools colour);
//! user frames that could not be named are [`USER_FRAME`], kernel ones [`KERNEL_FRAME`].

use serde::{Deserialize, Serialize};

/// The suffix of a kernel frame's name.
pub const KERNEL_SUFFIX: &str = "_[k]";
/// A user-space frame that could not be named.
pub const USER_FRAME: &str = "[user]";
/// A kernel frame that could not be named (kallsyms hidden or unreadable).
pub const KERNEL_FRAME: &str = "[kernel]_[k]";
/// The root frame of the stacks of an experiment's partner (the other side of a ping-pong,
/// sampled by a sampler of its own), so they stand apart from the worker's in a flame graph.
pub const PARTNER_FRAME: &str = "[partner]";

/// What the worker is asked to profile: after its timed samples, batches of the same size
/// for `seconds` (at least three; one of a whole-pass experiment) with a stack sampler on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProfileRequest {
    /// Samples per second (of cycles' or CPU time's worth).
    pub frequency_hz: u64,
    pub seconds: f64,
}

/// One distinct stack and how many samples had it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedStack {
    /// Frames root first, joined by `;`.
    pub stack: String,
    pub count: u64,
}

/// A worker's profile pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The sampled event: `cycles` or `cpu-clock`.
    pub event: String,
    pub frequency_hz: u64,
    /// Sorted by stack.
    pub stacks: Vec<FoldedStack>,
    /// Samples the kernel dropped because the ring buffer was full.
    pub lost: u64,
    /// Each profiled batch's time per operation, nanoseconds, as timed (nothing subtracted:
    /// compare with the samples' `elapsed_ns / ops`).
    pub batch_ns_per_op: Vec<f64>,
    /// Why the stacks are missing or incomplete (sampling refused, kernel names hidden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl Profile {
    /// A profile that could not be taken, and why.
    pub fn refused(request: &ProfileRequest, why: String) -> Profile {
        Profile {
            event: "cpu-clock".into(),
            frequency_hz: request.frequency_hz,
            stacks: Vec::new(),
            lost: 0,
            batch_ns_per_op: Vec::new(),
            problem: Some(why),
        }
    }

    /// Every sample the stacks hold.
    pub fn samples(&self) -> u64 {
        self.stacks.iter().map(|s| s.count).sum()
    }
}

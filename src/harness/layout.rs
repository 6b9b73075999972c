//! Varied layouts: what differs between the worker processes that measure one configuration.
//!
//! A measurement taken in one process reflects one address-space layout: where the stack
//! starts (the environment's size moves it), where heap buffers fall within their pages and
//! across cache sets, which physical pages back them. Mytkowicz et al. ("Producing Wrong Data
//! Without Doing Anything Obviously Wrong!", ASPLOS 2009) showed that such accidents move
//! results by more than many of the effects people measure, and Curtsinger and Berger's
//! Stabilizer (ASPLOS 2013) re-randomizes layout to average them out. oslab measures each
//! configuration in several worker processes and gives each a different layout on purpose
//! (ASLR stays on), so that the spread between processes — the part a rerun would see — is in
//! the interval instead of hidden by it.

use serde::{Deserialize, Serialize};

use crate::analysis::rng::Rng;

/// The largest padding of the environment, bytes: a page, so the stack's start takes any
/// 16-byte offset within a page.
const MAX_ENV_PAD: u64 = 4096;
/// The largest heap allocation made before setup, bytes: sixteen pages, so the experiment's
/// heap buffers land at any 64-byte line offset within a page and across a 64 KiB span of
/// cache sets (an L1D way is 4 KiB; an L2 way at most a few tens of KiB).
const MAX_HEAP_PAD: u64 = 64 << 10;
/// The environment variable that carries the padding into the worker.
pub const ENV_PAD_VAR: &str = "OSLAB_LAYOUT_PAD";

/// How one worker process's layout is varied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Which of the configuration's processes this is, from 0.
    pub process: u32,
    /// Bytes of padding in the worker's environment (moves its initial stack).
    pub env_pad: usize,
    /// Bytes allocated on the heap before the experiment's setup, kept to the end.
    pub heap_pad: usize,
}

impl Layout {
    /// The layout of process `process` of a run whose layouts derive from `seed`. Process 0
    /// of every run gets a layout of its own too: runs differ, as reruns do.
    pub fn for_process(seed: u64, process: u32) -> Layout {
        let mut rng = Rng::new(seed ^ (u64::from(process) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let env_pad = rng.below(MAX_ENV_PAD / 16) * 16;
        let heap_pad = rng.below(MAX_HEAP_PAD / 64) * 64;
        Layout {
            process,
            env_pad: env_pad as usize,
            heap_pad: heap_pad as usize,
        }
    }

    /// The value of [`ENV_PAD_VAR`] for the worker.
    pub fn env_value(&self) -> String {
        "x".repeat(self.env_pad)
    }

    /// Make the heap allocation, in the worker, before setup; the block lives as long as the
    /// returned value.
    pub fn pad_heap(&self) -> Vec<u8> {
        // Written, so the allocator cannot hand the same memory out again and the pages are
        // really taken; a block under glibc's mmap threshold (128 KiB) moves the heap's top.
        vec![1u8; self.heap_pad]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_of_a_run_differ_and_stay_in_range() {
        let layouts: Vec<Layout> = (0..8).map(|p| Layout::for_process(42, p)).collect();
        for (p, l) in layouts.iter().enumerate() {
            assert_eq!(l.process as usize, p);
            assert!(l.env_pad < MAX_ENV_PAD as usize && l.env_pad % 16 == 0);
            assert!(l.heap_pad < MAX_HEAP_PAD as usize && l.heap_pad % 64 == 0);
            assert_eq!(l.pad_heap().len(), l.heap_pad);
            assert_eq!(l.env_value().len(), l.env_pad);
        }
        let distinct: std::collections::BTreeSet<(usize, usize)> =
            layouts.iter().map(|l| (l.env_pad, l.heap_pad)).collect();
        assert!(distinct.len() >= 7, "{layouts:?}");
        // The same seed gives the same layouts; another seed, others.
        assert_eq!(Layout::for_process(42, 3), layouts[3]);
        assert_ne!(Layout::for_process(43, 3), layouts[3]);
    }
}

//! No stack sampling: a sampler cannot be opened, and `oslab profile` refuses in one line.

use std::convert::Infallible;
use std::io;

/// A sampler of one task's stacks; none can exist here ([`StackSampler::open`] refuses).
pub struct StackSampler {
    never: Infallible,
}

pub use crate::platform::contract::stacks::{Clock, Drained, RawStack, Task};

fn why() -> String {
    super::refusal("stack sampling", super::super::this_os::why::SAMPLING)
}

impl StackSampler {
    /// Refused: see the module.
    pub fn open(_task: Task, _clock: Clock, _frequency_hz: u64) -> io::Result<StackSampler> {
        Err(io::Error::new(io::ErrorKind::Unsupported, why()))
    }

    pub fn enable(&mut self) -> io::Result<()> {
        match self.never {}
    }

    pub fn disable(&mut self) -> io::Result<()> {
        match self.never {}
    }

    pub fn drain(&mut self) -> Drained {
        match self.never {}
    }
}

/// No limit to read.
pub fn max_sample_rate() -> Option<u64> {
    None
}

/// Always refused, with the reason.
pub fn check_sampling(_frequency_hz: u64) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, why()))
}

/// The refusal in one line.
pub fn refusal(e: &io::Error) -> String {
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_is_refused_with_the_reason() {
        let e = StackSampler::open(Task::Me, Clock::CpuClock, 99)
            .err()
            .unwrap();
        assert!(refusal(&e).contains("not available on"));
        assert!(check_sampling(99).is_err());
    }
}

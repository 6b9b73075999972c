//! No frame names: stacks are never sampled here (`super::stacks`), so a namer only says so.

use super::stacks::RawStack;
use crate::model::profile::{KERNEL_FRAME, USER_FRAME};

/// Names frames; here every frame stays unnamed.
#[derive(Default)]
pub struct FrameNamer;

impl FrameNamer {
    pub fn new() -> FrameNamer {
        FrameNamer
    }

    /// Why kernel frames read [`KERNEL_FRAME`]: they cannot be named here.
    pub fn kernel_problem(&self) -> Option<&str> {
        Some(super::super::this_os::why::SAMPLING)
    }

    /// Each stack's frames, unnamed: [`KERNEL_FRAME`] then [`USER_FRAME`] per frame.
    pub fn name(&self, _pid: Option<u32>, stacks: &[RawStack]) -> Vec<Vec<String>> {
        stacks
            .iter()
            .map(|s| {
                let kernel = s.kernel.iter().map(|_| KERNEL_FRAME.to_string());
                kernel
                    .chain(s.user.iter().map(|_| USER_FRAME.to_string()))
                    .collect()
            })
            .collect()
    }
}

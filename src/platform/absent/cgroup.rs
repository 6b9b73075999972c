//! No memory cgroups: there is nothing to confine a memory load in, so `--load memory` is
//! unsupported (its setup fails with the reason) and the experiments that need a cgroup
//! declare Linux only. What this process may allocate is then the system's free memory.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io;
use std::path::{Path, PathBuf};

use super::super::memory::Psi;
use crate::model::SetupError;

pub use crate::platform::contract::cgroup::{CgroupVersion, Limits};

fn why() -> String {
    super::refusal("memory cgroups", super::super::this_os::why::CGROUPS)
}

/// What this process may still allocate, bytes: the system's available memory (no cgroup
/// can limit it). `None` when that cannot be read.
pub fn headroom() -> Option<u64> {
    Some(super::super::memory::meminfo().ok()?.available)
}

/// Where oslab could create memory-limited cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    pub version: CgroupVersion,
    pub parent: PathBuf,
    pub own: PathBuf,
}

/// None: unsupported, with the reason.
pub fn hierarchy() -> Result<Hierarchy, SetupError> {
    Err(SetupError::Unsupported(why()))
}

/// Nothing to sweep: no cgroup was ever created.
pub fn remove_orphaned() {}

/// There is no cgroup to join.
pub fn join(_procs: &Path) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, why()))
}

/// A cgroup oslab created; none can exist here ([`Cgroup::create`] refuses).
pub struct Cgroup {
    pub dir: PathBuf,
    pub version: CgroupVersion,
    pub swap_bound: Option<&'static str>,
    never: Infallible,
}

impl Cgroup {
    /// Refused: see the module.
    pub fn create(_h: &Hierarchy, _limits: &Limits, _swap: u64) -> Result<Cgroup, SetupError> {
        Err(SetupError::Unsupported(why()))
    }

    pub fn file(&self, _name: &str) -> PathBuf {
        match self.never {}
    }

    pub fn procs(&self) -> PathBuf {
        match self.never {}
    }

    pub fn read_u64(&self, _name: &str) -> Option<u64> {
        match self.never {}
    }

    pub fn keyed(&self, _name: &str) -> BTreeMap<String, u64> {
        match self.never {}
    }

    pub fn pressure(&self) -> Option<Psi> {
        match self.never {}
    }

    pub fn peak(&self) -> Option<(u64, &'static str)> {
        match self.never {}
    }

    pub fn oom_kills(&self) -> Option<u64> {
        match self.never {}
    }

    pub fn pids(&self) -> Vec<i32> {
        match self.never {}
    }

    pub fn remove(&self) -> io::Result<()> {
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroups_are_unsupported_and_headroom_is_free_memory() {
        assert!(matches!(hierarchy(), Err(SetupError::Unsupported(_))));
        assert!(headroom().is_some_and(|room| room > 0));
    }
}

//! `--load memory` where oslab cannot build it (Windows): the load confines a competitor and
//! the worker in a memory cgroup (`memload.rs` on Unix), and there is none here, so starting
//! it is unsupported with the reason and the hidden competitor entry point refuses.

use std::path::{Path, PathBuf};

use crate::model::SetupError;

/// Never built: see the module.
pub enum MemoryLoad {}

impl MemoryLoad {
    /// Unsupported: there is no memory cgroup to confine the load in.
    pub fn start(
        _size_hint: Option<u64>,
        _pressure: super::pressure::Pressure,
        _measured: Option<usize>,
        _competitor_cpu: Option<usize>,
    ) -> Result<MemoryLoad, SetupError> {
        crate::platform::cgroup::hierarchy()?;
        Err(SetupError::Unsupported(
            "--load memory is not built for this system".into(),
        ))
    }

    pub fn cgroup_procs(&self) -> PathBuf {
        match *self {}
    }

    pub fn record(&self) -> Vec<(String, String)> {
        match *self {}
    }
}

/// The competitor's entry point: refused (exit code 1).
pub fn competitor_main(
    _bytes: u64,
    _cpu: Option<usize>,
    _cgroup_procs: Option<&Path>,
    _parent: u32,
) -> i32 {
    crate::say!("error: --load memory is not available on this system");
    1
}

//! Other benchmarks' figures computed from oslab's: the same workloads, scored in the peer's
//! own units and against its own baselines (`unixbench`), or summarised in the shape of the
//! peer's report (`filemicro`), so a run can be read beside the peer's.

#[cfg(unix)]
pub mod filemicro;
pub mod unixbench;

//! Other benchmarks' figures computed from oslab's: the same workloads, scored in the peer's
//! own units and against its own baselines, so a run can be read beside the peer's report.

pub mod unixbench;

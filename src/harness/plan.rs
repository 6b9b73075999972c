//! The run's plan: how every experiment of one `oslab run` is measured (sampler settings,
//! CPUs, load, work directory, clock, time limit). Built by the CLI, read by the runner and by
//! the code that drives one worker.

use std::path::PathBuf;
use std::time::Duration;

use crate::measure::load::Load;
use crate::measure::sampler::SamplerConfig;
use crate::model::ClockInfo;

/// How every experiment of a run is measured.
#[derive(Debug, Clone)]
pub struct Plan {
    pub sampler: SamplerConfig,
    pub cpus: Vec<usize>,
    /// Another CPU for cross-CPU placements, if this process may use one.
    pub other_cpu: Option<usize>,
    /// Background load started beside every worker.
    pub load: Option<Load>,
    /// Where experiments with a work directory create it (`--dir`; default: the current
    /// directory).
    pub dir: PathBuf,
    pub clock: ClockInfo,
    /// Hard limit per worker; by default twice the budget plus time for setup.
    pub timeout: Duration,
    /// The limit is the default one, which a whole-pass experiment may stretch once it knows
    /// how long a pass takes (see `fixed_batch_deadline`); `--timeout` is kept as given.
    pub stretch_timeout: bool,
}

impl Plan {
    pub fn default_timeout(sampler: &SamplerConfig) -> Duration {
        Duration::from_secs_f64(sampler.budget_s * 2.0 + 20.0)
    }
}

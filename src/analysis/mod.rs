//! Pure statistics over samples: no file, terminal or clock access in here.
//!
//! Everything takes plain `f64` slices and returns values, so it can be tested with known
//! numbers and property tests, and the same functions serve the live run (adaptive stopping)
//! and the presentation of a stored run.
//!
//! - [`stats`]: the descriptive summary of one sample set (median, mean, spread, percentiles).
//! - [`bootstrap`]: seeded percentile-bootstrap confidence intervals.
//! - [`outliers`]: Tukey's fences; outliers are flagged, never dropped.
//! - [`pool`]: a configuration's processes merged into one result and its figures.
//! - [`processes`]: the spread between the worker processes of one configuration, a cold
//!   first process, and the interval that covers a rerun.
//! - [`adaptive`]: whether a configuration gets another process, or why it stops.
//! - [`cpus`]: whether the CPUs a configuration's processes took in turn differ.
//! - [`rng`]: the small seeded generator that makes the bootstrap reproducible.
//! - [`special`]: log-gamma, the incomplete beta function and F's upper tail.

pub mod adaptive;
pub mod bootstrap;
pub mod compare;
pub mod cpus;
pub mod fleet;
pub mod host;
pub mod outliers;
pub mod pool;
pub mod processes;
pub mod profile;
pub mod reclaim;
pub mod reruns;
pub mod result;
pub mod rng;
pub mod special;
pub mod stats;
pub mod trace;
pub mod validate;

pub use bootstrap::median_ci;
pub use outliers::{OutlierClass, Outliers, classify};
pub use stats::{Summary, median, percentile, summarize};

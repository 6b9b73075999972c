//! How experiments are measured: the clock, the sampling loop and background load (the
//! counters, rusage and CPU placement they use come from `platform`). Experiments never time
//! themselves; this module does.

pub mod clock;
pub mod companions;
pub mod counting;
pub mod host;
pub mod ioload;
pub mod load;
#[cfg(unix)]
pub mod memload;
#[cfg(not(unix))]
#[path = "memload_absent.rs"]
pub mod memload;
pub mod pressure;
pub mod profile;
pub mod sampler;

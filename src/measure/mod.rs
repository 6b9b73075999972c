//! How experiments are measured: the clock, counters, rusage, CPU placement and the sampling
//! loop. Experiments never time themselves; this module does.

pub mod clock;
pub mod counters;
pub mod load;
pub mod memload;
pub mod sampler;

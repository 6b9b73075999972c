//! oslab: measures what the operating system costs a program.
//!
//! Data flows one way: `experiment` (what is measured) → `measure` + `worker` (how) →
//! `store` (every sample, the environment, the validation) → `analysis` (pure statistics) →
//! `report` (terminal, JSON).

pub mod analysis;
pub mod env;
pub mod model;
pub mod report;
pub mod store;

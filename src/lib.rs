//! oslab: measures what the operating system costs a program.
//!
//! Data flows one way: `experiment` (what is measured) → `measure` + `worker` (how, in a
//! fresh process) → `runner` (judges each result with `validate`) → `store` (every sample,
//! the environment, the validation) → `analysis` (pure statistics) → `report` (terminal, JSON).

pub mod analysis;
pub mod cli;
pub mod env;
pub mod error;
pub mod experiment;
pub mod interrupt;
pub mod maps;
pub mod measure;
pub mod model;
pub mod report;
pub mod runner;
pub mod store;
pub mod validate;
pub mod worker;

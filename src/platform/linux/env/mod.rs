//! The machine description (`crate::model::env::Environment`) read from this Linux system.

mod collect;
pub use collect::{caches_of, collect};

//! The machine description (`crate::model::env::Environment`) read from this Linux system.

mod collect;
pub(in crate::platform) use collect::parse_texts;
pub use collect::{caches_of, collect, core_kinds, emulation, perf_refusal_under_emulation};

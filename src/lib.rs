//! oslab: measures what the operating system costs a program.
//!
//! Layers, top to bottom; imports only point down:
//!
//! - `cli` — one file per command: parse, dispatch, print, exit codes.
//! - `harness` — the runner (parent side: spawn, time limit, reap, judge) and the worker
//!   (the hidden `oslab worker` subcommand that runs one experiment in a fresh process).
//! - `report` and `experiment` — presentation of stored runs; what is measured.
//! - `measure` — how: clock, batch sizing, counters, loads beside the experiment.
//! - `store` and `analysis` — SQLite; pure statistics and expectation checks.
//! - `model` — the records and errors that flow through all of it.
//!
//! `platform` sits beside them all, at the bottom: the only module that knows which
//! operating system it runs on (docs/architecture.md has the contract).

/// `eprintln!` that never panics. `eprintln!` panics when stderr is gone (`oslab run 2>&1 |
/// head` once head has exited), which ended a run in its middle, stored as interrupted; here
/// a line nobody can read is dropped and the work goes on.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod analysis;
pub mod cli;
pub mod experiment;
pub mod harness;
pub mod measure;
pub mod model;
pub mod platform;
pub mod report;
pub mod store;

//! The harness: the parent side of a run (`runner`, which starts and follows each worker in
//! `drive`), the child that measures one experiment in a fresh process (`worker`), and the
//! children `oslab maps` maps (`maps`), and one worker's pass under the system-call tracer
//! (`traced`, for `oslab trace --experiment`). `plan` is what the CLI hands the runner; `layout` is what differs between the processes
//! that measure one configuration.

pub mod copies;
mod drive;
mod gate;
pub mod history;
pub mod layout;
pub mod maps;
pub mod plan;
pub mod runner;
pub mod scratch;
pub mod traced;
pub mod worker;

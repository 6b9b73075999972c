//! The harness: the parent side of a run (`runner`) and the child that measures one
//! experiment in a fresh process (`worker`).

pub mod runner;
pub mod worker;

//! The harness: the parent side of a run (`runner`, which starts and follows each worker in
//! `drive`) and the child that measures one experiment in a fresh process (`worker`).

mod drive;
pub mod runner;
pub mod worker;

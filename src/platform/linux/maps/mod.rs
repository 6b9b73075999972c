//! A process's memory map on Linux: `/proc/PID/smaps` read and parsed, each mapping
//! classified (the executable's text, rodata, RELRO, data and bss, heap, stack, libraries,
//! vDSO, vvar, vsyscall, anonymous and other file mappings) into the records of
//! [`crate::model::maps`], and the ASLR setting read. `oslab maps` starts its children in
//! `harness::maps`.
//!
//! smaps is parsed here rather than with the `procfs` crate: procfs 0.18 rejects a whole
//! smaps file when one mapped path is not UTF-8 (`read_line` fails) and panics on a path that
//! starts with `/SYSV` and is shorter than 13 bytes; a map names any file the process mapped.

use anyhow::{Context, Result, anyhow};

use crate::model::error::UserError;
use crate::model::maps::*;
pub use crate::platform::contract::maps::RegionError;

mod parse;
pub use parse::*;
mod classify;
pub use classify::*;
mod read;
pub use read::*;

#[cfg(test)]
mod tests;

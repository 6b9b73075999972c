//! Filebench's filemicro personalities (filebench/filebench, `workloads/filemicro_*.f`, and
//! `workloads/openfiles.f`), each with the workload's variables as parameters and Filebench's
//! defaults. `oslab run --suite filemicro` runs them all; the report adds a Filebench-like
//! summary (ops/s, MB/s, ms/op) with oslab's block counts per op as the proof of what reached
//! the disk (`report::peers::filemicro`). docs/filemicro.md maps each to its workload.
//!
//! **One operation** is one pass of the personality's flowop loop where that loop is short
//! (createfiles: create+write+close one file; openfiles: open+close; statfile, deletefile:
//! one call), and one execution of the data flowop where the loop repeats it `iters` times
//! (seqwrite's 1024 appends of 1 MiB: one op is one append). Whatever the loop does once per
//! `iters` (writefsync's fsync after 1024 appends) is done by the op that ends the group, so a
//! figure is the mean cost of one flowop *including its share* of that work, as fs's are.
//!
//! **Differences from Filebench**, all deliberate:
//! - one worker thread per personality; Filebench's `nthreads` is left to the harness
//!   (`--copies N`, when it lands), so it is no parameter here;
//! - no fixed run time or `finishoncount`/`finishonbytes`: oslab samples until its interval
//!   is tight. Counts that bound a file's growth (`count`, `bytes`, `fsynccount`) bound it
//!   here too: the file is truncated between batches, untimed, when the next batch would pass
//!   them;
//! - filesets are one flat directory (Filebench spreads `entries` over a tree of
//!   `dirwidth`-wide directories) and every file has exactly the mean size (Filebench draws
//!   sizes from a gamma distribution around it);
//! - appends are one `pwrite` at the end the routine tracks (Filebench: `lseek(SEEK_END)` +
//!   `write`).
//!
//! The routines are fs's where the mechanism is the same (the transfers, the create and
//! delete lifecycles); what is new is the append (`append`) and the filesets of statfile and
//! openfiles (`fileset`).

use super::fs::{self, page_size};
use super::{Claim, Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::rng::Rng;
use crate::analysis::validate::{Bound, Expectation, Metric};
use crate::model::equivalence as eq;
#[cfg(unix)]
use {super::fs::Fd, super::refusal::Refusal, std::path::Path};

mod append;
pub use append::*;
mod append_info;
pub use append_info::*;
mod fileset;
pub use fileset::*;
mod transfer;
pub use transfer::*;
#[cfg(unix)]
mod tree;

/// Every filemicro experiment, in the suite's order (Filebench's workload names).
/// Where `filemicro.*` run and how (the equivalence table's row).
pub(crate) const FILEMICRO_FAMILY_CELLS: eq::Cells = eq::Cells {
    linux: eq::runs("fs's routines: pwrite/pread, O_DSYNC, fsync, posix_fadvise, syncfs"),
    freebsd: eq::Cell::No(
        "not enabled yet: the personalities run fs's routines, whose cold-cache and sync \
             expectations were written for Linux's page cache",
    ),
    macos: eq::Cell::No(
        "not enabled yet: the personalities run fs's routines, whose cold-cache and sync \
             expectations were written for Linux's page cache",
    ),
    windows: eq::Cell::No(
        "not enabled yet: the personalities run fs's POSIX routines (pwrite, fsync, \
             posix_fadvise)",
    ),
};

pub static EXPERIMENTS: &[&ExperimentInfo] = &[
    &CREATE,
    &CREATEFILES,
    &CREATERAND,
    &DELETE,
    &OPENFILES,
    &RREAD,
    &RWRITE,
    &RWRITEDSYNC,
    &RWRITEFSYNC,
    &SEQREAD,
    &SEQWRITE,
    &SEQWRITERAND,
    &SEQWRITERANDVARGAM,
    &SEQWRITERANDVARTAB,
    &STATFILE,
    &WRITEFSYNC,
];

// --- parameters shared by several personalities ---

const fn size(
    name: &'static str,
    default: &'static str,
    max: u64,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Size { min: 1, max },
        default,
        help,
    }
}

const fn int(name: &'static str, default: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int {
            min: 1,
            max: 10_000_000,
        },
        default,
        help,
    }
}

const fn flag(name: &'static str, default: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Choice(&["false", "true"]),
        default,
        help,
    }
}

const SYNC: ParamSpec = flag(
    "sync",
    "false",
    "Filebench's dsync: open the file O_DSYNC, so every write reaches the device",
);

const CACHED: ParamSpec = flag(
    "cached",
    "false",
    "false: the file's pages are dropped (posix_fadvise DONTNEED) so reads come from the \
     device, as Filebench's cached=false purges the file from the cache",
);

fn is_true(params: &Params, name: &str) -> bool {
    params.get(name) == Some("true")
}

#[cfg(unix)]
/// Refused when `need` bytes (plus fs's slack) do not fit in the work directory.
fn room(ctx: &Context, need: u64, what: &str) -> Result<(), Refusal> {
    let Some(dir) = ctx.work_dir.as_deref() else {
        return Ok(());
    };
    let need = need.saturating_add(fs::SLACK);
    let free = fs::statvfs_free(dir)?;
    if free < need {
        return Err(Refusal::Room {
            need,
            free,
            dir: dir.to_path_buf(),
            what: what.to_string(),
            shrink: None,
        });
    }
    Ok(())
}

/// Bytes a file of `len` bytes occupies, in whole pages.
fn in_pages(len: u64) -> u64 {
    len.div_ceil(page_size()) * page_size()
}

/// The bytes one op of `experiment` reads or writes (Filebench's MB/s counts them), from its
/// parameters as stored: the mean append, the I/O size, the new file's size, or nothing for
/// the metadata personalities. `None` for a name that is not a personality here.
pub fn bytes_per_op(experiment: &str, params: &Params) -> Option<f64> {
    let info = EXPERIMENTS.iter().find(|e| e.name == experiment)?;
    Some(match info.name {
        "filemicro.rread"
        | "filemicro.rwrite"
        | "filemicro.rwritedsync"
        | "filemicro.rwritefsync"
        | "filemicro.seqread" => params.u64("iosize") as f64,
        "filemicro.createfiles" => params.u64("filesize") as f64,
        "filemicro.delete" | "filemicro.statfile" | "filemicro.openfiles" => 0.0,
        name => plan_of(name, params).sizes.mean(),
    })
}

/// How many ops Filebench counts for one op here: its IO Summary counts every execution of
/// an I/O flowop, so createfiles' create, write and close are three, openfiles' open and
/// close two, and the fsync (or the open and close) a loop adds once per `iters` appends is
/// a share of one. `None` for a name that is not a personality here.
pub fn flowops_per_op(experiment: &str, params: &Params) -> Option<f64> {
    let per_group = |group: &str, extra: f64| {
        let n = params.u64(group).max(1) as f64;
        (n + extra) / n
    };
    EXPERIMENTS.iter().find(|e| e.name == experiment)?;
    Some(match experiment {
        "filemicro.createfiles" => 3.0,
        "filemicro.openfiles" => 2.0,
        "filemicro.writefsync" => per_group("writeiters", 1.0),
        "filemicro.createrand" | "filemicro.rwritefsync" => per_group("iters", 1.0),
        "filemicro.seqwriterand"
        | "filemicro.seqwriterandvargam"
        | "filemicro.seqwriterandvartab" => per_group("count", 2.0),
        _ => 1.0,
    })
}

/// Filebench's name for the workload `experiment` reproduces (its `workloads/NAME.f`).
pub fn filebench_workload(experiment: &str) -> Option<String> {
    EXPERIMENTS.iter().find(|e| e.name == experiment)?;
    let name = experiment.strip_prefix("filemicro.")?;
    Some(if name == "openfiles" {
        name.to_string()
    } else {
        format!("filemicro_{name}")
    })
}

#[cfg(unix)]
fn work_dir(ctx: &Context) -> Result<&Path, SetupError> {
    fs::work_dir(ctx)
}

#[cfg(all(test, unix))]
mod tests;

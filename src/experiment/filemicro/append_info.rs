//! The append personalities: create (the createandalloc), seqwrite, seqwriterand,
//! seqwriterandvargam, seqwriterandvartab, writefsync and createrand. Their parameters, what
//! they must show, and their registry entries.

use super::*;

const IOSIZE_1M: ParamSpec = size(
    "iosize",
    "1M",
    MAX_DRAW,
    "bytes per append (Filebench iosize)",
);
const IOSIZE_8K: ParamSpec = size(
    "iosize",
    "8K",
    MAX_DRAW,
    "bytes per append (Filebench iosize)",
);
const RAND_8K: ParamSpec = size(
    "iosize",
    "8K",
    MAX_DRAW,
    "appendfilerand: each append is uniform in [0, iosize − 1] bytes",
);
const RAND_1M: ParamSpec = size(
    "iosize",
    "1M",
    MAX_DRAW,
    "appendfilerand: each append is uniform in [0, iosize − 1] bytes",
);
const COUNT_1024: ParamSpec = int(
    "count",
    "1024",
    "appends the file grows by before it is truncated (Filebench: appends until finish)",
);
const COUNT_128K: ParamSpec = int(
    "count",
    "131072",
    "appends the file grows by before it is truncated (Filebench iters=$count, 128k)",
);

/// The plan of a personality, from its name and parameters.
pub fn plan_of(name: &str, p: &Params) -> AppendPlan {
    let dsync = is_true(p, "sync");
    let count = p.u64("count").max(1);
    let fixed = |sizes: Sizes| AppendPlan {
        sizes,
        fsync_every: None,
        dsync,
        limit: (count as f64 * sizes.mean()) as u64,
    };
    match name {
        "filemicro.seqwriterand" => fixed(Sizes::Below(p.u64("iosize"))),
        "filemicro.seqwriterandvargam" => fixed(Sizes::Gamma15 {
            min: 1 << 10,
            mean: 5632,
        }),
        "filemicro.seqwriterandvartab" => fixed(Sizes::Table),
        "filemicro.writefsync" => {
            let iters = p.u64("writeiters").max(1);
            AppendPlan {
                sizes: Sizes::Fixed(p.u64("iosize")),
                fsync_every: Some(iters),
                dsync: false,
                limit: iters * p.u64("fsynccount").max(1) * p.u64("iosize"),
            }
        }
        "filemicro.createrand" => AppendPlan {
            sizes: Sizes::Below(p.u64("iosize")),
            fsync_every: Some(p.u64("iters").max(1)),
            dsync,
            limit: p.u64("bytes"),
        },
        // create, seqwrite
        _ => fixed(Sizes::Fixed(p.u64("iosize"))),
    }
}

macro_rules! append_fns {
    ($($setup:ident, $exp:ident, $pre:ident, $name:literal;)*) => {$(
        #[cfg(unix)]
        fn $setup(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
            setup_append(plan_of($name, p), c)
        }
        fn $exp(p: &Params) -> Vec<Expectation> {
            append_expectations(&plan_of($name, p))
        }
        #[cfg(unix)]
        fn $pre(p: &Params, c: &Context) -> Result<(), Refusal> {
            room(c, plan_of($name, p).room(), "the file's appends")
        }
        // Elsewhere the routines are not built (POSIX's): `experiment::unix_setups`.
        #[cfg(not(unix))]
        use crate::experiment::elsewhere as $setup;
        #[cfg(not(unix))]
        use crate::experiment::elsewhere_preflight as $pre;
    )*};
}

append_fns! {
    setup_create, create_exp, create_room, "filemicro.create";
    setup_seqwrite, seqwrite_exp, seqwrite_room, "filemicro.seqwrite";
    setup_seqwriterand, seqwriterand_exp, seqwriterand_room, "filemicro.seqwriterand";
    setup_vargam, vargam_exp, vargam_room, "filemicro.seqwriterandvargam";
    setup_vartab, vartab_exp, vartab_room, "filemicro.seqwriterandvartab";
    setup_writefsync, writefsync_exp, writefsync_room, "filemicro.writefsync";
    setup_createrand, createrand_exp, createrand_room, "filemicro.createrand";
}

/// One pwrite per op, plus its share of the fsync every N appends where a traced pass sees it
/// (N up to 100: createrand's 10; writefsync's one per 1024 may fall outside a pass).
pub fn append_calls(name: &str, p: &Params) -> Vec<crate::experiment::Claim> {
    let mut calls = crate::experiment::each(&["pwrite64"]);
    if let Some(every) = plan_of(name, p).fsync_every.filter(|&n| n <= 100) {
        calls.push(crate::experiment::Claim::at_least(
            "fsync",
            1.0 / every as f64,
        ));
    }
    calls
}

/// What an append must show per op.
pub fn append_expectations(plan: &AppendPlan) -> Vec<Expectation> {
    let sectors = plan.sizes.mean() / 512.0;
    let page_sectors = page_size() as f64 / 512.0;
    let mut out = vec![
        fs::no_major_faults(),
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.5),
            "appends write new pages and read none; a block read means the file's last page \
             was evicted between two appends",
        ),
    ];
    let every = plan.fsync_every.map_or(0.0, |n| 1.0 / n as f64);
    // The probe batches that count system calls hold whole ops, not whole fsync groups: with
    // an fsync every 10 appends (createrand), a batch may hold one fsync more or fewer than
    // its share, so the tolerance grows by that share.
    out.push(Expectation::new(
        Metric::Counter("syscalls"),
        Bound::Near {
            value: 1.0 + every,
            tolerance: 0.05 + every,
        },
        "one pwrite per op, plus its share of the fsync every iters ops",
    ));
    if plan.dsync || plan.fsync_every.is_some() {
        // The partial last page is cleaned by every O_DSYNC write or fsync and dirtied again
        // by the next append: at most one page more per write or per fsync.
        let again = if plan.dsync { 1.0 } else { every };
        out.push(Expectation::new(
            Metric::Rusage("oublock"),
            Bound::AtLeast(0.9 * sectors),
            "every appended byte is new: its pages are dirtied (charged to oublock, 512-byte \
             units) and reach the device by the fsync or O_DSYNC",
        ));
        out.push(Expectation::new(
            Metric::Rusage("oublock"),
            Bound::Below(1.1 * sectors + again * page_sectors + 0.5),
            "no more than the appended bytes, plus the partial last page each fsync or O_DSYNC \
             write cleans and the next append dirties again",
        ));
    } else {
        out.push(Expectation::new(
            Metric::Rusage("oublock"),
            Bound::Below(1.1 * sectors + 0.5),
            "an append dirties only the new pages it writes (their bytes /512, charged when \
             dirtied, before any writeback); 0 on a memory-backed file system, which has no \
             device",
        ));
    }
    out
}

// Every personality below counts between samples: fsync and O_DSYNC sleep on the device,
// so counters are read in untimed batches (fs.fsync measured ~0.9 µs per switch with perf
// events open).
pub static CREATE: ExperimentInfo = ExperimentInfo::new(
    "filemicro.create",
    "Filebench filemicro_create (the issue's createandalloc): append iosize bytes to a file \
     created empty, allocating its blocks as it grows to count × iosize",
    "append",
    "pwrite at the end of the file (O_DSYNC with sync=true)",
    setup_create,
)
.params(&[IOSIZE_1M, COUNT_1024, SYNC])
.syscalls(|p| append_calls("filemicro.create", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(create_exp)
.preflight(create_room)
.quick_params(&[("count", "16")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static SEQWRITE: ExperimentInfo = ExperimentInfo::new(
    "filemicro.seqwrite",
    "Filebench filemicro_seqwrite: append iosize bytes to a file created empty (iters=count \
     appends per pass), growing it to count × iosize",
    "append",
    "pwrite at the end of the file (O_DSYNC with sync=true)",
    setup_seqwrite,
)
.params(&[IOSIZE_1M, COUNT_1024, SYNC])
.syscalls(|p| append_calls("filemicro.seqwrite", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(seqwrite_exp)
.preflight(seqwrite_room)
.quick_params(&[("count", "16")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static SEQWRITERAND: ExperimentInfo = ExperimentInfo::new(
    "filemicro.seqwriterand",
    "Filebench filemicro_seqwriterand: append a uniformly random 0..iosize−1 bytes \
     (appendfilerand) to a file created empty, count appends per pass",
    "append",
    "pwrite at the end of the file (O_DSYNC with sync=true)",
    setup_seqwriterand,
)
.params(&[RAND_8K, COUNT_128K, SYNC])
.syscalls(|p| append_calls("filemicro.seqwriterand", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(seqwriterand_exp)
.preflight(seqwriterand_room)
.quick_params(&[("count", "4096")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static SEQWRITERANDVARGAM: ExperimentInfo = ExperimentInfo::new(
    "filemicro.seqwriterandvargam",
    "Filebench filemicro_seqwriterandvargam: append a gamma-distributed size (min 1K, mean \
     5632, shape 1.5) to a file created empty, count appends per pass",
    "append",
    "pwrite at the end of the file (O_DSYNC with sync=true)",
    setup_vargam,
)
.params(&[COUNT_128K, SYNC])
.syscalls(|p| append_calls("filemicro.seqwriterandvargam", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(vargam_exp)
.preflight(vargam_room)
.quick_params(&[("count", "4096")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static SEQWRITERANDVARTAB: ExperimentInfo = ExperimentInfo::new(
    "filemicro.seqwriterandvartab",
    "Filebench filemicro_seqwriterandvartab: append a size from the workload's table (80% \
     1K–4K, 15% 4K–16K, 5% 16K–64K) to a file created empty, count appends per pass",
    "append",
    "pwrite at the end of the file (O_DSYNC with sync=true)",
    setup_vartab,
)
.params(&[COUNT_128K, SYNC])
.syscalls(|p| append_calls("filemicro.seqwriterandvartab", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(vartab_exp)
.preflight(vartab_room)
.quick_params(&[("count", "4096")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static WRITEFSYNC: ExperimentInfo = ExperimentInfo::new(
    "filemicro.writefsync",
    "Filebench filemicro_writefsync: append iosize bytes, fsync after every writeiters \
     appends; the file grows for fsynccount fsyncs, then starts again",
    "append",
    "pwrite at the end of the file, + one fsync per writeiters appends (not per op)",
    setup_writefsync,
)
.params(&[
    IOSIZE_8K,
    int("writeiters", "1024", "appends between two fsyncs"),
    int(
        "fsynccount",
        "128",
        "fsyncs before the file starts again (Filebench: then finish)",
    ),
])
.syscalls(|p| append_calls("filemicro.writefsync", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(writefsync_exp)
.preflight(writefsync_room)
.quick_params(&[("fsynccount", "2")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static CREATERAND: ExperimentInfo = ExperimentInfo::new(
    "filemicro.createrand",
    "Filebench filemicro_createrand: append a uniformly random 0..iosize−1 bytes, fsync every \
     iters appends, until the file holds `bytes`",
    "append",
    "pwrite at the end of the file, + one fsync per iters appends (not per op)",
    setup_createrand,
)
.params(&[
    size(
        "bytes",
        "1G",
        1 << 42,
        "bytes the file grows to (Filebench: then finish)",
    ),
    RAND_1M,
    int("iters", "10", "appends between two fsyncs"),
    SYNC,
])
.syscalls(|p| append_calls("filemicro.createrand", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(createrand_exp)
.preflight(createrand_room)
.quick_params(&[("bytes", "32M")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

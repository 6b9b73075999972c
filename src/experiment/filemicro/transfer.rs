//! The personalities that read or write in place in a preallocated file: rread, rwrite,
//! rwritedsync, rwritefsync and seqread. Their routine is fs's transfer (one op is one
//! `iosize` pread/pwrite), given Filebench's file size, I/O size, cache and sync settings.

use super::*;

const FILESIZE_1G: ParamSpec = size(
    "filesize",
    "1G",
    1 << 42,
    "size of the preallocated file (the directory needs it free)",
);

const fn iosize(default: &'static str) -> ParamSpec {
    size(
        "iosize",
        default,
        64 << 20,
        "bytes per read or write: one operation",
    )
}

/// fs's transfer parameters for a personality.
fn fs_params(name: &str, p: &Params) -> Params {
    // Writes go to a file in the cache (fs's transfers lay it out just before): Filebench's
    // cached=false would make the first write to each page of an uncached file read it first.
    let reads = matches!(name, "filemicro.rread" | "filemicro.seqread");
    let cache = if reads && !is_true(p, "cached") {
        "cold"
    } else {
        "warm"
    };
    let sync = match name {
        "filemicro.rwritedsync" => "each",
        "filemicro.rwritefsync" => "end",
        _ if is_true(p, "sync") => "each",
        _ => "none",
    };
    let mut pairs = vec![
        ("size", p.str("filesize")),
        ("bufsize", p.str("iosize")),
        ("cache", cache),
        ("sync", sync),
    ];
    // rwrite's and rwritefsync's files are laid out as Filebench preallocates them, in 1 MiB
    // writes: ext4 then holds them in large folios, a 2 KiB write into one costs ten times a
    // write into a small one, and an fsync writes back every folio a write dirtied, whole
    // (docs/filemicro.md, "Beside Filebench"). rwrite's file stays dirty, so its claim that a
    // write reaches no device holds whatever the folio size; rwritefsync's claim allows any
    // folio from a page to the layout's write. rwritedsync keeps writes of its I/O size: its
    // claim counts pages.
    if matches!(name, "filemicro.rwrite" | "filemicro.rwritefsync") {
        pairs.push(("layout", FILEBENCH_PREALLOC));
    }
    Params::from_pairs(&pairs)
}

/// Filebench's preallocation writes (`FILE_ALLOC_BLOCK`, fileset.h).
const FILEBENCH_PREALLOC: &str = "1M";

/// fs's kind of transfer for a personality, and whether its offsets are random.
fn kind_of(name: &str) -> (fs::Kind, bool) {
    match name {
        "filemicro.rread" => (fs::Kind::Read, true),
        "filemicro.seqread" => (fs::Kind::Read, false),
        _ => (fs::Kind::Write, true),
    }
}

/// The calls of a personality: fs's transfer's, at fs's parameters for it.
fn transfer_claims(name: &str, p: &Params) -> Vec<Claim> {
    fs::transfer_claims(&fs_params(name, p), kind_of(name).0)
}

macro_rules! transfer_fns {
    ($($setup:ident, $exp:ident, $pre:ident, $name:literal;)*) => {$(
        #[cfg(unix)]
        fn $setup(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
            let every = ($name == "filemicro.rwritefsync").then(|| p.u64("iters"));
            let (kind, random) = kind_of($name);
            fs::setup_transfer_every(&fs_params($name, p), c, kind, random, every)
        }
        fn $exp(p: &Params) -> Vec<Expectation> {
            if $name == "filemicro.rwritefsync" {
                return rwritefsync_expectations(p);
            }
            let (kind, random) = kind_of($name);
            fs::transfer_expectations(&fs_params($name, p), kind, random)
        }
        #[cfg(unix)]
        fn $pre(p: &Params, c: &Context) -> Result<(), Refusal> {
            // fs's refusal, in this family's parameter names.
            fs::preflight_one(&fs_params($name, p), c).map_err(|e| {
                e.renamed(|name| match name {
                    "bufsize" => "iosize",
                    "size" => "filesize",
                    other => other,
                })
            })
        }
        // Elsewhere the routines are not built (POSIX's): `experiment::unix_setups`.
        #[cfg(not(unix))]
        use crate::experiment::elsewhere as $setup;
        #[cfg(not(unix))]
        use crate::experiment::elsewhere_preflight as $pre;
    )*};
}

transfer_fns! {
    setup_rread, rread_exp, rread_room, "filemicro.rread";
    setup_rwrite, rwrite_exp, rwrite_room, "filemicro.rwrite";
    setup_rwritedsync, rwritedsync_exp, rwritedsync_room, "filemicro.rwritedsync";
    setup_rwritefsync, rwritefsync_exp, rwritefsync_room, "filemicro.rwritefsync";
    setup_seqread, seqread_exp, seqread_room, "filemicro.seqread";
}

/// Blocks charged per write over one fsync period from a clean file whose page cache holds
/// it in folios of `folio` bytes: between two fsyncs (one per `iters` random writes) each
/// folio is dirtied once at most, and dirtying it charges all its pages (the kernel's
/// `folio_account_dirtied`): blocks per op = pages × page/512 × (1 − e^(−N·span/folios)) / N,
/// N = iters, span the folios one write covers (fs's random-write formula with its period).
fn period_blocks(p: &Params, folio: u64) -> f64 {
    let page = page_size();
    let folio = folio.max(page);
    let iosize = p.u64("iosize").max(1);
    let len = (p.u64("filesize") / iosize).max(1) * iosize;
    let pages = len.div_ceil(page) as f64;
    let folios = len.div_ceil(folio) as f64;
    let span = fs::pages_spanned(p.u64("filesize"), iosize, folio);
    let n = p.u64("iters").max(1) as f64;
    pages * (1.0 - (-n * span / folios).exp()) * page as f64 / 512.0 / n
}

/// The file is laid out in Filebench's 1 MiB writes, and the kernel decides its folios: 4 KiB
/// pages on a file system without large folios, up to the 1 MiB of a write with them (ext4
/// since Linux 6.16). The claim takes the range between the two.
fn rwritefsync_expectations(p: &Params) -> Vec<Expectation> {
    let iosize = p.u64("iosize").max(1);
    let small = period_blocks(p, page_size()) * 0.75;
    let layout = crate::experiment::params::parse_size(FILEBENCH_PREALLOC).unwrap_or(1 << 20);
    let large = period_blocks(p, layout) * 1.25;
    let range = Bound::Near {
        value: (small + large) / 2.0,
        tolerance: (large - small) / 2.0 + 0.01,
    };
    vec![
        fs::no_major_faults(),
        Expectation::new(
            Metric::Rusage("inblock"),
            Bound::Below(0.05 * iosize as f64 / 512.0 + 0.01),
            fs::WHY_NO_READ,
        ),
        // Over one whole period, not the samples: the kernel charges oublock when a write
        // dirties a clean page, so a sample run that is not a whole number of periods measured
        // 0.349 and 0.848 for 2.0 (see fs::PERIOD_OUBLOCK).
        Expectation::new(
            Metric::Fact(fs::PERIOD_OUBLOCK),
            range,
            "over one whole period from a clean file, each of iters random writes is charged \
             the pages of the folios it dirties first (the kernel counts oublock at dirtying); \
             the fsync that ends the period cleans them. From 4 KiB folios −25% to the layout's \
             1 MiB folios +25%: the kernel picks the folio size, and a flusher writeback \
             inside a period dirties pages once more",
        ),
        fs::syscalls(1.0 + 1.0 / p.u64("iters").max(1) as f64),
    ]
}

pub static RREAD: ExperimentInfo = ExperimentInfo::new(
    "filemicro.rread",
    "Filebench filemicro_rread: pread of iosize bytes at a random offset of a preallocated \
     file; cached=false keeps it nearly uncached (fs.random_read cache=cold)",
    "read",
    "pread (cached=false: POSIX_FADV_RANDOM, + one posix_fadvise DONTNEED every pages/16 reads)",
    setup_rread,
)
.params(&[FILESIZE_1G, iosize("2K"), CACHED])
.syscalls(|p| transfer_claims("filemicro.rread", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(rread_exp)
.preflight(rread_room)
.quick_params(&[("filesize", "16M")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static RWRITE: ExperimentInfo = ExperimentInfo::new(
    "filemicro.rwrite",
    "Filebench filemicro_rwrite: pwrite of iosize bytes at a random offset of a preallocated \
     file, in the page cache (sync=true: O_DSYNC)",
    "write",
    "pwrite (fs.random_write)",
    setup_rwrite,
)
.params(&[FILESIZE_1G, iosize("2K"), SYNC])
.syscalls(|p| transfer_claims("filemicro.rwrite", p))
.outside_default_suite()
.work_dir()
.expectations(rwrite_exp)
.preflight(rwrite_room)
.quick_params(&[("filesize", "16M")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static RWRITEDSYNC: ExperimentInfo = ExperimentInfo::new(
    "filemicro.rwritedsync",
    "Filebench filemicro_rwritedsync: pwrite of iosize bytes at a random offset of a \
     preallocated file opened O_DSYNC",
    "write",
    "pwrite on an O_DSYNC descriptor (fs.random_write sync=each)",
    setup_rwritedsync,
)
.params(&[FILESIZE_1G, iosize("2K")])
.syscalls(|p| transfer_claims("filemicro.rwritedsync", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(rwritedsync_exp)
.preflight(rwritedsync_room)
.quick_params(&[("filesize", "16M")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static RWRITEFSYNC: ExperimentInfo = ExperimentInfo::new(
    "filemicro.rwritefsync",
    "Filebench filemicro_rwritefsync: pwrite of iosize bytes at a random offset of a \
     preallocated file, fsync after every iters writes",
    "write",
    "pwrite, + one fsync per iters writes (not per op)",
    setup_rwritefsync,
)
.params(&[
    FILESIZE_1G,
    iosize("8K"),
    int("iters", "16384", "random writes between two fsyncs"),
])
.syscalls(|p| transfer_claims("filemicro.rwritefsync", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(rwritefsync_exp)
.preflight(rwritefsync_room)
.quick_params(&[("filesize", "16M")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

pub static SEQREAD: ExperimentInfo = ExperimentInfo::new(
    "filemicro.seqread",
    "Filebench filemicro_seqread: read of iosize bytes after the last, wrapping around a \
     preallocated file; cached=false drops its pages before each pass (fs.read cache=cold)",
    "read",
    "pread (cached=false: + one posix_fadvise DONTNEED per pass over the file, not per op)",
    setup_seqread,
)
.params(&[FILESIZE_1G, iosize("1M"), CACHED])
.syscalls(|p| transfer_claims("filemicro.seqread", p))
.outside_default_suite()
.counters_between_samples()
.work_dir()
.expectations(seqread_exp)
.preflight(seqread_room)
.quick_params(&[("filesize", "64M")])
.cells(crate::experiment::filemicro::FILEMICRO_FAMILY_CELLS);

#[cfg(test)]
mod tests {
    use super::*;

    /// rwrite's and rwritefsync's files are laid out as Filebench preallocates them; the
    /// others keep fs's layout, which their oublock claims count on.
    #[test]
    fn the_random_writes_without_o_dsync_are_laid_out_as_filebench_preallocates() {
        let p = Params::from_pairs(&[("filesize", "1G"), ("iosize", "2K")]);
        let layout = |name| fs_params(name, &p).get("layout").map(str::to_string);
        for name in ["filemicro.rwrite", "filemicro.rwritefsync"] {
            assert_eq!(layout(name).as_deref(), Some("1M"), "{name}");
        }
        for name in [
            "filemicro.rread",
            "filemicro.rwritedsync",
            "filemicro.seqread",
        ] {
            assert_eq!(layout(name), None, "{name}");
        }
    }

    /// Filebench's rwritefsync (1 GiB, 8 KiB writes, fsync every 16,384): about 1.9 pages a
    /// write in 4 KiB folios (15 blocks), and the whole file each period in 1 MiB folios
    /// (every one of 1,024 folios dirtied: 128 blocks a write).
    #[test]
    fn a_period_charges_the_folios_its_writes_dirty() {
        let p = Params::from_pairs(&[("filesize", "1G"), ("iosize", "8K"), ("iters", "16384")]);
        let small = period_blocks(&p, 4096);
        let large = period_blocks(&p, 1 << 20);
        assert!((small - 15.04).abs() < 0.05, "{small}");
        assert!((large - 128.0).abs() < 0.01, "{large}");
        let Some(Bound::Near { value, tolerance }) = rwritefsync_expectations(&p)
            .into_iter()
            .find(|e| e.metric == Metric::Fact(fs::PERIOD_OUBLOCK))
            .map(|e| e.bound)
        else {
            panic!("no period claim");
        };
        assert!(value - tolerance <= small * 0.75 + 1e-9 && value + tolerance >= large * 1.25);
    }
}

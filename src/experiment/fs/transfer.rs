//! The transfers: one buffer of a sequential or random pass over a file (write, read, copy, random_read, random_write).

use super::*;
use crate::experiment::RoutineError;
use crate::model::Fact;
use crate::platform::rusage;

// --- transfers: write, read, copy, random_read, random_write ---

/// Where the next buffer goes.
pub(super) enum Order {
    /// Buffer after buffer, wrapping at the end of the file.
    Sequential,
    /// A uniformly random buffer-aligned offset.
    Random(Rng),
}

pub(super) struct Transfer {
    pub(super) kind: Kind,
    /// The file written (Write, Copy) or read (Read).
    pub(super) fd: Fd,
    /// The source of a copy.
    pub(super) src: Option<Fd>,
    pub(super) buf: Anon,
    pub(super) bufsize: usize,
    /// Buffers in the file.
    pub(super) blocks: u64,
    pub(super) order: Order,
    /// Ops since the last once-per-period event, and the period (`None`: no event).
    pub(super) step: u64,
    pub(super) every: Option<u64>,
    /// The event: fsync (sync=end) or drop the file's pages (cache=cold).
    pub(super) fsync_at_event: bool,
    pub(super) drop_at_event: bool,
    /// Count the blocks one whole fsync period writes, after sampling (see
    /// [`PERIOD_OUBLOCK`]): set for an fsync every so many writes (filemicro.rwritefsync).
    pub(super) period_fact: bool,
}

/// Whole periods counted for [`PERIOD_OUBLOCK`](super::PERIOD_OUBLOCK); the fact is the fewest blocks of them.
const PERIODS_COUNTED: u32 = 3;

impl Transfer {
    /// Blocks charged per write over one whole fsync period (see [`PERIOD_OUBLOCK`]):
    /// fsync first so every page is clean, then `every` writes, the last one followed by the
    /// period's fsync; the fewest of [`PERIODS_COUNTED`] periods. A page written back inside a
    /// period (another process's syncfs of the file system, background writeback) is charged
    /// again when it is dirtied again, so a disturbed period can only count more: 3.924 for
    /// 1.999 once while other test suites ran. `None`: the routine has no such period.
    fn period_oublock(&mut self) -> Result<Option<f64>, RoutineError> {
        let Some(period) = self
            .every
            .filter(|_| self.period_fact && self.fsync_at_event)
        else {
            return Ok(None);
        };
        let usage = || rusage::this_thread().unwrap_or_else(rusage::this_process);
        let mut fewest = f64::INFINITY;
        for _ in 0..PERIODS_COUNTED {
            self.fd.fsync()?;
            self.step = 0;
            let before = usage();
            self.run(period)?;
            let after = usage();
            fewest = fewest.min((after.oublock - before.oublock) as f64 / period as f64);
        }
        Ok(Some(fewest))
    }

    pub(super) fn event(&self) -> Result<(), RoutineError> {
        if self.fsync_at_event {
            self.fd.fsync()?;
        }
        if self.drop_at_event {
            self.fd.drop_cache()?;
        }
        Ok(())
    }
}

impl Routine for Transfer {
    fn period(&self) -> Option<u64> {
        self.every
    }

    fn facts(&mut self) -> Vec<Fact> {
        match self.period_oublock() {
            Ok(Some(blocks)) => vec![Fact::new(
                PERIOD_OUBLOCK,
                blocks,
                "blocks/write",
                "oublock per write over one whole fsync period from a clean file, the fewest of \
                 three periods",
            )],
            // Not counted: the claim on it is not checked (a failed write fails the samples).
            Ok(None) | Err(_) => Vec::new(),
        }
    }

    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            let block = match &mut self.order {
                Order::Sequential => self.step,
                Order::Random(rng) => rng.below(self.blocks),
            };
            let offset = block * self.bufsize as u64;
            let io = |fd: &Fd, write| fd.transfer(write, self.buf.ptr(), self.bufsize, offset);
            match self.kind {
                Kind::Write => io(&self.fd, true),
                Kind::Read => io(&self.fd, false),
                Kind::Copy => {
                    let src = self.src.as_ref().ok_or("copy without a source")?;
                    io(src, false).and_then(|()| io(&self.fd, true))
                }
            }
            .map_err(|e| format!("I/O at offset {offset}: {e}"))?;
            self.step += 1;
            let period = self.every.unwrap_or(self.blocks);
            if self.step >= period {
                self.step = 0;
                if self.every.is_some() {
                    self.event()?;
                }
            }
        }
        Ok(())
    }
}

pub(super) fn setup_transfer(
    params: &Params,
    ctx: &Context,
    kind: Kind,
    random: bool,
) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer_every(params, ctx, kind, random, None)
}

/// `setup_transfer`, with sync=end fsyncing every `fsync_every` writes instead of once per
/// pass over the file (Filebench's rwritefsync: 16384 random writes, then fsync).
pub(crate) fn setup_transfer_every(
    params: &Params,
    ctx: &Context,
    kind: Kind,
    random: bool,
    fsync_every: Option<u64>,
) -> Result<Box<dyn Routine>, SetupError> {
    let dir = work_dir(ctx)?;
    let sync = sync_of(params);
    let cold = cold(params);
    let needs_device = match (sync, cold) {
        ("end", _) => Some("fsync"),
        ("each", _) => Some("O_DSYNC"),
        ("direct", _) => Some("O_DIRECT"),
        (_, true) => Some("a cold read"),
        _ => None,
    };
    let mount = check_device(dir, needs_device)?;
    let bufsize = params.u64("bufsize");
    let blocks = params.u64("size") / bufsize.max(1);
    if bufsize == 0 || blocks == 0 {
        return Err(SetupError::Failed(format!(
            "bufsize {bufsize} does not fit in size {}",
            params.u64("size")
        )));
    }
    let len = blocks * bufsize;
    let page = page_size();
    let buf = Anon::private(bufsize.div_ceil(page) as usize * page as usize)?;
    // SAFETY: the buffer is ours and at least `bufsize` bytes long.
    unsafe { std::ptr::write_bytes(buf.ptr(), 0x5a, bufsize as usize) };

    let path = dir.join("data");
    // A file written to stays dirty for sync=none (rewrites then dirty no clean page); every
    // other file is synced so it is on the device and its pages can be dropped.
    let writes = kind != Kind::Read;
    // `layout` (not a parameter of fs's own experiments): the writes another program laid
    // the file out with (filemicro: Filebench's 1 MiB preallocation).
    let chunk = match params
        .get("layout")
        .and_then(crate::experiment::params::parse_size)
    {
        Some(layout) => layout,
        None if writes => bufsize,
        None => 1 << 20,
    };
    lay_out(&path, len, chunk, !(writes && sync == "none"))?;
    let src = match kind {
        Kind::Copy => Some(copy_source(dir, len)?),
        _ => None,
    };

    let fd = open_data(&path, writes, sync, &mount, &buf, bufsize)?;
    if kind == Kind::Read {
        prepare_read(&fd, len, cold, random)?;
    }
    let pages = len.div_ceil(page);
    let (every, fsync_at_event, drop_at_event) = if sync == "end" && writes {
        (Some(fsync_every.unwrap_or(blocks).max(1)), true, false)
    } else if cold && random {
        (Some(cold_random_period(pages)), false, true)
    } else if cold {
        (Some(blocks), false, true)
    } else {
        (None, false, false)
    };
    Ok(Box::new(Transfer {
        kind,
        fd,
        src,
        buf,
        bufsize: bufsize as usize,
        blocks,
        order: if random {
            Order::Random(Rng::new(0x0f5_5eed))
        } else {
            Order::Sequential
        },
        step: 0,
        every,
        fsync_at_event,
        drop_at_event,
        period_fact: fsync_every.is_some(),
    }))
}

/// The source of a copy: a synced file of `len` bytes, read once so it is in the cache.
fn copy_source(dir: &Path, len: u64) -> Result<Fd, SetupError> {
    let src_path = dir.join("source");
    lay_out(&src_path, len, 1 << 20, true)?;
    let fd = Fd::open(&src_path, libc::O_RDONLY).map_err(failed("opening the source"))?;
    warm(&fd, len)?;
    Ok(fd)
}

/// Open the file the transfers go to, with the flags of `sync` (O_DSYNC, or O_DIRECT on the
/// platform's `fscache::DIRECT_IO`). A file system that refuses O_DIRECT, at open or for a
/// buffer of `bufsize`, makes the variant unsupported, not failed.
fn open_data(
    path: &Path,
    writes: bool,
    sync: &str,
    mount: &mount::Mount,
    buf: &Anon,
    bufsize: u64,
) -> Result<Fd, SetupError> {
    let mut flags = if writes {
        libc::O_WRONLY
    } else {
        libc::O_RDONLY
    };
    match sync {
        "each" if writes => flags |= libc::O_DSYNC,
        "direct" if writes => flags |= fscache::DIRECT_IO,
        _ => {}
    }
    let fd = match Fd::open(path, flags) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && flags & fscache::DIRECT_IO != 0 => {
            return Err(SetupError::Unsupported(format!(
                "{}: the file system refuses O_DIRECT (open: {e})",
                mount.describe()
            )));
        }
        Err(e) => {
            return Err(SetupError::Failed(format!(
                "opening {}: {e}",
                path.display()
            )));
        }
    };
    if flags & fscache::DIRECT_IO != 0 {
        // A trial write: O_DIRECT wants buffer, length and offset aligned to the device's
        // logical block size, which only a transfer reveals.
        if let Err(e) = fd.transfer(true, buf.ptr(), bufsize as usize, 0) {
            return Err(if e.raw_os_error() == Some(libc::EINVAL) {
                SetupError::Unsupported(format!(
                    "{}: O_DIRECT refuses a {bufsize}-byte write (EINVAL): the length must be a \
                     multiple of the device's logical block size; pass --param bufsize=4096",
                    mount.describe()
                ))
            } else {
                SetupError::Failed(format!("O_DIRECT trial write: {e}"))
            });
        }
    }
    Ok(fd)
}

/// Put a file about to be read in the cache state of the variant: dropped (cold, with
/// readahead off for random reads) or read once (warm).
fn prepare_read(fd: &Fd, len: u64, cold: bool, random: bool) -> Result<(), SetupError> {
    if cold {
        if random {
            fd.advise_random()?;
        }
        fd.drop_cache()?;
    } else {
        warm(fd, len)?;
    }
    Ok(())
}

pub(super) fn setup_write(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Write, false)
}
pub(super) fn setup_read(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Read, false)
}
pub(super) fn setup_copy(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Copy, false)
}
pub(super) fn setup_random_read(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Read, true)
}
pub(super) fn setup_random_write(p: &Params, c: &Context) -> Result<Box<dyn Routine>, SetupError> {
    setup_transfer(p, c, Kind::Write, true)
}

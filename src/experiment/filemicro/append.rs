//! The append personalities' routine: one op appends one buffer (of a fixed or a random size)
//! at the end of a growing file, fsyncing every `iters` appends where the workload does.

use super::*;

#[cfg(unix)]
pub use routines::setup_append;

/// The size of each append: Filebench's `iosize`, a constant or a random variable.
#[derive(Debug, Clone, Copy)]
pub enum Sizes {
    /// Every append is this many bytes (`appendfile`).
    Fixed(u64),
    /// Uniform in `[0, n − 1]` (`appendfilerand`: `fb_random64(&size, iosize, 1)`); a zero
    /// draw writes nothing, as in Filebench.
    Below(u64),
    /// `min` plus a gamma variate of shape 1.5 whose mean is `mean − min`: Filebench's
    /// `randvar type=gamma, min=1k, mean=5632, gamma=1500` (gamma/1000 is the shape;
    /// fb_random.c `rand_gamma_get`). Capped at `MAX_DRAW`.
    Gamma15 { min: u64, mean: u64 },
    /// Filebench's tabular randvar of seqwriterandvartab: 80% uniform in [1K, 4K), 15% in
    /// [4K, 16K), 5% in [16K, 64K).
    Table,
}

/// The largest random append (the buffer's size); a gamma draw above it is cut to it. With
/// seqwriterandvargam's defaults one draw in about e^300 is.
pub const MAX_DRAW: u64 = 1 << 20;

const TABLE: [(f64, u64, u64); 3] = [
    (0.80, 1 << 10, 4 << 10),
    (0.15, 4 << 10, 16 << 10),
    (0.05, 16 << 10, 64 << 10),
];

impl Sizes {
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        match *self {
            Sizes::Fixed(n) => n,
            Sizes::Below(n) => rng.below(n.max(1)),
            Sizes::Gamma15 { min, mean } => {
                let x = min as f64 + rng.gamma_three_halves(mean.saturating_sub(min) as f64);
                (x.round() as u64).min(MAX_DRAW)
            }
            Sizes::Table => {
                let mut u = rng.next_f64();
                for (share, lo, hi) in TABLE {
                    if u < share {
                        return lo + rng.below(hi - lo);
                    }
                    u -= share;
                }
                let (_, lo, hi) = TABLE[2];
                lo + rng.below(hi - lo)
            }
        }
    }

    /// The mean append.
    pub fn mean(&self) -> f64 {
        match *self {
            Sizes::Fixed(n) => n as f64,
            Sizes::Below(n) => n.saturating_sub(1) as f64 / 2.0,
            Sizes::Gamma15 { min, mean } => min.max(mean) as f64,
            Sizes::Table => TABLE
                .iter()
                .map(|&(share, lo, hi)| share * (lo + hi - 1) as f64 / 2.0)
                .sum(),
        }
    }

    /// The largest append.
    pub fn max(&self) -> u64 {
        match *self {
            Sizes::Fixed(n) => n,
            Sizes::Below(n) => n.saturating_sub(1),
            Sizes::Gamma15 { .. } => MAX_DRAW,
            Sizes::Table => TABLE[2].2 - 1,
        }
    }
}

/// How a personality's appends behave, from its parameters.
#[derive(Debug, Clone, Copy)]
pub struct AppendPlan {
    pub sizes: Sizes,
    /// Appends between two fsyncs (`None`: no fsync).
    pub fsync_every: Option<u64>,
    /// O_DSYNC.
    pub dsync: bool,
    /// Bytes the file may reach before it is truncated (between batches, untimed).
    pub limit: u64,
}

impl AppendPlan {
    /// The bytes the directory needs: the file at its limit plus one append beyond it.
    pub fn room(&self) -> u64 {
        in_pages(self.limit.saturating_add(self.sizes.max()))
    }

    /// The most appends one batch may hold: as many as the limit takes at the mean size, so
    /// that a batch begun on a truncated file stays (on average) within [`Self::room`];
    /// rounded down to whole groups of `fsync_every` where there is room for one, so that a
    /// batch makes its fsyncs at the workload's rate.
    pub fn max_batch(&self) -> u64 {
        let most = ((self.limit as f64 / self.sizes.mean().max(1.0)) as u64).max(1);
        match self.fsync_every {
            Some(every) if most >= every => most / every * every,
            _ => most,
        }
    }
}

/// The routine, POSIX's: pwrite at the end of a growing file, fsync.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::mapping::Anon;
    use crate::experiment::{Context, Routine, RoutineError, SetupError};

    /// One op: `pwrite` of the next size at the end of the file; every `fsync_every` ops, fsync.
    pub struct Appender {
        fd: Fd,
        buf: Anon,
        plan: AppendPlan,
        rng: Rng,
        /// The file's length.
        len: u64,
        since_fsync: u64,
    }

    impl Routine for Appender {
        /// Truncate the file to nothing when the next batch would take it past its limit (the
        /// workload's `count`, `bytes` or `fsynccount`), outside the timed region and the sample's
        /// rusage; then fsync, so that committing the truncation (and, on a `discard` mount,
        /// discarding the freed blocks) is done here and not by the next timed fsync.
        fn prepare(&mut self, ops: u64) -> Result<(), RoutineError> {
            let next = self.len as f64 + ops as f64 * self.plan.sizes.mean();
            if self.len > 0 && next > self.plan.limit as f64 {
                // SAFETY: ftruncate on our own open descriptor.
                if unsafe { libc::ftruncate(self.fd.0, 0) } != 0 {
                    return Err(RoutineError::last_os("ftruncate"));
                }
                self.fd.fsync()?;
                self.len = 0;
            }
            Ok(())
        }

        fn max_batch(&self) -> Option<u64> {
            Some(self.plan.max_batch())
        }

        fn period(&self) -> Option<u64> {
            self.plan.fsync_every
        }

        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                let n = self.plan.sizes.draw(&mut self.rng);
                if n > 0 {
                    self.fd
                        .transfer(true, self.buf.ptr(), n as usize, self.len)
                        .map_err(|e| format!("append at {}: {e}", self.len))?;
                    self.len += n;
                }
                if let Some(every) = self.plan.fsync_every {
                    self.since_fsync += 1;
                    if self.since_fsync >= every {
                        self.since_fsync = 0;
                        self.fd.fsync()?;
                    }
                }
            }
            Ok(())
        }
    }

    /// An empty file under the work directory (Filebench's `size=0,prealloc`), opened for the
    /// plan's appends.
    pub fn setup_append(plan: AppendPlan, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
        let dir = work_dir(ctx)?;
        let needs = if plan.dsync {
            Some("O_DSYNC")
        } else if plan.fsync_every.is_some() {
            Some("fsync")
        } else {
            None
        };
        fs::check_device(dir, needs)?;
        let path = dir.join("bigfile");
        let mut flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        if plan.dsync {
            flags |= libc::O_DSYNC;
        }
        let fd = Fd::open(&path, flags).map_err(fs::failed("creating the file"))?;
        let len = in_pages(plan.sizes.max().max(1));
        let buf = Anon::private(len as usize)?;
        // SAFETY: the mapping is `len` bytes long and ours.
        unsafe { std::ptr::write_bytes(buf.ptr(), 0xa5, len as usize) };
        Ok(Box::new(Appender {
            fd,
            buf,
            plan,
            rng: Rng::new(0xf11e_be4c),
            len: 0,
            since_fsync: 0,
        }))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_no_more_appends_than_the_limit_takes() {
        let plan = |sizes, limit| AppendPlan {
            sizes,
            fsync_every: None,
            dsync: false,
            limit,
        };
        // create: 16 appends of 1 MiB.
        assert_eq!(plan(Sizes::Fixed(1 << 20), 16 << 20).max_batch(), 16);
        // Random sizes: the limit over the mean (4 KiB below 8 KiB: 4095.5 bytes).
        let below = plan(Sizes::Below(8192), 4096 * 4096).max_batch();
        assert!((4096..=4100).contains(&below), "{below}");
        // Never 0, even for a limit below one append.
        assert_eq!(plan(Sizes::Fixed(1 << 20), 1).max_batch(), 1);
        // createrand: whole groups of 10 appends and their fsync (32 MiB over a 512 KiB mean
        // is 64 appends: 60).
        let createrand = AppendPlan {
            fsync_every: Some(10),
            ..plan(Sizes::Below(1 << 20), 32 << 20)
        };
        assert_eq!(createrand.max_batch(), 60);
    }

    /// One size distribution of each kind, at the personalities' defaults.
    const KINDS: [Sizes; 3] = [
        Sizes::Below(8192),
        Sizes::Gamma15 {
            min: 1024,
            mean: 5632,
        },
        Sizes::Table,
    ];

    fn sample_mean(sizes: Sizes) -> f64 {
        let mut rng = Rng::new(7);
        let n = 200_000;
        (0..n).map(|_| sizes.draw(&mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn random_sizes_have_filebench_means() {
        for sizes in KINDS {
            let m = sample_mean(sizes);
            assert!((m / sizes.mean() - 1.0).abs() < 0.02, "{sizes:?}: {m}");
        }
        assert!((Sizes::Table.mean() - 5631.5).abs() < 0.01);
    }

    #[test]
    fn draws_stay_within_the_buffer() {
        let mut rng = Rng::new(1);
        for sizes in KINDS {
            for _ in 0..10_000 {
                let n = sizes.draw(&mut rng);
                assert!(n <= sizes.max(), "{sizes:?}: {n}");
            }
        }
        let mut rng = Rng::new(2);
        assert!((0..10_000).all(|_| {
            Sizes::Gamma15 {
                min: 1024,
                mean: 5632,
            }
            .draw(&mut rng)
                >= 1024
        }));
    }
}

//! What pagefault.anon needs of memory: the populate modes, THP off or on, the headroom, and fresh memory (pages free page reporting returned to the host).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Populate {
    Off,
    /// mmap with MAP_POPULATE.
    Mmap,
    /// madvise(MADV_POPULATE_WRITE) after mmap.
    Madvise,
}

impl Region {
    /// Write one byte to every page, in address order.
    pub(super) fn touch_all(&self) {
        for page in 0..self.pages {
            self.touch(page, 1);
        }
    }

    /// A region mapped with MAP_POPULATE, and how long that mmap took. MAP_POPULATE faults
    /// the pages in during the call, before madvise could mark the mapping: with THP mode
    /// `always` (`thp_always`) a `thp=off` region would get huge pages, so the process's THP
    /// is disabled around the call (PR_SET_THP_DISABLE); with another mode a `thp=on`
    /// region cannot get them (setup refuses that combination).
    pub(super) fn populated(
        pages: usize,
        thp: bool,
        thp_always: bool,
    ) -> Result<(Region, Duration), RoutineError> {
        let len = pages * PAGE;
        // An aligned range inside a reservation; the populated mapping replaces it there.
        let reservation = Anon::private(len + HUGE)?;
        let base = (reservation.ptr() as usize).next_multiple_of(HUGE) as *mut u8;
        let map_populate = || {
            let start = Instant::now();
            // SAFETY: MAP_FIXED replaces [base, base + len), which lies inside `reservation`,
            // our own mapping that nothing refers to yet; dropping `reservation` unmaps the
            // whole range, the populated part included.
            let ptr = unsafe {
                libc::mmap(
                    base.cast(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE
                        | libc::MAP_ANONYMOUS
                        | libc::MAP_FIXED
                        | crate::experiment::linux_only::MAP_POPULATE,
                    -1,
                    0,
                )
            };
            let elapsed = start.elapsed();
            // Read errno now: restoring the THP setting after the call could change it.
            let mapped = if ptr == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            };
            (mapped, elapsed)
        };
        let (mapped, elapsed) = if !thp && thp_always {
            without_thp(map_populate)?
        } else {
            map_populate()
        };
        mapped.map_err(|source| RoutineError::Os {
            call: format!("mmap(MAP_POPULATE) of {len} bytes"),
            source,
        })?;
        Ok((
            Region {
                _map: reservation,
                base,
                pages,
            },
            elapsed,
        ))
    }
}

/// Run `f` with transparent huge pages disabled for this process (PR_SET_THP_DISABLE), then
/// restore the previous setting.
pub(super) fn without_thp<T>(f: impl FnOnce() -> T) -> Result<T, RoutineError> {
    let was = crate::experiment::linux_only::prctl(
        crate::experiment::linux_only::PR_GET_THP_DISABLE,
        0,
        0,
    );
    if was < 0 {
        return Err(RoutineError::last_os("prctl(PR_GET_THP_DISABLE)"));
    }
    let set = |disable: libc::c_ulong| {
        let rc = crate::experiment::linux_only::prctl(
            crate::experiment::linux_only::PR_SET_THP_DISABLE,
            disable,
            0,
        );
        if rc == 0 {
            Ok(())
        } else {
            Err(RoutineError::last_os(format!(
                "prctl(PR_SET_THP_DISABLE, {disable})"
            )))
        }
    };
    if was == 0 {
        set(1)?;
    }
    let out = f();
    if was == 0 {
        set(0)?;
    }
    Ok(out)
}

/// AnonHugePages, in kB, of the mapping that holds `addr`, from this process's memory map.
pub(super) fn anon_huge_pages_kb(addr: usize) -> Result<f64, crate::platform::maps::RegionError> {
    crate::platform::maps::own_region_containing(addr as u64).map(|r| r.anon_huge_pages_kb as f64)
}

/// What this process may still allocate, bytes (`platform::cgroup::headroom`).
pub(super) fn memory_headroom() -> Option<usize> {
    crate::platform::cgroup::headroom().map(|room| room as usize)
}

pub(super) fn ns_per_page(elapsed: Duration, pages: usize) -> f64 {
    elapsed.as_nanos() as f64 / pages.max(1) as f64
}

/// Unmap a region, timed: ns per page.
pub(super) fn timed_unmap(region: Region) -> f64 {
    let pages = region.pages;
    let start = Instant::now();
    drop(region);
    ns_per_page(start.elapsed(), pages)
}

/// The rule that ends the absorption of recently freed memory: `ABSORB_RUN` chunks in a row
/// that each cost more than `FRESH_FACTOR` × the warm reference.
pub(super) struct FreshRule {
    pub(super) threshold_ns: f64,
    pub(super) run: usize,
}

impl FreshRule {
    pub(super) fn new(warm_ns: f64) -> FreshRule {
        FreshRule {
            threshold_ns: warm_ns * FRESH_FACTOR,
            run: 0,
        }
    }

    /// Note one chunk's cost per page; true once the run is long enough.
    pub(super) fn reached(&mut self, chunk_ns_per_page: f64) -> bool {
        self.run = if chunk_ns_per_page > self.threshold_ns {
            self.run + 1
        } else {
            0
        };
        self.run >= ABSORB_RUN
    }
}

/// The memory the kernel had freed recently, touched and held so the samples get none of it.
pub(super) struct Absorbed {
    /// `None` when there was no room for even one run of chunks.
    pub(super) _map: Option<Anon>,
    /// Touched before the first chunk of the final run of slow ones.
    pub(super) pool_bytes: usize,
    /// Touched in all.
    pub(super) bytes: usize,
    /// Whether the run of slow chunks was found before `cap` bytes.
    pub(super) reached: bool,
    /// The time budget, where the absorption used it up before either.
    pub(super) out_of_time: Option<std::time::Duration>,
    pub(super) cap: usize,
}

/// Touch memory chunk by chunk until the kernel hands out pages the host reclaimed (see
/// [`FreshRule`]), or `cap` bytes, or `budget` has passed (`ABSORB_BUDGET` in setup).
pub(super) fn absorb_recently_freed(
    warm_ns: f64,
    cap: usize,
    budget: std::time::Duration,
) -> Result<Absorbed, SetupError> {
    let cap = cap / ABSORB_CHUNK * ABSORB_CHUNK;
    if cap < ABSORB_CHUNK * ABSORB_RUN {
        return Ok(Absorbed {
            _map: None,
            pool_bytes: 0,
            bytes: 0,
            reached: false,
            out_of_time: None,
            cap,
        });
    }
    let map = Anon::private(cap)?;
    map.advise(crate::experiment::linux_only::MADV_NOHUGEPAGE)
        .map_err(|e| SetupError::Failed(format!("madvise(MADV_NOHUGEPAGE) failed: {e}")))?;
    let mut rule = FreshRule::new(warm_ns);
    let mut bytes = 0;
    let mut reached = false;
    let began = Instant::now();
    let mut out_of_time = None;
    while bytes < cap && !reached && out_of_time.is_none() {
        let start = Instant::now();
        for offset in (bytes..bytes + ABSORB_CHUNK).step_by(PAGE) {
            // SAFETY: `offset` < `cap`, the length of `map`, our own writable mapping.
            unsafe { map.ptr().add(offset).write_volatile(1) };
        }
        reached = rule.reached(ns_per_page(start.elapsed(), ABSORB_CHUNK / PAGE));
        bytes += ABSORB_CHUNK;
        out_of_time = (!reached && began.elapsed() > budget).then_some(budget);
    }
    Ok(Absorbed {
        _map: Some(map),
        pool_bytes: bytes - rule.run * ABSORB_CHUNK,
        bytes,
        reached,
        out_of_time,
        cap,
    })
}

/// The cost of touching memory released just before: a 64 MiB region touched, released with
/// MADV_DONTNEED and touched again, timed; the median of three.
pub(super) fn warm_reference() -> Result<f64, SetupError> {
    let region = Region::new(WARM_PROBE / PAGE, false)?;
    region.touch_all();
    let mut timings = Vec::with_capacity(3);
    for _ in 0..3 {
        region.dontneed()?;
        let start = Instant::now();
        region.touch_all();
        timings.push(ns_per_page(start.elapsed(), region.pages));
    }
    Ok(median(&timings).unwrap_or(f64::NAN))
}

/// `memory=fresh`: what keeps every batch on memory nobody touched recently. The kernel
/// hands out the memory freed last first, and keeps it backed by the host; so the recently
/// freed memory is absorbed once (only where a host reclaims free memory), and every region
/// a batch touched is held rather than unmapped, so no later batch gets its pages back.
pub(super) struct Fresh {
    pub(super) warm_ns: f64,
    /// The balloon device that reports free pages, and the memory absorbed because of it;
    /// `None` without one.
    pub(super) reporting: Option<(String, Absorbed)>,
    pub(super) held: Vec<Region>,
    pub(super) held_bytes: usize,
    /// Half of the memory headroom at setup (MemAvailable, or a cgroup's room): what the
    /// worker may hold, the absorbed memory included; a third of it may be absorbed.
    pub(super) limit: usize,
    /// A region was given back to stay within `limit`.
    pub(super) gave_back: bool,
    /// Batches mapped since then.
    pub(super) reused: u32,
}

impl Fresh {
    pub(super) fn new() -> Result<Fresh, SetupError> {
        let warm_ns = warm_reference()?;
        let available = memory_headroom().unwrap_or(ASSUMED_AVAILABLE);
        let reporting = match platform::memory::free_page_reporting() {
            Some(device) => Some((
                device,
                absorb_recently_freed(warm_ns, available / 3, ABSORB_BUDGET)?,
            )),
            None => None,
        };
        Ok(Fresh {
            warm_ns,
            held_bytes: reporting.as_ref().map_or(0, |(_, a)| a.bytes),
            reporting,
            held: Vec::new(),
            limit: available / 2,
            gave_back: false,
            reused: 0,
        })
    }

    /// Make room for a region of `len` bytes: give back the oldest regions while the
    /// worker would hold more than its limit (timed unmaps go to `munmap_ns`).
    pub(super) fn make_room(&mut self, len: usize, munmap_ns: &mut Vec<f64>) {
        while self.held_bytes + len > self.limit && !self.held.is_empty() {
            let oldest = self.held.remove(0);
            self.held_bytes -= oldest.len();
            munmap_ns.push(timed_unmap(oldest));
            self.gave_back = true;
        }
        if self.gave_back {
            self.reused += 1;
        }
    }

    pub(super) fn hold(&mut self, region: Region) {
        self.held_bytes += region.len();
        self.held.push(region);
    }

    pub(super) fn facts(&self) -> Vec<Fact> {
        let mut facts = vec![Fact::new(
            "warm_ns_per_page",
            self.warm_ns,
            "ns/page",
            "reference: touching 64 MiB released just before (MADV_DONTNEED), median of 3, \
             in setup. This is the figure to compare with bare metal, where no host \
             reclaims free memory",
        )];
        match &self.reporting {
            Some((device, a)) => {
                facts.push(Fact::new(
                    "recently_freed_mib",
                    (a.pool_bytes >> 20) as f64,
                    "MiB",
                    format!(
                        "{device} reports free pages to the host: memory the kernel handed \
                         out first, still backed by the host, touched and held before the \
                         first batch ({} MiB touched in all, at most {} MiB{})",
                        a.bytes >> 20,
                        a.cap >> 20,
                        a.out_of_time.map_or(String::new(), |budget| format!(
                            "; stopped after {} s",
                            budget.as_secs()
                        ))
                    ),
                ));
                facts.push(Fact::new(
                    "fresh_memory_reached",
                    if a.reached { 1.0 } else { 0.0 },
                    "0/1",
                    format!(
                        "1: {ABSORB_RUN} chunks of {} MiB in a row cost more than {FRESH_FACTOR}× \
                         warm, so the kernel had reached memory the host reclaimed",
                        ABSORB_CHUNK >> 20
                    ),
                ));
            }
            None => facts.push(Fact::new(
                "recently_freed_mib",
                f64::NAN,
                "MiB",
                "no virtio balloon takes free page reports here: no host reclaims free \
                 memory, so fresh memory costs what warm memory does",
            )),
        }
        facts.push(Fact::new(
            "batches_on_reused_memory",
            f64::from(self.reused),
            "batches",
            format!(
                "batches (warm-up, samples, then the probe pass) mapped after a held region \
                 was given back to stay within {} MiB",
                self.limit >> 20
            ),
        ));
        facts
    }
}

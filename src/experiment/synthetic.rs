//! An experiment whose cost is known, hidden from the default suite. It drives the whole
//! pipeline (worker → store → analysis → output) deterministically in tests, the way
//! hyperfine's mock executor does, and lets tests provoke each way a worker can end: a crash,
//! a hang, an error, an unsupported setup, and a counter that contradicts the expectation.

use crate::experiment::RoutineError;
use crate::model::equivalence as eq;
use std::hint::black_box;

use super::mapping::Anon;
use super::{Context, ExperimentInfo, ParamKind, ParamSpec, Params, Routine, SetupError};
use crate::analysis::validate::Expectation;

const PAGE: usize = 4096;
/// Pages cycled through by `pages=N`; released with MADV_DONTNEED when used up.
const REGION_PAGES: usize = 16384;

/// Judged on the typical sample: a process's first sample may take one stray fault of its own
/// first touches, which a short run divides by few operations (measured: 1 fault over 50 spins
/// of 20 µs under `--budget 0.05`, 0.02 a spin, where `pages=1` faults in every sample).
fn expectations(_: &Params) -> Vec<Expectation> {
    vec![super::ctxswitch::no_faults(
        "the synthetic loop touches no new memory unless `pages` asks it to",
    )]
}

struct Spin {
    ns: u64,
    mode: String,
    pages: usize,
    region: Option<Region>,
    next_page: usize,
    calls: u64,
}

/// An anonymous mapping whose pages are faulted in one by one.
struct Region {
    map: Anon,
}

impl Region {
    fn new(len: usize) -> Result<Region, SetupError> {
        let map = Anon::private(len)?;
        // One fault per page even where THP is `always`: a huge page would fault 512 at once.
        // Advice only: where it is refused, the expectation still catches the difference.
        map.base_pages_only();
        Ok(Region { map })
    }

    /// Make the next touch of every page fault again.
    fn release(&mut self) {
        let _ = self.map.release();
    }
}

/// The monotonic clock in nanoseconds since the first call (clock_gettime(CLOCK_MONOTONIC)
/// on Unix, QueryPerformanceCounter on Windows: both read in user space).
fn now_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

impl Routine for Spin {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        self.calls += 1;
        // Misbehave only after batch sizing and warm-up have called `run` a few dozen times
        // (with a tight --precision, sampling is under way by then).
        if self.calls == 40 {
            match self.mode.as_str() {
                "crash" => std::process::abort(),
                "hang" => loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                },
                "fail" => return Err("synthetic failure requested by mode=fail".into()),
                _ => {}
            }
        }
        for _ in 0..ops {
            let start = now_ns();
            while now_ns().wrapping_sub(start) < self.ns {
                std::hint::spin_loop();
            }
            if let Some(region) = &mut self.region {
                for _ in 0..self.pages {
                    if self.next_page == REGION_PAGES {
                        region.release();
                        self.next_page = 0;
                    }
                    // SAFETY: next_page < REGION_PAGES, so the write is inside the mapping.
                    unsafe {
                        region
                            .map
                            .ptr()
                            .add(self.next_page * PAGE)
                            .write_volatile(1)
                    };
                    self.next_page += 1;
                }
            }
            black_box(());
        }
        Ok(())
    }
}

fn setup(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let mode = params.str("mode").to_string();
    if mode == "unsupported" {
        return Err(SetupError::Unsupported(
            "synthetic: unsupported by request (mode=unsupported)".into(),
        ));
    }
    let pages = params.u64("pages") as usize;
    // Process k of a --repeat run spins `spread × k` ns more per operation, and the second
    // (k = 1) `apart` ns more again.
    let process: u64 = std::env::var(super::PROCESS_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let apart = if process == 1 { params.u64("apart") } else { 0 };
    let region = if pages > 0 {
        Some(Region::new(REGION_PAGES * PAGE)?)
    } else {
        None
    };
    Ok(Box::new(Spin {
        ns: params.u64("ns") + params.u64("spread") * process + apart,
        mode,
        pages,
        region,
        next_page: 0,
        calls: 0,
    }))
}

/// The family's experiments, in the order the default suite runs them (the registry is the
/// families' lists, `experiment::REGISTRY`).
pub static EXPERIMENTS: &[&ExperimentInfo] = &[&SYNTHETIC];

pub static SYNTHETIC: ExperimentInfo = ExperimentInfo::new(
    "synthetic.spin",
    "busy-waits a known time per operation (for tests; not in the default suite)",
    "spin",
    "user space only",
    setup,
)
.params(&[
    ParamSpec {
        name: "ns",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: "1000",
        help: "nanoseconds each operation spins",
    },
    ParamSpec {
        name: "mode",
        kind: ParamKind::Choice(&["ok", "crash", "hang", "fail", "unsupported"]),
        default: "ok",
        help: "how the worker behaves once sampling has started",
    },
    ParamSpec {
        name: "pages",
        kind: ParamKind::Int { min: 0, max: 64 },
        default: "0",
        help: "fresh pages touched per operation (breaks its no-fault expectation)",
    },
    ParamSpec {
        name: "spread",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "0",
        help: "nanoseconds added per operation for each earlier --repeat process: process \
               k (from 0) spins ns + k × spread",
    },
    ParamSpec {
        name: "apart",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "0",
        help: "nanoseconds the second --repeat process alone adds per operation: a process \
               at a level of its own",
    },
])
.user_space()
.outside_default_suite()
.ladder()
.expectations(expectations)
.cells(eq::Cells {
    linux: eq::noted("user space only", "known cost, for tests"),
    freebsd: eq::noted("user space only", "known cost, for tests"),
    macos: eq::noted("user space only", "known cost, for tests"),
    windows: eq::noted("user space only", "known cost, for tests"),
});

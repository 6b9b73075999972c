//! ctxswitch.futex: the ping-pong with futex wait and wake, between processes or threads.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup_futex);

// --- ctxswitch.futex ---

pub(super) const MODE_PARAM: ParamSpec = ParamSpec {
    name: "mode",
    kind: ParamKind::Choice(&["processes", "threads"]),
    default: "processes",
    help: "processes: a forked partner sharing a MAP_SHARED page (FUTEX_WAIT/WAKE); threads: a \
           partner thread of the worker (FUTEX_*_PRIVATE)",
};

pub(super) fn futex_expectations(params: &Params) -> Vec<Expectation> {
    let switches = if params.get("placement") == Some("cross") {
        cross_switches()
    } else {
        vec![
            two_switches(
                "each round trip switches to the partner and back: exactly two switches of \
                 both sides (in threads mode the worker's rusage covers both threads)",
            ),
            worker_switches_once(),
        ]
    };
    let mut e = switches;
    e.extend([
        syscalls_near(
            1.5,
            0.55,
            "one FUTEX_WAKE per round trip, and one FUTEX_WAIT unless the answer is already \
             there (when the woken partner preempted the worker and answered before it waited)",
        ),
        no_faults("a round trip touches no new memory"),
    ]);
    e
}

/// Across CPUs a side blocks only when the answer has not come yet: the partner runs on its
/// own CPU and may answer before the worker reaches FUTEX_WAIT, which then returns at once
/// (EAGAIN) with no switch. How often depends on how fast the host wakes an idle vCPU: 2.00
/// switches per round trip here at ~35 µs a round trip, 1.171 on a host where a round trip
/// took 81.9 µs. So two is the most a round trip makes, not a count.
fn cross_switches() -> Vec<Expectation> {
    vec![
        Expectation::new(
            Metric::BothSidesSwitches,
            Bound::Below(2.0 + SWITCHES_TOLERANCE),
            "across CPUs each side blocks at most once per round trip, and not at all when the \
             answer is there before it waits (1.171 measured on a slow-waking host, 2.00 here)",
        ),
        Expectation::new(
            Metric::Counter("context-switches"),
            Bound::Below(1.15),
            "the worker leaves the CPU at most once per round trip (perf counts its switches \
             of both kinds)",
        ),
    ]
}

pub static FUTEX: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.futex",
    "two threads or processes take turns with futex wait/wake on a shared word: two \
     switches per round trip, without the pipe's data path",
    "round trip",
    "syscall(SYS_futex) FUTEX_WAKE + FUTEX_WAIT, partner pinned",
    setup_futex,
)
.params(&[MODE_PARAM, PLACEMENT_PARAM])
.syscalls(|_| crate::experiment::each(&["futex"]))
.subtract_loop_overhead()
.counters_between_samples()
.expectations(futex_expectations)
.cells(eq::Cells {
    linux: eq::runs("futex(2) FUTEX_WAIT / FUTEX_WAKE"),
    freebsd: eq::runs("_umtx_op UMTX_OP_WAIT_UINT / UMTX_OP_WAKE"),
    macos: eq::Cell::No("not available: `__ulock_wait`/`__ulock_wake` are private"),
    windows: eq::Cell::No(
        "not enabled yet: WaitOnAddress and WakeByAddressSingle work between the threads \
             of one process only",
    ),
});

/// The routine, POSIX's: a forked partner or a thread, futex wait and wake.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::pingpong::{self, Cpus, PartnerProcess, SharedWords, Turns};
    use crate::experiment::{Context, Partner, Routine, RoutineError, SetupError};
    use std::sync::{Arc, mpsc};
    use std::thread::JoinHandle;
    use std::time::Duration;

    pub(super) enum FutexSide {
        Process(PartnerProcess),
        Thread(Option<JoinHandle<i32>>),
    }

    /// The worker side of the futex ping-pong; the partner is a forked process or a thread.
    pub(super) struct FutexPingPong {
        pub(super) words: Arc<SharedWords>,
        pub(super) private: bool,
        pub(super) next: u32,
        pub(super) side: FutexSide,
    }

    impl FutexPingPong {
        pub(super) fn turns(&self) -> Turns<'_> {
            Turns {
                seq: self.words.word(0),
                stop: self.words.word(1),
                private: self.private,
            }
        }
    }

    impl Routine for FutexPingPong {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let mut next = self.next;
            let turns = self.turns();
            let mut outcome = Ok(());
            for _ in 0..ops {
                if let Err(e) = turns.worker_round_trip(&mut next) {
                    outcome = Err(e);
                    break;
                }
            }
            self.next = next;
            outcome
        }

        fn partner(&self) -> Option<Partner> {
            match &self.side {
                FutexSide::Process(p) => Some(p.partner()),
                // A thread's switches are in the worker's own rusage (RUSAGE_SELF covers the
                // whole process), so the harness needs nothing more.
                FutexSide::Thread(_) => None,
            }
        }

        fn min_batch(&self) -> Option<u64> {
            Some(pingpong::MIN_BATCH)
        }
    }

    impl Drop for FutexPingPong {
        fn drop(&mut self) {
            self.turns().stop_partner();
            match &mut self.side {
                FutexSide::Process(p) => p.stop(Duration::from_millis(200)),
                FutexSide::Thread(handle) => {
                    if let Some(h) = handle.take() {
                        let _ = h.join();
                    }
                }
            }
        }
    }

    pub(super) fn setup_futex(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let cpus = pingpong::place(params, ctx)?;
        let words = Arc::new(SharedWords::new()?);
        let threads = params.str("mode") == "threads";
        let side = if threads {
            spawn_futex_thread(&words, cpus)?
        } else {
            let shared = Arc::clone(&words);
            let process = PartnerProcess::spawn(Some(cpus.partner), &[], move || {
                Turns {
                    seq: shared.word(0),
                    stop: shared.word(1),
                    private: false,
                }
                .partner_loop()
            })?;
            FutexSide::Process(process)
        };
        Ok(Box::new(FutexPingPong {
            words,
            private: threads,
            next: 0,
            side,
        }))
    }

    pub(super) fn spawn_futex_thread(
        words: &Arc<SharedWords>,
        cpus: Cpus,
    ) -> Result<FutexSide, SetupError> {
        let shared = Arc::clone(words);
        let (tx, rx) = mpsc::channel::<Result<(), SetupError>>();
        let handle = std::thread::Builder::new()
            .name("oslab-partner".into())
            .spawn(move || {
                let pinned = crate::platform::cpu::pin(&[cpus.partner]).map_err(|e| {
                    SetupError::Failed(format!(
                        "cannot pin the partner thread to CPU {}: {e}",
                        cpus.partner
                    ))
                });
                let ok = pinned.is_ok();
                let _ = tx.send(pinned);
                if !ok {
                    return 1;
                }
                Turns {
                    seq: shared.word(0),
                    stop: shared.word(1),
                    private: true,
                }
                .partner_loop()
            })
            .map_err(|e| SetupError::Failed(format!("cannot start the partner thread: {e}")))?;
        match rx.recv() {
            Ok(Ok(())) => Ok(FutexSide::Thread(Some(handle))),
            Ok(Err(refused)) => {
                let _ = handle.join();
                Err(refused)
            }
            Err(_) => {
                let _ = handle.join();
                Err(SetupError::Failed(
                    "the partner thread ended at once".into(),
                ))
            }
        }
    }
}

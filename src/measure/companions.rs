//! The other copies of `--copy-mode threads`: threads of the worker, each pinned to its CPU,
//! each running its own instance of the routine for as long as the measured thread samples,
//! so the kernel sees N threads of one address space doing the same thing at once (page faults
//! under one mmap lock, opens in one directory). They are not sampled: each times its own
//! `run` calls and reports its operations and their time, so the total throughput and the
//! balance between copies can be shown beside the measured copy's samples.
//!
//! They start before the worker opens its counters and stop before the probe pass, so neither
//! counts their work; the samples' rusage is the measured thread's own (RUSAGE_THREAD).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::model::Fact;
use crate::model::SetupError;
use crate::model::routine::{self, Routine, RoutineError};
use crate::platform::cpu;

/// Builds one copy's routine, in the thread that runs it.
pub type Build = Arc<dyn Fn() -> Result<Box<dyn Routine>, SetupError> + Send + Sync>;

/// Why a copy's thread did not start or did not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum CompanionError {
    /// Its pinning or its routine's setup failed.
    #[error(transparent)]
    Setup(SetupError),
    /// An operation of its routine failed.
    #[error(transparent)]
    Routine(#[from] RoutineError),
    #[error("a copy's thread panicked")]
    Panicked,
    #[error("a copy's thread ended in setup")]
    EndedInSetup,
}

/// What one companion did while it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ran {
    pub ops: u64,
    /// The time of its `run` calls alone (not `prepare`), nanoseconds.
    pub run_ns: f64,
    pub cpu: Option<usize>,
}

/// Running companion threads; [`Companions::stop`] ends them.
pub struct Companions {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<Ran, CompanionError>>>,
}

/// A companion's `run` calls last at least this long each, so checking the stop flag and
/// reading the clock cost nothing against them.
const CHUNK: Duration = Duration::from_millis(1);

impl Companions {
    /// Start one companion per CPU in `cpus` (`None`: unpinned) and return once every one has
    /// built its routine, or the first error. `fixed_ops`: the batch of a `Batch::Fixed`
    /// experiment (one whole pass per call), else each sizes its own.
    pub fn start(
        cpus: &[Option<usize>],
        fixed_ops: Option<u64>,
        build: &Build,
    ) -> Result<Companions, CompanionError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready) = mpsc::channel::<Result<(), SetupError>>();
        let mut threads = Vec::new();
        for &cpu in cpus {
            let (stop, build, ready_tx) = (stop.clone(), build.clone(), ready_tx.clone());
            threads.push(std::thread::spawn(move || {
                companion(cpu, fixed_ops, &build, &stop, &ready_tx)
            }));
        }
        drop(ready_tx);
        let mut companions = Companions { stop, threads };
        for _ in 0..cpus.len() {
            match ready.recv() {
                Ok(Ok(())) => {}
                Ok(Err(why)) => {
                    companions.stop_all();
                    return Err(CompanionError::Setup(why));
                }
                Err(_) => {
                    // A companion ended before saying: its join says why.
                    let why = companions.stop().err();
                    return Err(why.unwrap_or(CompanionError::EndedInSetup));
                }
            }
        }
        Ok(companions)
    }

    fn stop_all(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Stop every companion and say what each did, in order; the first error if one failed.
    pub fn stop(mut self) -> Result<Vec<Ran>, CompanionError> {
        self.stop.store(true, Ordering::Relaxed);
        let mut ran = Vec::new();
        for thread in self.threads.drain(..) {
            match thread.join() {
                Ok(Ok(r)) => ran.push(r),
                Ok(Err(why)) => return Err(why),
                Err(_) => return Err(CompanionError::Panicked),
            }
        }
        Ok(ran)
    }
}

impl Drop for Companions {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// One companion: pin, build, say ready, run until told to stop.
fn companion(
    cpu: Option<usize>,
    fixed_ops: Option<u64>,
    build: &Build,
    stop: &AtomicBool,
    ready: &mpsc::Sender<Result<(), SetupError>>,
) -> Result<Ran, CompanionError> {
    let built = cpu
        .map_or(Ok(()), |c| {
            cpu::pin(&[c]).map_err(|e| {
                SetupError::Failed(format!("cannot pin a copy's thread to CPU {c}: {e}"))
            })
        })
        .and_then(|()| build());
    let mut routine = match built {
        Ok(routine) => {
            let _ = ready.send(Ok(()));
            routine
        }
        Err(why) => {
            let _ = ready.send(Err(why.clone()));
            return Err(CompanionError::Setup(why));
        }
    };
    let mut ops = fixed_ops.unwrap_or(1).max(1);
    let mut ran = Ran {
        ops: 0,
        run_ns: 0.0,
        cpu,
    };
    while !stop.load(Ordering::Relaxed) {
        routine.prepare(ops)?;
        let t0 = Instant::now();
        routine.run(ops)?;
        let took = t0.elapsed();
        ran.ops += ops;
        ran.run_ns += took.as_secs_f64() * 1e9;
        if fixed_ops.is_none() && took < CHUNK && ops < u64::MAX / 2 {
            ops = routine::bounded(routine.as_ref(), ops * 2);
        }
    }
    Ok(ran)
}

/// The facts a worker stores of its companions: each copy's time per operation over its own
/// `run` calls. Copy 1 is the measured thread, so companions are copies 2 and up.
pub fn facts(ran: &[Ran], copies: usize) -> Vec<Fact> {
    ran.iter()
        .enumerate()
        .map(|(i, r)| Fact {
            name: copy_fact_name(i + 2),
            value: if r.ops > 0 {
                r.run_ns / r.ops as f64
            } else {
                f64::NAN
            },
            unit: "ns/op".into(),
            note: format!(
                "copy {} of {copies}, a thread{}: {} ops over {:.2} s of its own run calls, \
                 not sampled",
                i + 2,
                r.cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
                r.ops,
                r.run_ns / 1e9
            ),
        })
        .collect()
}

/// The fact naming copy `copy`'s time per operation (from 2: copy 1 is sampled).
pub fn copy_fact_name(copy: usize) -> String {
    format!("copy_{copy}_ns_per_op")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count;
    impl Routine for Count {
        fn run(&mut self, ops: u64) -> Result<(), routine::RoutineError> {
            for i in 0..ops {
                std::hint::black_box(i);
            }
            Ok(())
        }
    }

    #[test]
    fn companions_run_until_stopped_and_report() {
        let build: Build = Arc::new(|| Ok(Box::new(Count) as Box<dyn Routine>));
        let running = Companions::start(&[None, None], None, &build).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let ran = running.stop().unwrap();
        assert_eq!(ran.len(), 2);
        assert!(ran.iter().all(|r| r.ops > 0 && r.run_ns > 0.0));
        let facts = facts(&ran, 3);
        assert_eq!(facts[0].name, "copy_2_ns_per_op");
        assert_eq!(facts[1].name, "copy_3_ns_per_op");
        assert!(facts[1].note.contains("copy 3 of 3"));
    }

    #[test]
    fn a_failed_build_is_the_error() {
        let build: Build = Arc::new(|| Err(SetupError::Failed("no memory".into())));
        let Err(why) = Companions::start(&[None], Some(4), &build) else {
            panic!("started");
        };
        assert_eq!(why.to_string(), "no memory");
    }
}

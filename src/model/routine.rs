//! What the harness's sampler runs: the timed routine an experiment builds, and the other
//! task of a two-process experiment. It lives below both the experiments that implement it
//! and the sampler that drives it, so neither imports the other.

use super::Fact;

/// Why a routine's operation failed: the configuration fails with it. A system call refused
/// is [`RoutineError::Os`], with the call and the OS's error as its source; anything else the
/// routine checks (a short read, a counter out of step, a child's status) is a
/// [`RoutineError::Check`], made from its message (`"…".into()`, `format!(…).into()`).
#[derive(Debug, thiserror::Error)]
pub enum RoutineError {
    #[error("{call} failed: {source}")]
    Os {
        call: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Check(String),
}

impl RoutineError {
    /// `call` failed just now: the thread's `errno` (Windows: `GetLastError`).
    pub fn last_os(call: impl Into<String>) -> RoutineError {
        RoutineError::Os {
            call: call.into(),
            source: std::io::Error::last_os_error(),
        }
    }
}

impl From<String> for RoutineError {
    fn from(message: String) -> RoutineError {
        RoutineError::Check(message)
    }
}

impl From<&str> for RoutineError {
    fn from(message: &str) -> RoutineError {
        RoutineError::Check(message.to_string())
    }
}

/// A routine's helper that failed while the experiment was set up: the setup failed with it.
impl From<RoutineError> for crate::model::SetupError {
    fn from(e: RoutineError) -> crate::model::SetupError {
        crate::model::SetupError::Failed(e.to_string())
    }
}

/// A setup step a routine repeats while it runs (a new region for a larger batch) failed: the
/// operation fails with its reason.
impl From<crate::model::SetupError> for RoutineError {
    fn from(e: crate::model::SetupError) -> RoutineError {
        RoutineError::Check(e.to_string())
    }
}

/// The harness's layers above still carry a failure as its message.
impl From<RoutineError> for String {
    fn from(e: RoutineError) -> String {
        e.to_string()
    }
}

/// The timed routine of one experiment, built by the experiment's `setup` in the worker.
pub trait Routine {
    /// Perform `ops` operations back to back. Called with growing counts while the harness
    /// sizes the batch, then once per sample. Only this call is timed.
    fn run(&mut self, ops: u64) -> Result<(), RoutineError>;

    /// The other process of a two-process experiment, whose switches and faults the harness
    /// reads around every sample (`platform::rusage` of that task) (a partner thread needs no such help: the
    /// worker's own rusage covers the whole process).
    fn partner(&self) -> Option<Partner> {
        None
    }

    /// Perform `ops` operations of the experiment's own baseline: the work an operation does
    /// besides what is measured (lmbench's `lat_ctx -s` touches N KiB between hops and
    /// subtracts the cost of touching them without switching). The harness times it like the
    /// empty loop and subtracts its cost per operation. `None`: no baseline.
    fn run_baseline(&mut self, _ops: u64) -> Option<Result<(), RoutineError>> {
        None
    }

    /// Whether the baseline is a fixed cost of each `run` call whatever its `ops` (a program
    /// started once per batch, a fork per batch), not a cost per operation. The harness takes
    /// it off per operation of the sized batch it was timed at; a batch of k times as many
    /// operations (a timed pass) carries it once, so it takes off a k-th as much per operation.
    fn baseline_per_batch(&self) -> bool {
        false
    }

    /// Get ready for the next `run(ops)`, outside the timed region and the sample's rusage:
    /// create the files a deletion will remove, remove those a creation made. Called before
    /// every timed call of `run` (batch sizing, warm-up, samples, probe batches).
    fn prepare(&mut self, _ops: u64) -> Result<(), RoutineError> {
        Ok(())
    }

    /// Get ready for a timed pass of `seconds` (UnixBench's passes, `model::passes`), outside
    /// the pass's time and rusage: what the peer's program does each time it starts, before
    /// its timed loop (fstime creates its files, writes and reads them for 2 s each, and syncs
    /// and sleeps between). Called once before every pass; nothing by default.
    fn before_pass(&mut self, _seconds: f64) -> Result<(), RoutineError> {
        Ok(())
    }

    /// The most operations one `run` may hold: more would take the routine past what its
    /// `prepare` bounds and its preflight made room for (an append personality's file past
    /// its limit). The harness sizes no batch above it and a traced pass runs no more.
    /// `None`: no bound.
    fn max_batch(&self) -> Option<u64> {
        None
    }

    /// The fewest operations one sized batch may hold: a routine whose batch carries a fixed
    /// cost besides its operations (a fork, exit and wait per batch) needs enough operations
    /// that the fixed part, and the noise of the baseline that takes it off, stay a small
    /// share of every sample. The harness starts sizing there. `None`: one.
    fn min_batch(&self) -> Option<u64> {
        None
    }

    /// The operations after which the loop's calls repeat, where it makes a call once per
    /// so many operations (a pass over a file and its posix_fadvise, an fsync every N
    /// appends): any run of a whole number of periods makes that call its exact share of
    /// times, which counts over a few short batches would not (one fadvise in 3 reads is 1.33
    /// calls a read for 1.016). The probe counts run whole periods. `None`: no such call.
    fn period(&self) -> Option<u64> {
        None
    }

    /// Figures measured besides the timed operation, asked for once after sampling (the
    /// cost of munmap per page, the huge pages a region got, the blocks a prepare step
    /// wrote). Stored with the result; expectations may check them (`Metric::Fact`).
    fn facts(&mut self) -> Vec<Fact> {
        Vec::new()
    }
}

/// `ops`, or the routine's `max_batch` when that is smaller (never 0).
pub fn bounded(routine: &dyn Routine, ops: u64) -> u64 {
    routine.max_batch().map_or(ops, |most| ops.min(most)).max(1)
}

/// Where batch sizing starts: the routine's `min_batch` (within its `max_batch`), else 1.
pub fn smallest(routine: &dyn Routine) -> u64 {
    bounded(routine, routine.min_batch().unwrap_or(1))
}

/// A task the platform can read the usage of: process id and thread id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partner {
    pub pid: i32,
    pub tid: i32,
}

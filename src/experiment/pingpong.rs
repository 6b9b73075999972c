//! The partner machinery shared by the two-party experiments (`ctxswitch.*`, `ipc.*`): where
//! the two sides run (`placement`), a forked partner process that dies with the worker and is
//! always reaped, a pinned partner thread, pipes and socket pairs, a working set to touch
//! between hops, and futex wait/wake.
//!
//! A forked partner runs only async-signal-safe code between `fork` and `_exit` (the worker
//! may hold locks in other threads at the moment of the fork): read, write, futex, sched_yield,
//! prctl, close_range and plain loads and stores over memory mapped before the fork. It never
//! allocates and never returns into Rust code that could unwind.

use super::{ParamKind, ParamSpec};

// The machinery is POSIX's (fork, pipes, futex); its parameters and the channel are named on
// every system, where the experiments' declarations are built.
#[cfg(unix)]
mod futex;
#[cfg(unix)]
mod machinery;
#[cfg(unix)]
mod partner;
#[cfg(unix)]
pub use {futex::*, machinery::*, partner::*};

/// `placement=same|cross`: both sides pinned to one CPU, or to two different CPUs.
pub const PLACEMENT_PARAM: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["same", "cross"]),
    default: "same",
    help: "same: both sides pinned to the worker's CPU; cross: the partner pinned to another CPU \
           (the second --cpu, else the highest other allowed CPU; its idle state matters)",
};

/// `working_set_kb=N`: each side touches N KiB between hops.
pub const WORKING_SET_PARAM: ParamSpec = ParamSpec {
    name: "working_set_kb",
    kind: ParamKind::Int { min: 0, max: 16384 },
    default: "0",
    help: "KiB each side sums between hops (lmbench lat_ctx -s; try 64); the cost of summing \
           both sides' KiB without switching is measured and subtracted",
};

/// What carries the byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// Two pipes, one per direction.
    Pipes,
    /// One connected pair of Unix stream sockets.
    UnixSockets,
}

#[cfg(all(test, unix))]
mod tests;

//! unixbench.context1: UnixBench's "Pipe-based Context Switching" (`context1.c`): the worker
//! writes its 8-byte loop counter into one pipe, a forked child reads it, checks it against
//! its own count and writes its count back through a second pipe, which the worker reads and
//! checks in turn — one round trip, two context switches, per loop.
//!
//! Both processes are left to the scheduler, as UnixBench's are (`placement=free`, the
//! default); `same` pins both to the worker's CPU and `cross` to two CPUs (oslab's own
//! measurements, `ctxswitch.pipe`'s, whose one-byte ping-pong this is not).
//!
//! Unpinned, a timed pass starts with a pair forked for it, as each of UnixBench's passes
//! starts context1 anew: the scheduler keeps an unpinned pair where it put it (on one CPU, a
//! round trip costs a few microseconds; split across two, tens), so a pair that the sizing
//! batches left on one CPU would start the pass on one CPU, where UnixBench's freshly forked
//! child starts on the idle one.

use super::*;
use crate::experiment::pingpong::Channel;

crate::experiment::unix_setups!(routines => setup_context1);

/// `placement=free|same|cross`: UnixBench's unpinned pair, or `ctxswitch.pipe`'s pinnings.
const CONTEXT1_PLACEMENT: ParamSpec = ParamSpec {
    name: "placement",
    kind: ParamKind::Choice(&["free", "same", "cross"]),
    default: "free",
    help: concat!(
        placement_free!(),
        "; same: both pinned to the worker's CPU; cross: the partner pinned to another CPU"
    ),
};

fn context1_expectations(_: &Params) -> Vec<Expectation> {
    crate::experiment::ctxswitch::byte_round_trip_expectations(Channel::Pipes)
}

pub static CONTEXT1: ExperimentInfo = ExperimentInfo::new(
    "unixbench.context1",
    "UnixBench's Pipe-based Context Switching: a round trip of an 8-byte counter \
     through two pipes with a forked partner that checks it and echoes its own, per \
     loop",
    "loop",
    "libc write()/read() on two blocking pipes, partner forked (unpinned by default)",
    setup_context1,
)
.params(&[CONTEXT1_PLACEMENT])
.syscalls(|_| crate::experiment::each(&["write", "read"]))
.outside_default_suite()
.counters_between_samples()
.expectations(context1_expectations)
.cells(crate::experiment::unixbench::UNIXBENCH_FAMILY_CELLS);

/// The routine, POSIX's: the counter over two pipes to a forked partner.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::pingpong::{self, PartnerProcess};
    use crate::experiment::{Partner, RoutineError};
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};

    /// The worker's side: the counter it sends, the pipes, the child; whether each timed pass
    /// gets a pair of its own (`placement=free`).
    struct Context1 {
        pair: Pair,
        fresh_per_pass: bool,
    }

    /// One pair: the worker's counter, its ends of the pipes and the forked child.
    struct Pair {
        iter: u64,
        out: RawFd,
        inp: RawFd,
        // Declared before `child`, so they are closed first: the child then reads end of file
        // and exits by itself before `child` is dropped, which reaps (or kills and reaps) it.
        _fds: [OwnedFd; 2],
        child: PartnerProcess,
    }

    /// Read one u64 from `fd`: `Some` when all eight bytes came (a pipe delivers a write of
    /// eight bytes whole). Async-signal-safe.
    fn read_u64(fd: RawFd) -> Option<u64> {
        let mut word = 0u64;
        // SAFETY: eight writable bytes at `&mut word`.
        let n = unsafe { libc::read(fd, (&mut word as *mut u64).cast(), 8) };
        (n == 8).then_some(word)
    }

    /// Write one u64 to `fd`; whether all eight bytes went. Async-signal-safe.
    fn write_u64(fd: RawFd, word: u64) -> bool {
        // SAFETY: eight readable bytes at `&word`.
        let n = unsafe { libc::write(fd, (&word as *const u64).cast(), 8) };
        n == 8
    }

    /// The child's loop (context1.c's slave): read the counter, check it, answer with its own,
    /// until end of file. Exit code 0 at end of file, 2 on a counter out of step (context1.c's
    /// "sync error"). Async-signal-safe.
    fn child_loop(input: RawFd, output: RawFd) -> i32 {
        let mut iter = 0u64;
        loop {
            let Some(check) = read_u64(input) else {
                return 0;
            };
            if check != iter {
                return 2;
            }
            if !write_u64(output, iter) {
                return 0;
            }
            iter = iter.wrapping_add(1);
        }
    }

    impl Pair {
        fn start(partner_cpu: Option<usize>) -> Result<Pair, SetupError> {
            let (to_r, to_w) = pingpong::pipe(0)?;
            let (from_r, from_w) = pingpong::pipe(0)?;
            let (child_in, child_out) = (to_r.as_raw_fd(), from_w.as_raw_fd());
            let child = PartnerProcess::spawn(partner_cpu, &[child_in, child_out], || {
                child_loop(child_in, child_out)
            })?;
            // The child's ends are the child's now: closing ours lets it see end of file when
            // the worker closes (or loses) its own.
            drop((to_r, from_w));
            Ok(Pair {
                iter: 0,
                out: to_w.as_raw_fd(),
                inp: from_r.as_raw_fd(),
                _fds: [to_w, from_r],
                child,
            })
        }
    }

    impl Pair {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                if !write_u64(self.out, self.iter) {
                    return Err(RoutineError::last_os("write to the partner's pipe"));
                }
                let check = read_u64(self.inp).ok_or_else(|| {
                    pingpong::os_error("read from the partner's pipe (has the partner gone?)")
                })?;
                if check != self.iter {
                    return Err(RoutineError::Check(format!(
                        "the partner answered {check} to loop {}: the pipes are out of step",
                        self.iter
                    )));
                }
                self.iter = self.iter.wrapping_add(1);
            }
            Ok(())
        }
    }

    impl Routine for Context1 {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            self.pair.run(ops)
        }

        /// Unpinned: the old pair ends (its child, blocked in a read, is killed and reaped)
        /// and a new one is forked, after the pass's sync and sleep, as UnixBench starts
        /// context1. One round trip before the pass takes the copy-on-write faults the fork
        /// left on the worker's pages (its stack, the pair), which would otherwise fall in
        /// the pass and be charged to its loops.
        fn before_pass(&mut self, _seconds: f64) -> Result<(), RoutineError> {
            if self.fresh_per_pass {
                self.pair.child.stop(std::time::Duration::ZERO);
                self.pair = Pair::start(None).map_err(fork)?;
                self.pair.run(1)?;
            }
            Ok(())
        }

        fn partner(&self) -> Option<Partner> {
            Some(self.pair.child.partner())
        }

        fn min_batch(&self) -> Option<u64> {
            Some(pingpong::MIN_BATCH)
        }
    }

    pub(super) fn setup_context1(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let partner_cpu = if free(params) {
            unpin(ctx)?;
            None
        } else {
            Some(pingpong::place(params, ctx)?.partner)
        };
        Ok(Box::new(Context1 {
            pair: Pair::start(partner_cpu)?,
            fresh_per_pass: partner_cpu.is_none(),
        }))
    }

    /// A new pair that could not start: the pass cannot run.
    fn fork(e: SetupError) -> RoutineError {
        RoutineError::Check(format!("cannot start the pass's partner: {e}"))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_partner_checks_the_counter_and_answers_with_its_own() {
            let mut c = Pair::start(None).expect("start the partner");
            c.run(1000).expect("a thousand round trips");
            assert_eq!(c.iter, 1000);
            // Out of step: the partner expects 1000 and gets 5, and leaves with code 2.
            c.iter = 5;
            assert!(c.run(1).is_err(), "a counter out of step is an error");
        }

        #[test]
        fn an_unpinned_pass_starts_with_a_pair_of_its_own() {
            let mut c = Context1 {
                pair: Pair::start(None).expect("start the partner"),
                fresh_per_pass: true,
            };
            c.run(100).expect("round trips");
            let first = c.partner().expect("a partner").pid;
            c.before_pass(1.0).expect("a new pair");
            let second = c.partner().expect("a partner").pid;
            assert_ne!(first, second, "the pass has a child of its own");
            // SAFETY: kill with signal 0 only asks whether the process exists.
            let alive = unsafe { libc::kill(first, 0) } == 0;
            assert!(!alive, "the old child is gone (killed and reaped)");
            c.run(100).expect("the new pair answers from loop 0");
            // Pinned, the pair stays.
            let mut pinned = Context1 {
                pair: Pair::start(None).expect("start the partner"),
                fresh_per_pass: false,
            };
            let pid = pinned.partner().expect("a partner").pid;
            pinned.before_pass(1.0).expect("nothing to do");
            assert_eq!(pinned.partner().expect("a partner").pid, pid);
        }
    }
}

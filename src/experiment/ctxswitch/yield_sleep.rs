//! ctxswitch.yield and ctxswitch.nanosleep0: giving up the CPU without a partner to wake.

use super::*;
use crate::model::equivalence as eq;

crate::experiment::unix_setups!(routines => setup_yield, setup_nanosleep0);

// --- ctxswitch.yield ---

pub(super) const COMPETITOR_PARAM: ParamSpec = ParamSpec {
    name: "competitor",
    kind: ParamKind::Choice(&["none", "same_cpu"]),
    default: "none",
    help: "none: the worker yields alone (no switch can happen); same_cpu: a forked process \
           pinned to the worker's CPU yields in a loop too, so every call switches to it and back",
};

/// `ctxswitch.yield` checks what really proves a switch for `sched_yield`. Measured on Linux
/// 6.18 here: with a competitor yielding on the same CPU, getrusage shows 0 voluntary and
/// 1.000 involuntary switches per call on *each* side — a yield leaves the task runnable, so
/// its switch is counted as involuntary (`__schedule` counts a voluntary switch only when the
/// task leaves the run queue). Without a competitor: 0 and 0, and the call (~0.7 µs) is a
/// system call that runs the scheduler and picks the same task again. So the competitor case
/// expects two switches per call of both kinds on both sides, at least 0.9 involuntary on
/// the worker's side and no voluntary one; the lone case expects none of either kind.
pub(super) fn yield_expectations(params: &Params) -> Vec<Expectation> {
    let one_call = syscalls_near(1.0, 0.05, "one sched_yield per call");
    if crate::platform::rusage::YIELD_COUNTS_VOLUNTARY {
        return counted_yield_expectations(params, one_call);
    }
    if params.str("competitor") == "same_cpu" {
        vec![
            two_switches(
                "each call switches to the competitor and back: two switches per call, so one \
                 switch costs half the figure (a switch plus one sched_yield call)",
            ),
            Expectation::new(
                Metric::Rusage("nivcsw"),
                Bound::AtLeast(0.9),
                "a yield that switches leaves the task runnable, so the kernel counts the switch \
                 as involuntary",
            ),
            Expectation::new(
                Metric::Rusage("nvcsw"),
                Bound::Below(0.05),
                "sched_yield never blocks: a voluntary switch means the worker slept",
            ),
            one_call,
        ]
    } else {
        // No claim on nivcsw: a yield that switches here switched to another task that was
        // runnable on the CPU (another program's, 0.016-0.45 per call measured while other
        // builds ran), which is contamination, reported in the samples' involuntary switches,
        // not something the call does.
        vec![
            Expectation::new(
                Metric::Rusage("nvcsw"),
                Bound::Below(0.01),
                "sched_yield never blocks; with no other task runnable on this CPU it picks the \
                 caller again and returns: no switch took place, and the figure is the cost of \
                 the call, not of a switch (involuntary switches, if any, are other tasks' \
                 contamination and shown as such)",
            ),
            one_call,
        ]
    }
}

/// Where every yield counts as one voluntary switch, switched or not (FreeBSD:
/// `platform::rusage::YIELD_COUNTS_VOLUNTARY`), the counts cannot tell a lone yield from one
/// that ran the competitor: each call is exactly one voluntary switch either way, and no
/// involuntary one. With a competitor, both sides' sum still proves the two switches.
fn counted_yield_expectations(params: &Params, one_call: Expectation) -> Vec<Expectation> {
    let mut claims = vec![
        Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Near {
                value: 1.0,
                tolerance: 0.05,
            },
            "this kernel counts every sched_yield as one voluntary switch, whether or not \
             another thread ran (FreeBSD: sched_relinquish calls mi_switch(SW_VOL), which \
             counts before it chooses): one per call, never more",
        ),
        one_call,
    ];
    if params.str("competitor") == "same_cpu" {
        claims.insert(
            0,
            two_switches(
                "each call switches to the competitor and back: two switches per call, so one \
                 switch costs half the figure (a switch plus one sched_yield call)",
            ),
        );
    }
    claims
}

pub static YIELD: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.yield",
    "sched_yield() in a loop: alone it switches nowhere (the result says so); with a \
     competitor yielding on the same CPU each call is two switches",
    "call",
    "glibc sched_yield()",
    setup_yield,
)
.params(&[COMPETITOR_PARAM])
.syscalls(|_| crate::experiment::each(&["sched_yield"]))
.subtract_loop_overhead()
.counters_between_samples()
.expectations(yield_expectations)
.cells(crate::experiment::ctxswitch::YIELD_CELLS);

// --- ctxswitch.nanosleep0 ---

pub(super) const SLACK_PARAM: ParamSpec = ParamSpec {
    name: "timer_slack_ns",
    kind: ParamKind::Int {
        min: 1,
        max: 100_000_000,
    },
    default: "50000",
    help: "the worker thread's timer slack (prctl PR_SET_TIMERSLACK), set explicitly so the \
           figure does not depend on what oslab inherited; 50000 is Linux's default for normal \
           tasks",
};

/// From this slack up, a zero sleep surely blocks until the timer fires.
pub(super) const SURELY_SLEEPS_SLACK_NS: u64 = 20_000;

/// `nanosleep` of zero: the kernel arms a timer that expires "now" but may fire up to the
/// timer slack later, and the caller sleeps until it does. Measured on Linux 6.18 here: with
/// the default 50 µs slack, 1.000 voluntary switches per call and ~75 µs per call (the
/// slack plus waking an idle vCPU); with 20 µs, 1.0 and ~43 µs; with 5 µs or less, no switch
/// and ~15–20 µs (programming the timer costs more than the slack, so it has fired before the
/// caller would sleep). Even at 50 µs a host where arming the timer is slow sees it fire
/// before the caller sleeps: 0.694 switches per call measured on such a host. So from
/// [`SURELY_SLEEPS_SLACK_NS`] up the claim is "at most one" (two in a call would be a
/// preemption, which is contamination and reported as such); below it nothing is claimed.
pub(super) fn nanosleep0_expectations(params: &Params) -> Vec<Expectation> {
    let mut e = vec![
        syscalls_near(
            1.0,
            0.05,
            "one clock_nanosleep per call (glibc's nanosleep)",
        ),
        no_faults("a sleep touches no new memory"),
    ];
    if params.u64("timer_slack_ns") >= SURELY_SLEEPS_SLACK_NS {
        e.push(Expectation::new(
            Metric::Rusage("nvcsw"),
            Bound::Below(1.05),
            "a zero sleep arms a timer allowed to fire up to the slack late and blocks until it \
             fires, unless it fired while being armed: at most one voluntary switch per call \
             (1.000 here; 0.694 on a host where arming the timer was slow)",
        ));
    }
    e
}

pub static NANOSLEEP0: ExperimentInfo = ExperimentInfo::new(
    "ctxswitch.nanosleep0",
    "nanosleep() of zero: asking to sleep for nothing still sleeps up to the timer \
     slack (one voluntary switch per call at the default 50 µs)",
    "call",
    "glibc nanosleep() (clock_nanosleep system call)",
    setup_nanosleep0,
)
.params(&[SLACK_PARAM])
.syscalls(|_| crate::experiment::each(&["clock_nanosleep"]))
.subtract_loop_overhead()
.counters_between_samples()
.expectations(nanosleep0_expectations)
.cells(eq::Cells {
    linux: eq::runs("nanosleep with prctl timer slack"),
    freebsd: eq::Cell::No("not available: timer slack is a Linux prctl"),
    macos: eq::Cell::No("not available: timer slack is a Linux prctl"),
    windows: eq::Cell::No("not available: timer slack is a Linux prctl"),
});

/// The routines, POSIX's: sched_yield with an optional competitor, nanosleep.
#[cfg(unix)]
mod routines {
    use super::*;
    use crate::experiment::linux_only;
    use crate::experiment::pingpong::{self, PartnerProcess};
    use crate::experiment::{Context, Partner, Routine, RoutineError, SetupError};
    use std::time::Duration;

    /// `sched_yield()` in a loop, with an optional competitor process.
    pub(super) struct Yield {
        pub(super) competitor: Option<PartnerProcess>,
    }

    impl Routine for Yield {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for _ in 0..ops {
                // SAFETY: sched_yield has no preconditions.
                if unsafe { libc::sched_yield() } != 0 {
                    return Err(RoutineError::last_os("sched_yield"));
                }
            }
            Ok(())
        }

        fn partner(&self) -> Option<Partner> {
            self.competitor.as_ref().map(PartnerProcess::partner)
        }
    }

    impl Drop for Yield {
        fn drop(&mut self) {
            // The competitor never ends by itself: kill and reap it at once.
            if let Some(c) = &mut self.competitor {
                c.stop(Duration::ZERO);
            }
        }
    }

    pub(super) fn setup_yield(
        params: &Params,
        ctx: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        if params.str("competitor") != "same_cpu" {
            return Ok(Box::new(Yield { competitor: None }));
        }
        let cpu = ctx.cpu.ok_or_else(|| {
            SetupError::Unsupported(
                "competitor=same_cpu needs a pinned worker, and pinning is unavailable here".into(),
            )
        })?;
        pingpong::pin_worker(cpu)?;
        let competitor = PartnerProcess::spawn(Some(cpu), &[], || {
            loop {
                // SAFETY: sched_yield has no preconditions and is async-signal-safe. The competitor
                // never ends by itself: the worker's drop kills it (and PR_SET_PDEATHSIG).
                unsafe { libc::sched_yield() };
            }
        })?;
        Ok(Box::new(Yield {
            competitor: Some(competitor),
        }))
    }

    pub(super) struct NanoSleep0 {
        /// The slack the thread had before, restored on drop.
        pub(super) old_slack: libc::c_int,
    }

    impl Routine for NanoSleep0 {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            for _ in 0..ops {
                // SAFETY: `zero` is a valid timespec; no remaining time is asked for.
                if unsafe { libc::nanosleep(&zero, std::ptr::null_mut()) } != 0 {
                    return Err(RoutineError::last_os("nanosleep"));
                }
            }
            Ok(())
        }
    }

    impl Drop for NanoSleep0 {
        fn drop(&mut self) {
            if self.old_slack > 0 {
                crate::experiment::linux_only::prctl(
                    crate::experiment::linux_only::PR_SET_TIMERSLACK,
                    self.old_slack as libc::c_ulong,
                    0,
                );
            }
        }
    }

    pub(super) fn setup_nanosleep0(
        params: &Params,
        _: &Context,
    ) -> Result<Box<dyn Routine>, SetupError> {
        let slack = params.u64("timer_slack_ns");
        let old_slack = linux_only::prctl(linux_only::PR_GET_TIMERSLACK, 0, 0);
        if linux_only::prctl(linux_only::PR_SET_TIMERSLACK, slack as libc::c_ulong, 0) != 0 {
            return Err(SetupError::Failed(pingpong::os_error(&format!(
                "prctl(PR_SET_TIMERSLACK, {slack})"
            ))));
        }
        Ok(Box::new(NanoSleep0 { old_slack }))
    }
}

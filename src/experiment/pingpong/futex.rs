//! Futex wait and wake on words in shared memory, and the turns two sides take on them.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::experiment::mapping::Anon;
use crate::experiment::{RoutineError, SetupError};
use crate::platform::futex::{futex_wait, futex_wake};

// --- futex wait/wake on a word in shared memory ---

/// Two futex words in a `MAP_SHARED | MAP_ANONYMOUS` page, so a forked child shares them
/// (a private mapping would be copied on write by the fork).
pub struct SharedWords {
    pub(super) map: Anon,
}

// SAFETY: the mapping is only accessed through atomics, from any thread.
unsafe impl Send for SharedWords {}
// SAFETY: as above.
unsafe impl Sync for SharedWords {}

pub(super) const SHARED_LEN: usize = 4096;

impl SharedWords {
    pub fn new() -> Result<SharedWords, SetupError> {
        Ok(SharedWords {
            map: Anon::shared(SHARED_LEN)?,
        })
    }

    /// Word `i` (0 or 1).
    pub fn word(&self, i: usize) -> &AtomicU32 {
        assert!(i < 2);
        // SAFETY: the page is mapped for the lifetime of `self`, zero-initialised (a valid
        // AtomicU32) and aligned; `i` is within it.
        unsafe { &*self.map.ptr().cast::<AtomicU32>().add(i) }
    }
}

/// The turn-taking protocol of the futex ping-pong, on two words: `seq` counts hops (odd: the
/// partner's turn, even: the worker's), `stop` asks the partner to leave. Each side waits
/// only while `seq` still holds the value it saw, so a wake-up that comes before the wait is
/// never lost (FUTEX_WAIT compares and sleeps atomically).
pub struct Turns<'a> {
    pub seq: &'a AtomicU32,
    pub stop: &'a AtomicU32,
    pub private: bool,
}

impl Turns<'_> {
    /// One round trip from the worker's side; `next` is the worker's even value.
    #[inline]
    pub fn worker_round_trip(&self, next: &mut u32) -> Result<(), RoutineError> {
        let ask = next.wrapping_add(1);
        let want = next.wrapping_add(2);
        self.seq.store(ask, Ordering::Release);
        let rc = futex_wake(self.seq, 1, self.private);
        if rc < 0 {
            return Err(futex_failed("futex wake", rc));
        }
        loop {
            let v = self.seq.load(Ordering::Acquire);
            if v == want {
                break;
            }
            if v != ask {
                return Err(RoutineError::Check(format!(
                    "futex protocol broken: expected {ask} or {want}, found {v}"
                )));
            }
            let rc = futex_wait(self.seq, ask, self.private);
            if rc < 0 && rc != -(libc::EAGAIN as i64) && rc != -(libc::EINTR as i64) {
                return Err(futex_failed("futex wait", rc));
            }
        }
        *next = want;
        Ok(())
    }

    /// The partner's loop: answer each odd value with the next even one, until `stop`.
    /// Async-signal-safe (atomics and futex calls only). Returns the exit code.
    pub fn partner_loop(&self) -> i32 {
        let mut expect: u32 = 1;
        loop {
            if self.stop.load(Ordering::Acquire) != 0 {
                return 0;
            }
            let v = self.seq.load(Ordering::Acquire);
            if v == expect {
                self.seq.store(v.wrapping_add(1), Ordering::Release);
                futex_wake(self.seq, 1, self.private);
                expect = expect.wrapping_add(2);
                continue;
            }
            // EAGAIN (changed meanwhile) and EINTR just loop; the stop flag is checked first.
            futex_wait(self.seq, v, self.private);
        }
    }

    /// Ask the partner to leave: set `stop`, change `seq` so a wait about to start returns at
    /// once, and wake every waiter.
    pub fn stop_partner(&self) {
        self.stop.store(1, Ordering::Release);
        self.seq.fetch_add(2, Ordering::AcqRel);
        futex_wake(self.seq, i32::MAX, self.private);
    }
}

/// A futex call that returned `-errno`.
fn futex_failed(call: &str, rc: i64) -> RoutineError {
    RoutineError::Os {
        call: call.to_string(),
        source: std::io::Error::from_raw_os_error(-rc as i32),
    }
}

//! Where a worker stands among its configuration's copies (`--copies`, `harness::copies`):
//! its [`Role`], and the [`Gate`] at which copies in processes meet twice — every copy set up
//! before any samples, every copy done before the holding copies stop.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// How one worker takes part in its configuration's copies.
#[derive(Default)]
pub struct Role<'a> {
    /// The meetings of copies in processes.
    pub gate: Option<&'a Gate>,
    /// Copies in threads: every copy's CPU, the measured thread's first.
    pub copy_cpus: Vec<Option<usize>>,
    /// A directory all the copies share (`Context::shared_dir`).
    pub shared_dir: Option<PathBuf>,
}

/// Which meeting of the copies.
#[derive(Debug, Clone, Copy)]
pub enum Meeting {
    /// Every copy set up: sampling starts.
    SetUp = 0,
    /// Every copy done: the holding copies stop.
    Done = 1,
}

/// The copies' two meetings: a count of arrivals each, and a wait for all.
pub struct Gate {
    copies: usize,
    /// Shared with the interruption's waker, which may outlive a borrow of the gate.
    state: Arc<State>,
}

struct State {
    arrived: Mutex<[usize; 2]>,
    changed: Condvar,
}

impl State {
    fn lock(&self) -> std::sync::MutexGuard<'_, [usize; 2]> {
        self.arrived.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Gate {
    pub fn new(copies: usize) -> Gate {
        Gate {
            copies,
            state: Arc::new(State {
                arrived: Mutex::new([0; 2]),
                changed: Condvar::new(),
            }),
        }
    }

    /// One copy's place at the meetings.
    pub fn place(&self) -> Place<'_> {
        Place {
            gate: self,
            arrived: [false; 2],
        }
    }
}

/// One copy's place: it arrives at each meeting once, and at every meeting it has not reached
/// when it is dropped (a copy that failed must not hold the others).
pub struct Place<'a> {
    gate: &'a Gate,
    arrived: [bool; 2],
}

impl Place<'_> {
    /// Arrive at `meeting` and wait for every copy until `until`, an interruption (Ctrl-C) or
    /// the copies' arrival, whichever comes first; `true` when they all came. Asleep while it
    /// waits: the copies that have not arrived may be measuring, and a harness that woke to
    /// look for Ctrl-C would be a task beside them (`platform::interrupt::on_request`).
    pub fn meet(&mut self, meeting: Meeting, until: Instant) -> bool {
        self.arrive(meeting as usize);
        let state = Arc::clone(&self.gate.state);
        // The waker takes the lock before it notifies: a waiter that has looked at the flag
        // holds the lock until it sleeps, so the wake-up cannot fall between the two.
        let _woken = crate::platform::interrupt::on_request(move || {
            let _arrived = state.lock();
            state.changed.notify_all();
        });
        let state = &self.gate.state;
        let mut arrived = state.lock();
        while arrived[meeting as usize] < self.gate.copies {
            let now = Instant::now();
            if now >= until || crate::platform::interrupt::requested().is_some() {
                return false;
            }
            arrived = match state.changed.wait_timeout(arrived, until - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
        true
    }

    fn arrive(&mut self, meeting: usize) {
        if std::mem::replace(&mut self.arrived[meeting], true) {
            return;
        }
        let mut arrived = self.gate.state.lock();
        arrived[meeting] += 1;
        self.gate.state.changed.notify_all();
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.arrive(0);
        self.arrive(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn copies_meet_and_a_dropped_place_releases_the_others() {
        let gate = Gate::new(3);
        let until = Instant::now() + Duration::from_secs(20);
        std::thread::scope(|s| {
            let a = s.spawn(|| gate.place().meet(Meeting::SetUp, until));
            let b = s.spawn(|| {
                let mut place = gate.place();
                place.meet(Meeting::SetUp, until) && place.meet(Meeting::Done, until)
            });
            // The third copy fails before either meeting: its place is dropped.
            drop(gate.place());
            assert!(a.join().unwrap());
            assert!(b.join().unwrap());
        });
        let late = Gate::new(2);
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(!late.place().meet(Meeting::SetUp, soon), "nobody came");
    }
}

//! Who to wake when oslab is asked to stop (Ctrl-C, SIGTERM, closing the console): a caller
//! that waits on something else — the harness on its worker's messages — subscribes a waker
//! for as long as it waits, and sleeps until the worker speaks or the user interrupts, instead
//! of waking every few milliseconds to look at the flag. A harness that wakes ten times a
//! second is a third task beside the processes it measures, and moves where the scheduler puts
//! an unpinned pair (measured on unixbench.context1 with one copy). Each backend's interrupt
//! module calls [`wake`] outside its signal handler: the Unix handler writes a byte to a pipe
//! that a thread reads, Windows runs its console handler on a thread of its own.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

type Waker = Box<dyn Fn() + Send>;

static WAKERS: Mutex<Vec<(u64, Waker)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A waker's registration; dropping it unsubscribes.
#[must_use = "the waker is unsubscribed when this is dropped"]
pub struct Subscription(u64);

/// Call `waker` (from another thread) each time oslab is asked to stop, until the returned
/// subscription is dropped. A request made before subscribing is not replayed: check
/// `interrupt::requested()` after subscribing and before waiting.
pub fn on_request(waker: impl Fn() + Send + 'static) -> Subscription {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    lock().push((id, Box::new(waker)));
    Subscription(id)
}

impl Drop for Subscription {
    fn drop(&mut self) {
        lock().retain(|(id, _)| *id != self.0);
    }
}

/// Wake every subscriber. Not async-signal-safe: never from a signal handler.
pub(in crate::platform) fn wake() {
    for (_, waker) in lock().iter() {
        waker();
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(u64, Waker)>> {
    WAKERS.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn subscribers_are_woken_until_they_unsubscribe() {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&calls);
        let subscription = on_request(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        wake();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        drop(subscription);
        wake();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "no call after unsubscribing"
        );
    }
}

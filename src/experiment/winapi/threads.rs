//! The routines of `winapi.rs` that are about threads: the sleeps and yields with their
//! competitor thread, the event hand-over between two threads, and thread creation.

use crate::experiment::RoutineError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Threading::{
    CreateEventW, CreateThread, INFINITE, SetEvent, Sleep, SwitchToThread, WaitForSingleObject,
};

use crate::experiment::{Context, Params, Routine, SetupError};
use crate::platform::cpu;

/// A thread of the worker pinned to `cpu` that runs `body` once pinned; returns when the pin
/// took (the thread is then running) or failed (the thread has ended).
fn spawn_pinned(
    cpu: usize,
    what: &str,
    body: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, SetupError> {
    let (ready, started) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let pinned = cpu::pin(&[cpu]);
        let ok = pinned.is_ok();
        let _ = ready.send(pinned);
        if ok {
            body();
        }
    });
    started
        .recv()
        .map_err(|_| SetupError::Failed(format!("the {what} thread died at start")))?
        .map_err(|e| SetupError::Failed(format!("cannot pin the {what} thread: {e}")))?;
    Ok(thread)
}

/// A thread of the worker pinned to one CPU, running `work` until dropped.
struct Competitor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Competitor {
    fn start(cpu: usize, work: fn()) -> Result<Competitor, SetupError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = spawn_pinned(cpu, "competitor", move || {
            while !flag.load(Ordering::Relaxed) {
                work();
            }
        })?;
        Ok(Competitor {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Competitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Pin the worker's thread to the CPU the harness chose; the competitor goes there too.
fn pinned_cpu(ctx: &Context, what: &str) -> Result<usize, SetupError> {
    let cpu = ctx.cpu.ok_or_else(|| {
        SetupError::Unsupported(format!("{what} needs a pinned worker, and none is pinned"))
    })?;
    cpu::pin(&[cpu]).map_err(|e| SetupError::Failed(format!("cannot pin the worker: {e}")))?;
    Ok(cpu)
}

/// A yield in a loop, with its competitor (kept until the routine is dropped).
struct Yield {
    call: fn(),
    _competitor: Option<Competitor>,
}

impl Routine for Yield {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            (self.call)();
        }
        Ok(())
    }
}

fn sleep0() {
    // SAFETY: no preconditions.
    unsafe { Sleep(0) };
}

fn sleep1() {
    // SAFETY: no preconditions.
    unsafe { Sleep(1) };
}

fn switch_to_thread() {
    // SAFETY: no preconditions; the result (whether it switched) is not needed.
    unsafe { SwitchToThread() };
}

fn setup_yield(call: fn(), params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let competitor = if params.str("competitor") == "same_cpu" {
        Some(Competitor::start(
            pinned_cpu(ctx, "competitor=same_cpu")?,
            call,
        )?)
    } else {
        None
    };
    Ok(Box::new(Yield {
        call,
        _competitor: competitor,
    }))
}

/// `ctxswitch.sleep`: Sleep(ms), the competitor making the same call.
pub fn setup_sleep(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let call = if params.str("ms") == "1" {
        sleep1
    } else {
        sleep0
    };
    setup_yield(call, params, ctx)
}

/// Windows' `ctxswitch.yield`.
pub fn setup_switch_to_thread(
    params: &Params,
    ctx: &Context,
) -> Result<Box<dyn Routine>, SetupError> {
    setup_yield(switch_to_thread, params, ctx)
}

unsafe extern "system" fn empty_thread(_: *mut std::ffi::c_void) -> u32 {
    0
}

/// Windows' `process.thread`: CreateThread with the default stack, an empty body, then a wait
/// for its end and CloseHandle (without Rust's `std::thread` bookkeeping).
struct Thread;

impl Routine for Thread {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            // SAFETY: default security and stack size, a valid thread function that touches
            // nothing, no argument; the handle is waited on and closed below.
            let thread = unsafe {
                CreateThread(
                    std::ptr::null(),
                    0,
                    Some(empty_thread),
                    std::ptr::null(),
                    0,
                    std::ptr::null_mut(),
                )
            };
            if thread.is_null() {
                return Err(RoutineError::last_os("CreateThread"));
            }
            // Closed at the end of the statement, waited for or not.
            Waitable(thread).wait()?;
        }
        Ok(())
    }
}

pub fn setup_thread(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Ok(Box::new(Thread))
}

/// A kernel object to wait on (an auto-reset event, or a thread), its handle closed when
/// dropped.
struct Waitable(HANDLE);

// SAFETY: an event or thread handle may be signalled, waited on and closed from any thread.
unsafe impl Send for Waitable {}
// SAFETY: as above.
unsafe impl Sync for Waitable {}

impl Waitable {
    /// A new auto-reset event.
    fn event() -> Result<Waitable, SetupError> {
        // SAFETY: an unnamed auto-reset event, initially not signalled.
        let handle = unsafe { CreateEventW(std::ptr::null(), 0, 0, std::ptr::null()) };
        if handle.is_null() {
            return Err(SetupError::Failed(format!(
                "CreateEventW failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Waitable(handle))
    }

    fn set(&self) -> Result<(), RoutineError> {
        // SAFETY: our open event.
        if unsafe { SetEvent(self.0) } == 0 {
            return Err(RoutineError::last_os("SetEvent"));
        }
        Ok(())
    }

    fn wait(&self) -> Result<(), RoutineError> {
        // SAFETY: our open event.
        if unsafe { WaitForSingleObject(self.0, INFINITE) } != WAIT_OBJECT_0 {
            return Err(RoutineError::last_os("WaitForSingleObject"));
        }
        Ok(())
    }
}

impl Drop for Waitable {
    fn drop(&mut self) {
        // SAFETY: closing our own handle, after both threads are done with it.
        unsafe { CloseHandle(self.0) };
    }
}

/// The worker's side of the hand-over; the partner thread answers every turn.
struct HandOver {
    ping: Arc<Waitable>,
    pong: Arc<Waitable>,
    stop: Arc<AtomicBool>,
    partner: Option<JoinHandle<()>>,
}

impl Routine for HandOver {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            self.ping.set()?;
            self.pong.wait()?;
        }
        Ok(())
    }
}

impl Drop for HandOver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.ping.set();
        if let Some(partner) = self.partner.take() {
            let _ = partner.join();
        }
    }
}

pub fn setup_event(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let cpu = pinned_cpu(ctx, "ctxswitch.event")?;
    let partner_cpu = if params.str("placement") == "cross" {
        ctx.other_cpu.ok_or_else(|| {
            SetupError::Unsupported("placement=cross needs a second CPU to use".into())
        })?
    } else {
        cpu
    };
    let (ping, pong) = (Arc::new(Waitable::event()?), Arc::new(Waitable::event()?));
    let stop = Arc::new(AtomicBool::new(false));
    let partner = {
        let (ping, pong, stop) = (Arc::clone(&ping), Arc::clone(&pong), Arc::clone(&stop));
        spawn_pinned(partner_cpu, "partner", move || {
            while ping.wait().is_ok() && !stop.load(Ordering::SeqCst) {
                if pong.set().is_err() {
                    break;
                }
            }
        })?
    };
    Ok(Box::new(HandOver {
        ping,
        pong,
        stop,
        partner: Some(partner),
    }))
}

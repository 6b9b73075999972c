use super::*;
use crate::experiment::{Context, Params, SetupError};
use crate::platform::cpu;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

fn ctx(cpu: Option<usize>, other: Option<usize>) -> Context {
    Context {
        cpu,
        other_cpu: other,
        ..Context::default()
    }
}

#[test]
fn placement_chooses_cpus_or_says_why_not() {
    assert_eq!(
        choose_cpus(Placement::Same, &ctx(Some(1), Some(0))),
        Ok(Cpus {
            worker: 1,
            partner: 1
        })
    );
    assert_eq!(
        choose_cpus(Placement::Cross, &ctx(Some(1), Some(0))),
        Ok(Cpus {
            worker: 1,
            partner: 0
        })
    );
    for c in [ctx(Some(0), None), ctx(Some(0), Some(0))] {
        match choose_cpus(Placement::Cross, &c) {
            Err(SetupError::Unsupported(reason)) => {
                assert!(reason.contains("second CPU"), "{reason}");
                assert!(reason.contains("CPU 0"), "{reason}");
            }
            other => panic!("cross on one CPU: {other:?}"),
        }
    }
    assert!(matches!(
        choose_cpus(Placement::Same, &ctx(None, Some(1))),
        Err(SetupError::Unsupported(_))
    ));
}

#[test]
fn placement_param() {
    let mut map = std::collections::BTreeMap::new();
    assert_eq!(
        Placement::of(&Params::from_map(map.clone())),
        Placement::Same
    );
    map.insert("placement".to_string(), "cross".to_string());
    assert_eq!(Placement::of(&Params::from_map(map)), Placement::Cross);
    assert!(PLACEMENT_PARAM.kind.check("same").is_ok());
    assert!(PLACEMENT_PARAM.kind.check("both").is_err());
}

#[test]
fn working_set_sums_every_word() {
    let ws = WorkingSet::new(4096).unwrap();
    // Words hold i|1 for i in 0..512.
    let expected: u64 = (0..512u64).map(|i| i | 1).sum();
    assert_eq!(ws.touch(), expected);
}

#[test]
fn forked_echo_partner_answers_and_is_reaped() {
    let (to_r, to_w) = pipe(0).unwrap();
    let (from_r, from_w) = pipe(0).unwrap();
    let cpu = *cpu::allowed().last().unwrap();
    let (input, output) = (to_r.as_raw_fd(), from_w.as_raw_fd());
    let mut child = PartnerProcess::spawn(Some(cpu), &[input, output], || {
        echo_loop(input, output, None)
    })
    .unwrap();
    drop((to_r, from_w));
    for i in 0..100u8 {
        write_byte(to_w.as_raw_fd(), i, "partner").unwrap();
        assert_eq!(read_byte(from_r.as_raw_fd(), "partner").unwrap(), i);
    }
    let pid = child.partner().pid;
    drop(to_w);
    child.stop(Duration::from_secs(5));
    // Reaped: the pid is no longer our child.
    // SAFETY: waitpid on a pid that is no longer ours fails with ECHILD; no side effect.
    let rc = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
    assert_eq!(rc, -1);
    let eof = read_byte(from_r.as_raw_fd(), "partner")
        .unwrap_err()
        .to_string();
    assert!(eof.contains("end of file"), "{eof}");
}

#[test]
fn a_partner_that_does_not_exit_is_killed_and_reaped() {
    let cpu = *cpu::allowed().last().unwrap();
    let mut child = PartnerProcess::spawn(Some(cpu), &[], || {
        loop {
            // SAFETY: pause(2) is async-signal-safe; SIGKILL ends it.
            unsafe { libc::pause() };
        }
    })
    .unwrap();
    let pid = child.partner().pid;
    child.stop(Duration::from_millis(10));
    // SAFETY: as above.
    let rc = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
    assert_eq!(rc, -1, "reaped");
}

#[test]
fn a_partner_dies_with_its_worker() {
    // An intermediate process plays the worker: it starts a partner that would never end
    // by itself, reports the partner's pid, and is killed with SIGKILL (no Drop runs).
    let (r, w) = pipe(0).unwrap();
    let cpu = *cpu::allowed().last().unwrap();
    let (r_fd, w_fd) = (r.as_raw_fd(), w.as_raw_fd());
    // SAFETY: the child makes only async-signal-safe calls (PartnerProcess::spawn's success
    // path, write, pause) and leaves with _exit or by being killed.
    let worker = unsafe { libc::fork() };
    assert!(worker >= 0);
    if worker == 0 {
        let partner = PartnerProcess::spawn(Some(cpu), &[], || {
            loop {
                // SAFETY: pause(2) is async-signal-safe; SIGKILL ends it.
                unsafe { libc::pause() };
            }
        });
        let pid: libc::pid_t = partner.as_ref().map_or(-1, |p| p.partner().pid);
        std::mem::forget(partner);
        // SAFETY: writing 4 bytes from a local, then waiting to be killed.
        unsafe {
            libc::write(w_fd, (&pid as *const libc::pid_t).cast(), 4);
            loop {
                libc::pause();
            }
        }
    }
    drop(w);
    let mut pid: libc::pid_t = 0;
    // SAFETY: reading 4 bytes into a local.
    let n = unsafe { libc::read(r_fd, (&mut pid as *mut libc::pid_t).cast(), 4) };
    assert_eq!(n, 4);
    assert!(pid > 0, "the intermediate started a partner");
    assert!(
        !crate::platform::process::has_ended(pid),
        "the partner runs"
    );
    // SAFETY: killing and reaping our own child.
    unsafe {
        libc::kill(worker, libc::SIGKILL);
        libc::waitpid(worker, std::ptr::null_mut(), 0);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !crate::platform::process::has_ended(pid) {
        assert!(
            Instant::now() < deadline,
            "partner {pid} outlived its worker"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn futex_turns_between_threads() {
    let words = SharedWords::new().unwrap();
    let turns = Turns {
        seq: words.word(0),
        stop: words.word(1),
        private: true,
    };
    std::thread::scope(|s| {
        let partner = s.spawn(|| turns.partner_loop());
        let mut next = 0;
        for _ in 0..1000 {
            turns.worker_round_trip(&mut next).unwrap();
        }
        assert_eq!(next, 2000);
        turns.stop_partner();
        assert_eq!(partner.join().unwrap(), 0);
    });
}

use super::*;

const MARK: i64 = 0x6f73_6c62;
const GETPPID: i64 = 110;
const READ: i64 = 0;
const WRITE: i64 = 1;
const MMAP: i64 = 9;

fn name(nr: i64) -> String {
    match nr {
        110 => "getppid".into(),
        0 => "read".into(),
        1 => "write".into(),
        9 => "mmap".into(),
        _ => format!("nr{nr}"),
    }
}

fn enter(pid: u32, tid: u32, time: u64, nr: i64) -> SysEvent {
    SysEvent::Enter {
        pid,
        tid,
        time,
        nr,
        ip: 0,
    }
}

fn exit(pid: u32, tid: u32, time: u64, nr: i64) -> SysEvent {
    SysEvent::Exit {
        pid,
        tid,
        time,
        nr,
        ret: 0,
    }
}

/// A worker (pid 10) that makes `before` calls, marks, makes `ops` getppids (each entered
/// and left), marks and makes `after` calls; `extra` events are merged in by time.
fn pass(ops: u64, extra: Vec<SysEvent>) -> Traced {
    let mut events = vec![
        enter(10, 10, 1, MMAP),
        exit(10, 10, 2, MMAP),
        enter(10, 10, 3, MARK),
        exit(10, 10, 4, MARK),
    ];
    let mut t = 100;
    for _ in 0..ops {
        events.push(enter(10, 10, t, GETPPID));
        events.push(exit(10, 10, t + 1, GETPPID));
        t += 10;
    }
    events.push(enter(10, 10, 1_000_000, MARK));
    events.push(exit(10, 10, 1_000_001, MARK));
    events.push(enter(10, 10, 1_000_002, WRITE));
    events.extend(extra);
    events.sort_by_key(SysEvent::time);
    Traced {
        pid: 10,
        events,
        ..Traced::default()
    }
}

fn claims(syscalls: &[&'static str], total: Option<f64>) -> Claims<'static> {
    Claims {
        syscalls: Box::leak(each(syscalls).into_boxed_slice()),
        total: total.map(|value| Bound::Near {
            value,
            tolerance: 0.05,
        }),
    }
}

#[test]
fn the_window_runs_from_the_first_markers_exit_to_the_seconds_entry() {
    let traced = pass(3, Vec::new());
    let w = window(&traced.events, MARK).unwrap();
    assert_eq!((w.start, w.end, w.pid, w.tid), (4, 1_000_000, 10, 10));
    let c = check(&traced, MARK, 3, &name, &claims(&["getppid"], Some(1.0))).unwrap();
    assert_eq!(
        c.rates.len(),
        1,
        "no mmap before, no write after: {:?}",
        c.rates
    );
    assert_eq!(
        (c.rates[0].syscall.as_str(), c.rates[0].calls),
        ("getppid", 3)
    );
    assert_eq!(c.window_ns, 1_000_000 - 4);

    let no_end: Vec<SysEvent> = traced.events[..6].to_vec();
    assert_eq!(window(&no_end, MARK), Err(MarkerError::NoSecondMarker));
    assert!(
        window(&no_end, MARK)
            .unwrap_err()
            .to_string()
            .contains("second marker")
    );
    assert_eq!(
        window(&traced.events[..2], MARK),
        Err(MarkerError::NoMarker)
    );
}

#[test]
fn a_pass_that_makes_what_it_claims_matches() {
    let traced = pass(200, Vec::new());
    let c = check(&traced, MARK, 200, &name, &claims(&["getppid"], Some(1.0))).unwrap();
    assert_eq!(c.rates[0].per_op, 1.0);
    assert!(c.rates[0].claimed);
    assert_eq!(c.rates[0].side, Side::Worker);
    assert_eq!(c.worker_per_op, 1.0);
    assert!(c.matches(), "{:?}", c.differences);
    assert_eq!(c.processes, 1);
}

#[test]
fn partners_and_threads_are_their_own_sides_and_rare_calls_are_no_finding() {
    let mut extra = Vec::new();
    for k in 0..200 {
        extra.push(enter(11, 11, 105 + k * 10, READ)); // a partner process
    }
    extra.push(enter(10, 12, 500, WRITE)); // a thread of the worker, once in 200 ops
    let traced = pass(200, extra);
    let c = check(
        &traced,
        MARK,
        200,
        &name,
        &claims(&["getppid", "read"], Some(1.0)),
    )
    .unwrap();
    let sides: Vec<(Side, &str, u64)> = c
        .rates
        .iter()
        .map(|r| (r.side, r.syscall.as_str(), r.calls))
        .collect();
    assert_eq!(
        sides,
        [
            (Side::Worker, "getppid", 200),
            (Side::WorkerThread, "write", 1),
            (Side::Partner, "read", 200)
        ]
    );
    assert_eq!(
        c.worker_per_op, 1.0,
        "the partner's calls are not the worker's"
    );
    assert!(
        c.matches(),
        "0.005 write per op is below 0.01: {:?}",
        c.differences
    );
    assert_eq!(c.processes, 2);
}

#[test]
fn missing_unclaimed_and_total_differences_are_each_named() {
    let mut extra = Vec::new();
    for k in 0..100 {
        extra.push(enter(10, 10, 102 + k * 10, MMAP));
        extra.push(enter(11, 11, 103 + k * 10, MMAP));
    }
    let traced = pass(100, extra);
    let c = check(
        &traced,
        MARK,
        100,
        &name,
        &claims(&["getppid", "read"], Some(1.0)),
    )
    .unwrap();
    assert!(!c.matches());
    assert_eq!(
        c.differences,
        [
            Difference::Missing {
                syscall: "read".into(),
                per_op: 0.0,
                claimed: 1.0,
            },
            Difference::Unclaimed {
                syscall: "mmap".into(),
                per_op: 2.0,
                sides: vec![Side::Worker, Side::Partner]
            },
            Difference::Total {
                per_op: 2.0,
                bound: Bound::Near {
                    value: 1.0,
                    tolerance: 0.05
                }
            },
        ]
    );
    let text: Vec<String> = c.differences.iter().map(|d| d.to_string()).collect();
    assert!(
        text[0].contains("read is claimed but made 0.000 times per op"),
        "{text:?}"
    );
    assert!(
        text[1].contains("by the worker and the partner"),
        "{text:?}"
    );
    assert!(text[2].contains("1 ± 0.05"), "{text:?}");
}

#[test]
fn lost_records_forbid_a_match_and_no_expectation_checks_no_total() {
    let mut traced = pass(100, Vec::new());
    traced.lost = 3;
    let c = check(&traced, MARK, 100, &name, &claims(&["getppid"], None)).unwrap();
    assert_eq!(c.differences, [Difference::Lost(3)]);
    assert!(c.differences[0].to_string().contains("fewer --ops"));
    let near = Bound::Near {
        value: 1.0,
        tolerance: 0.05,
    };
    let expectations = [
        Expectation::new(Metric::Faults, Bound::Below(0.01), "no faults"),
        Expectation::new(Metric::Counter("syscalls"), near, "one call"),
    ];
    assert_eq!(syscalls_bound(&expectations[..1]), None);
    assert_eq!(
        syscalls_bound(&expectations),
        Some(Bound::Near {
            value: 1.0,
            tolerance: 0.05
        })
    );
}

/// The kernel's counts of a window (the eBPF backend): the sides come from who made the
/// markers, and a trace without both markers is refused as with records.
#[test]
fn counts_made_in_the_kernel_are_split_by_side_and_checked_alike() {
    let site = |pid, marker_thread, nr, calls| CallSite {
        pid,
        marker_thread,
        nr,
        calls,
        ..CallSite::default()
    };
    let mut traced = Traced {
        sites: vec![
            site(10, true, READ, 1000),
            site(10, true, WRITE, 1000),
            site(10, false, MMAP, 1),
            site(11, false, READ, 1000),
            site(11, false, WRITE, 1000),
        ],
        marked: Some(Marked {
            marks: 2,
            pid: 10,
            tid: 10,
            window_ns: 5000,
        }),
        ..Traced::default()
    };
    let claimed = each(&["write", "read"]);
    let claims = Claims {
        syscalls: &claimed,
        total: Some(Bound::Near {
            value: 2.0,
            tolerance: 0.05,
        }),
    };
    let checked = check(&traced, MARK, 1000, &name, &claims).expect("a window");
    assert!(checked.matches(), "{:?}", checked.differences);
    assert_eq!((checked.processes, checked.window_ns), (2, 5000));
    assert_eq!(checked.worker_per_op, 2.0);
    let side_of = |nr, side| {
        checked
            .rates
            .iter()
            .find(|r| r.nr == nr && r.side == side)
            .map(|r| r.calls)
    };
    assert_eq!(side_of(READ, Side::Partner), Some(1000));
    assert_eq!(side_of(MMAP, Side::WorkerThread), Some(1));
    traced.marked = Some(Marked {
        marks: 1,
        ..Marked::default()
    });
    let err = check(&traced, MARK, 1000, &name, &claims).unwrap_err();
    assert_eq!(err, MarkerError::NoSecondMarker, "{err}");
}

#[test]
fn a_claim_below_one_per_op_needs_only_its_rate() {
    // One read per two ops (50 in 100) against a claim of 1/2 per op, then of 1 per op.
    let extra: Vec<SysEvent> = (0..50)
        .flat_map(|i| {
            [
                enter(20, 20, 100 + i * 10, READ),
                exit(20, 20, 101 + i * 10, READ),
            ]
        })
        .collect();
    let traced = pass(100, extra);
    let half = [Claim::each("getppid"), Claim::at_least("read", 0.5)];
    let c = check(
        &traced,
        MARK,
        100,
        &name,
        &Claims {
            syscalls: &half,
            total: None,
        },
    )
    .unwrap();
    assert!(c.matches(), "{:?}", c.differences);
    let once = each(&["getppid", "read"]);
    let c = check(
        &traced,
        MARK,
        100,
        &name,
        &Claims {
            syscalls: &once,
            total: None,
        },
    )
    .unwrap();
    assert_eq!(c.differences.len(), 1, "{:?}", c.differences);
    assert!(
        c.differences[0]
            .to_string()
            .contains("made 0.500 times per op (at least 0.990)")
    );
}

#[test]
fn claims_are_described_with_their_rates() {
    assert_eq!(describe(&[]), "none");
    let claims = [
        Claim::each("write"),
        Claim::at_least("read", 1.0 / 16.0),
        Claim::at_least("madvise", 0.75),
    ];
    assert_eq!(
        describe(&claims),
        "write, read (at least 1/16 per op), madvise (at least 0.750 per op)"
    );
    assert_eq!(Claim::any_number("read").describe(), "read (any number)");
}

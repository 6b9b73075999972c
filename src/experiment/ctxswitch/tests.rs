use super::*;

fn params(pairs: &[(&str, &str)]) -> Params {
    Params::from_pairs(pairs)
}

fn bound_of(e: &[Expectation], metric: Metric) -> Option<Bound> {
    e.iter().find(|x| x.metric == metric).map(|x| x.bound)
}

#[test]
fn round_trips_expect_two_switches_that_one_switch_fails() {
    for e in [
        pipe_expectations(&params(&[])),
        futex_expectations(&params(&[])),
    ] {
        let Some(Bound::Near { value, tolerance }) = bound_of(&e, Metric::BothSidesSwitches) else {
            panic!("a switch count is expected: {e:?}");
        };
        assert!((value - 2.0).abs() < 1e-9);
        assert!(tolerance < 1.0, "one switch per round trip must fail");
    }
}

#[test]
fn yield_expectations_depend_on_the_competitor() {
    let alone = yield_expectations(&params(&[("competitor", "none")]));
    assert_eq!(
        bound_of(&alone, Metric::Rusage("nivcsw")),
        Some(Bound::Below(0.01))
    );
    assert!(bound_of(&alone, Metric::BothSidesSwitches).is_none());
    let with = yield_expectations(&params(&[("competitor", "same_cpu")]));
    assert!(bound_of(&with, Metric::BothSidesSwitches).is_some());
    assert_eq!(
        bound_of(&with, Metric::Rusage("nivcsw")),
        Some(Bound::AtLeast(0.9))
    );
}

#[test]
fn nanosleep_expects_a_switch_only_with_a_large_slack() {
    let default = nanosleep0_expectations(&params(&[("timer_slack_ns", "50000")]));
    assert!(bound_of(&default, Metric::Rusage("nvcsw")).is_some());
    let tiny = nanosleep0_expectations(&params(&[("timer_slack_ns", "1")]));
    assert!(bound_of(&tiny, Metric::Rusage("nvcsw")).is_none());
    assert_eq!(SLACK_PARAM.default, "50000");
}

#[test]
fn pipe_noswitch_round_trip_runs_in_one_process() {
    let mut r = setup_pipe_noswitch(&params(&[]), &Context::default()).unwrap();
    r.run(1000).unwrap();
    assert!(r.partner().is_none());
}

#[test]
fn futex_threads_ping_pong_runs_and_stops() {
    let cpu = *crate::platform::cpu::allowed().last().unwrap();
    let ctx = Context {
        cpu: Some(cpu),
        ..Context::default()
    };
    // Pinning the worker pins this test thread: run it on a thread of its own.
    std::thread::spawn(move || {
        let p = params(&[("mode", "threads"), ("placement", "same")]);
        let mut r = setup_futex(&p, &ctx).unwrap();
        r.run(200).unwrap();
        assert!(
            r.partner().is_none(),
            "a thread needs no reading of another task"
        );
        let p = params(&[("mode", "processes"), ("placement", "same")]);
        let mut r = setup_futex(&p, &ctx).unwrap();
        r.run(200).unwrap();
        assert!(r.partner().is_some());
    })
    .join()
    .unwrap();
}

#[test]
fn pipe_ping_pong_with_a_working_set_has_a_baseline() {
    let cpu = *crate::platform::cpu::allowed().last().unwrap();
    let ctx = Context {
        cpu: Some(cpu),
        ..Context::default()
    };
    std::thread::spawn(move || {
        let p = params(&[("placement", "same"), ("working_set_kb", "16")]);
        let mut r = setup_pipe(&p, &ctx).unwrap();
        r.run(100).unwrap();
        assert!(matches!(r.run_baseline(10), Some(Ok(()))));
        let p = params(&[("placement", "same"), ("working_set_kb", "0")]);
        let mut r = setup_pipe(&p, &ctx).unwrap();
        r.run(100).unwrap();
        assert!(r.run_baseline(10).is_none());
    })
    .join()
    .unwrap();
}

#[test]
fn cross_placement_on_one_cpu_is_unsupported() {
    let ctx = Context {
        cpu: Some(0),
        other_cpu: None,
        ..Context::default()
    };
    let p = params(&[("placement", "cross"), ("working_set_kb", "0")]);
    match setup_pipe(&p, &ctx) {
        Err(SetupError::Unsupported(reason)) => assert!(reason.contains("CPU"), "{reason}"),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("cross on one CPU must be unsupported"),
    }
}

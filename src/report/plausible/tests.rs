use super::*;
use crate::store::tests::run;

/// The store's fixture result, whose samples test edge values of the database (a fault
/// count of −1), made what a measurement gives.
fn syscall_result() -> ExperimentResult {
    let mut r = crate::store::tests::syscall_result();
    for s in &mut r.samples {
        s.rusage.minflt = 0;
        s.ns_per_op = expected_ns_per_op(&r.calibration, s).0;
    }
    r
}

/// Now, for the tests of times: 2026-11-27.
const NOW: f64 = 1_795_000_000.0;

fn judged(run: &Run) -> Vec<String> {
    let mut judge = Judge::at(NOW);
    judge.header(run.started_at, run.finished_at);
    for r in &run.results {
        judge.result(r);
    }
    judge.finish()
}

#[test]
fn times_are_between_1970_and_a_day_from_now() {
    let mut ok = run(None, NOW - 3600.0, vec![syscall_result()]);
    ok.finished_at = Some(NOW - 60.0);
    assert_eq!(judged(&ok), Vec::<String>::new());
    // Another machine's clock a few hours ahead is still a clock.
    ok.finished_at = Some(NOW + 7200.0);
    assert_eq!(judged(&ok), Vec::<String>::new());
    for (started, finished, needle) in [
        (
            1e308,
            None,
            "the run started at 1e308 s, more than a day after now",
        ),
        (-1e18, None, "the run started at -1e18 s, before 1970"),
        (f64::NAN, None, "the run started at NaN s, before 1970"),
        (
            NOW,
            Some(NOW - 10.0),
            "the run finished at 1794999990 before it started at 1795000000",
        ),
        (
            NOW,
            Some(NOW + 2.0 * 86_400.0),
            "the run finished at 1795172800 s, more than a day after now",
        ),
    ] {
        let mut bad = ok.clone();
        bad.started_at = started;
        bad.finished_at = finished;
        let got = judged(&bad);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert!(got[0].starts_with(needle), "{needle} in {got:#?}");
    }
    let mut r = syscall_result();
    r.started_at = -5.0;
    let got = judged(&run(None, NOW, vec![r]));
    assert_eq!(
        got,
        ["result 1 (syscall.getpid): started at -5 s, before 1970"]
    );
}

/// A sample's time per operation is what its elapsed time, operations and calibration give;
/// values swapped for others of any size are found, one line per sample.
#[test]
fn ns_per_op_agrees_with_elapsed_ns_over_ops() {
    let mut r = syscall_result();
    r.calibration.loop_overhead_ns = Some(0.75);
    r.calibration.baseline_ns = Some(2.5);
    for s in &mut r.samples {
        s.ns_per_op = expected_ns_per_op(&r.calibration, s).0;
    }
    assert_eq!(
        judged(&run(None, NOW, vec![r.clone()])),
        Vec::<String>::new()
    );
    // Within rounding: accepted.
    r.samples[0].ns_per_op *= 1.0 + 1e-9;
    assert_eq!(
        judged(&run(None, NOW, vec![r.clone()])),
        Vec::<String>::new()
    );
    r.samples[0].ns_per_op = 1.7e308;
    r.samples[1].ns_per_op = 1e-300;
    r.samples[2].ns_per_op *= 1.001;
    let got = judged(&run(None, NOW, vec![r]));
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].starts_with("result 1 (syscall.getpid): sample 1 has 1.7e308 ns per operation where its elapsed_ns, ops and calibration give "), "{got:#?}");
    assert!(
        got[1].contains("sample 2 has 1e-300 ns per operation"),
        "{got:#?}"
    );
    assert!(got[2].contains("sample 3 has "), "{got:#?}");
}

#[test]
fn a_measured_run_is_plausible() {
    assert_eq!(
        problems(&run(None, 1.0, vec![syscall_result()])),
        Vec::<String>::new()
    );
}

#[test]
fn impossible_values_are_named_one_line_each() {
    let mut r = syscall_result();
    r.samples[0].elapsed_ns = -5.0;
    r.samples[1].ns_per_op = 1.7e308 * 10.0;
    r.samples[1].ops = 0;
    r.samples[2].rusage.minflt = -1;
    let mut unknown = syscall_result();
    unknown.experiment = "syscall.teleport".into();
    let got = problems(&run(None, 1.0, vec![r, unknown]));
    let expect = [
        "result 1 (syscall.getpid): sample 1 took -5 ns, which no batch can",
        "result 1 (syscall.getpid): sample 2 has 0 operations",
        "result 1 (syscall.getpid): sample 2 has inf ns per operation",
        "result 1 (syscall.getpid): sample 3 has a negative minflt",
        "result 2 (syscall.teleport): this oslab knows no such experiment (`oslab list` names them)",
    ];
    for e in expect {
        assert!(got.iter().any(|g| g == e), "{e} in {got:#?}");
    }
    assert_eq!(got.len(), expect.len(), "{got:#?}");
    assert!(got.iter().all(|g| !g.contains('\n')));
}

#[test]
fn an_empty_run_and_long_lists_are_said_briefly() {
    assert_eq!(
        problems(&run(None, 1.0, vec![])),
        ["the run has no results"]
    );
    let mut r = syscall_result();
    for s in &mut r.samples {
        s.ops = 0;
    }
    let many: Vec<ExperimentResult> = (0..20).map(|_| r.clone()).collect();
    let got = problems(&run(None, 1.0, many));
    assert_eq!(got.len(), MAX_LISTED + 1);
    assert!(got.last().unwrap().starts_with("… and "), "{got:?}");
}

mod fuzz {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;
    use crate::report::export::{json_document, read_document};

    /// A valid export document to damage.
    fn document() -> Value {
        json_document(&run(None, 1.0, vec![syscall_result()]))
    }

    /// Every number and string leaf of `v`, as paths of keys and indices.
    fn leaves(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    path.push(Value::String(k.clone()));
                    leaves(x, path, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(Value::from(i));
                    leaves(x, path, out);
                    path.pop();
                }
            }
            _ => out.push(path.clone()),
        }
    }

    fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
        path.iter().fold(v, |v, key| match key {
            Value::String(k) => &mut v[k.as_str()],
            Value::Number(i) => &mut v[i.as_u64().unwrap_or(0) as usize],
            _ => v,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Any text: read as an export or refused, never a panic.
        #[test]
        fn any_text_is_read_or_refused(text in ".{0,400}") {
            if let Ok(run) = read_document(&text) {
                let _ = problems(&run);
            }
        }

        /// A valid export with one value replaced by any number, string, null or huge
        /// value: refused with a reason, or read and then judged, never a panic.
        #[test]
        fn a_damaged_export_is_judged(
            pick in any::<prop::sample::Index>(),
            replacement in prop_oneof![
                any::<f64>().prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
                any::<i64>().prop_map(Value::from),
                Just(Value::from(1.7e308)),
                Just(Value::from(-1)),
                ".{0,12}".prop_map(Value::String),
                Just(Value::Null),
            ],
        ) {
            let mut doc = document();
            let mut paths = Vec::new();
            leaves(&doc, &mut Vec::new(), &mut paths);
            let path = pick.get(&paths).clone();
            *at(&mut doc, &path) = replacement;
            if let Ok(run) = read_document(&doc.to_string()) {
                for line in problems(&run) {
                    prop_assert!(!line.contains('\n'));
                }
            }
        }
    }
}

#[test]
fn earlier_runs_medians_are_what_runs_give() {
    let mut r = syscall_result();
    r.earlier_medians = vec![120.0; MAX_EARLIER_RUNS];
    r.earlier_slow_medians = vec![];
    r.earlier_kernel_canaries = vec![];
    assert_eq!(
        problems(&run(None, 1.0, vec![r.clone()])),
        Vec::<String>::new()
    );
    r.earlier_medians = vec![120.0, -3.0, f64::INFINITY];
    r.earlier_medians.extend([1.0; MAX_EARLIER_RUNS]);
    let got = problems(&run(None, 1.0, vec![r]));
    assert_eq!(
        got,
        [
            "result 1 (syscall.getpid): 12 earlier runs' medians, where a run keeps at most 9",
            "result 1 (syscall.getpid): an earlier run's median of -3 ns per operation",
        ],
        "{got:#?}"
    );
    // Those left out for a slow phase count among the nine, and must be times too.
    let mut r = syscall_result();
    r.earlier_medians = vec![120.0; MAX_EARLIER_RUNS - 1];
    r.earlier_slow_medians = vec![160.0];
    assert_eq!(
        problems(&run(None, 1.0, vec![r.clone()])),
        Vec::<String>::new()
    );
    r.earlier_slow_medians = vec![160.0, f64::NAN];
    // A kernel canary for each kept run at most, and a time too.
    r.earlier_kernel_canaries = vec![170.0; MAX_EARLIER_RUNS - 1];
    r.earlier_kernel_canaries.push(-1.0);
    let got = problems(&run(None, 1.0, vec![r]));
    assert_eq!(
        got,
        [
            "result 1 (syscall.getpid): 10 earlier runs' medians, where a run keeps at most 9",
            "result 1 (syscall.getpid): an earlier run's median of NaN ns per operation",
            "result 1 (syscall.getpid): 9 earlier runs' kernel canaries for 8 earlier runs",
            "result 1 (syscall.getpid): an earlier run's kernel canary of -1 ns per call",
        ],
        "{got:#?}"
    );
}

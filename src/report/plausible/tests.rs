use super::*;
use crate::store::tests::run;

/// The store's fixture result, whose samples test edge values of the database (a fault
/// count of −1), made what a measurement gives.
fn syscall_result() -> ExperimentResult {
    let mut r = crate::store::tests::syscall_result();
    for s in &mut r.samples {
        s.rusage.minflt = 0;
    }
    r
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

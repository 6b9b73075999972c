//! `oslab run pagefault.*` end to end: each experiment and the main parameter variants of
//! `pagefault.anon` measure for real and pass their expectations (one minor fault per page,
//! far fewer with THP or after MADV_POPULATE_WRITE, none major), or are `unsupported` with
//! a reason (THP disabled or not applying, MADV_POPULATE_WRITE missing).
//!
//! No timing value is asserted.

mod common;

use common::{Lab, check_run_contract, num, result};
use serde_json::Value;

const QUICK: [&str; 5] = ["--quick", "--budget", "0.3", "--param", "size=16M"];

/// Run `experiment` with `params`; the result when it measured, or the reason it is
/// unsupported here. Every measured result must be `ok` with every expectation held.
fn check_experiment(experiment: &str, params: &[&str]) -> Result<Value, String> {
    let lab = Lab::new();
    let mut args = vec![experiment];
    for p in params {
        args.extend_from_slice(&["--param", p]);
    }
    args.extend_from_slice(&QUICK);
    // run_json takes the measuring turn (common::measuring_turn) itself.
    let doc = lab.run_json(&args, 0);
    check_run_contract(&doc);
    let r = result(&doc, experiment).clone();
    assert_eq!(r["unit"], "ns/page", "{experiment}: {r:#}");
    let status = r["status"].as_str().unwrap();
    let reason = r["reason"].as_str().unwrap_or("").to_string();
    if status == "unsupported" {
        assert!(!reason.is_empty(), "{experiment}: unsupported says why");
        return Err(reason);
    }
    assert_eq!(status, "ok", "{experiment} {params:?}: {r:#}");
    assert!(r["samples"].as_u64().unwrap() > 0);
    let validation = r["validation"].as_array().unwrap();
    assert!(
        validation.len() >= 2,
        "{experiment}: checked: {validation:?}"
    );
    for v in validation {
        assert_eq!(
            v["ok"], true,
            "{experiment} {params:?}: validation passes: {v}"
        );
    }
    let majflt = num(&r["rusage"]["majflt"], "majflt");
    assert!(
        majflt < 0.0001,
        "{experiment}: {majflt} major faults per page"
    );
    Ok(r)
}

fn minflt(r: &Value) -> f64 {
    num(&r["rusage"]["minflt"], "minflt")
}

#[test]
fn anon_warm_seq_faults_once_per_page() {
    let r = check_experiment("pagefault.anon", &[]).expect("anonymous memory everywhere");
    assert_eq!(r["params"]["memory"], "warm", "the default");
    assert_eq!(r["params"]["order"], "seq", "the default");
    assert_eq!(r["params"]["size"], "16M");
    let f = minflt(&r);
    assert!((f - 1.0).abs() <= 0.01, "{f} faults per page");
}

#[test]
fn anon_random_order_faults_once_per_page() {
    let r = check_experiment("pagefault.anon", &["order=random"]).expect("runs everywhere");
    let f = minflt(&r);
    assert!((f - 1.0).abs() <= 0.01, "{f} faults per page");
}

#[test]
fn anon_fresh_memory_faults_once_per_page() {
    let r = check_experiment("pagefault.anon", &["memory=fresh"]).expect("runs everywhere");
    let f = minflt(&r);
    assert!((f - 1.0).abs() <= 0.01, "{f} faults per page");
}

#[test]
fn anon_with_thp_faults_far_less_or_says_why_not() {
    match check_experiment("pagefault.anon", &["thp=on"]) {
        Ok(r) => {
            let f = minflt(&r);
            assert!(f < 0.1, "{f} faults per page with huge pages");
        }
        Err(reason) => assert!(
            reason.contains("transparent") || reason.contains("THP"),
            "{reason}"
        ),
    }
}

#[test]
fn anon_after_populate_takes_no_fault_or_says_why_not() {
    match check_experiment("pagefault.anon", &["populate=madv_populate_write"]) {
        Ok(r) => {
            let f = minflt(&r);
            assert!(f < 0.01, "{f} faults per page after MADV_POPULATE_WRITE");
        }
        Err(reason) => assert!(reason.contains("MADV_POPULATE_WRITE"), "{reason}"),
    }
}

#[test]
fn cow_child_faults_once_per_page() {
    let r = check_experiment("pagefault.cow", &[]).expect("fork runs everywhere");
    let children = &r["children_rusage"];
    assert!(children.is_object(), "children's rusage reported: {r:#}");
    let f = num(&children["minflt"], "children minflt");
    assert!((f - 1.0).abs() <= 0.05, "{f} child faults per page");
}

#[test]
fn a_bad_order_is_a_user_error() {
    let lab = Lab::new();
    let out = lab.oslab(&["run", "pagefault.anon", "--param", "order=backwards"]);
    out.assert_user_error(&["order", "seq", "random"]);
}

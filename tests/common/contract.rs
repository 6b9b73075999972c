//! The JSON contract every run document keeps: the fields of a run and of each result, and the
//! invariants between a result's statistics.

#![allow(dead_code)]

use super::*;

/// The fields every run document has.
/// Every `clock.source` a run may record: the CPU's counter, or the system's clock.
pub const CLOCK_SOURCES: &[&str] = &[
    "tsc",
    "cntvct_el0",
    "clock_monotonic_raw",
    "clock_monotonic_precise",
    "query_performance_counter",
];

pub fn check_run_contract(doc: &Value) {
    let run_id = doc["run_id"]
        .as_i64()
        .unwrap_or_else(|| panic!("run_id is an integer: {}", doc["run_id"]));
    assert!(run_id > 0, "run_id {run_id} is positive");
    let uuid = doc["run_uuid"].as_str().unwrap_or_default();
    assert!(
        oslab::model::identity::is_run_uuid(uuid),
        "run_uuid is a UUID: {}",
        doc["run_uuid"]
    );
    let env = object(&doc["environment"], "environment");
    assert_eq!(
        env.get("kernel_release").and_then(Value::as_str),
        Some(kernel_release().as_str()),
        "environment.kernel_release is this machine's"
    );
    object(&doc["environment"]["counters"], "environment.counters");
    let source = doc["clock"]["source"].as_str().expect("clock.source");
    assert!(CLOCK_SOURCES.contains(&source), "clock.source {source}");
    for r in results(doc) {
        check_result_contract(r);
    }
    // Every result is one process of one configuration.
    let configurations = doc["configurations"]
        .as_array()
        .expect("configurations is an array");
    let processes: u64 = configurations
        .iter()
        .map(|c| c["processes"].as_u64().expect("configurations[].processes"))
        .sum();
    assert_eq!(processes as usize, results(doc).len());
    for c in configurations {
        assert!(c["median"].is_null() || c["median"].is_f64(), "{c:#}");
        assert!(c["process_medians"].is_array(), "{c:#}");
    }
}

/// The contract of one result: every field present with its type, statuses from the allowed
/// sets, and the invariants between the statistics.
pub fn check_result_contract(r: &Value) {
    let name = r["experiment"].as_str().expect("experiment is a string");
    let ctx = |field: &str| format!("{name}: {field}");
    let fields = object(r, name);
    for key in [
        "experiment",
        "params",
        "unit",
        "status",
        "reason",
        "samples",
        "median",
        "ci_low",
        "ci_high",
        "mean",
        "stddev",
        "min",
        "stop_reason",
        "counters",
        "rusage",
        "validation",
    ] {
        assert!(
            fields.contains_key(key),
            "{name}: field `{key}` missing: {r:#}"
        );
    }
    object(&r["params"], &ctx("params"));
    let unit = r["unit"].as_str().expect("unit is a string");
    assert!(unit.starts_with("ns/"), "{name}: unit {unit}");

    let status = r["status"].as_str().expect("status is a string");
    assert!(RESULT_STATUSES.contains(&status), "{name}: status {status}");
    if status != "ok" {
        assert!(
            non_empty_str(&r["reason"]),
            "{name}: a {status} result says why: {r:#}"
        );
    }

    let samples = r["samples"].as_u64().expect("samples is a count");
    if status == "ok" || status == "suspect" {
        assert!(samples > 0, "{name}: a measured result has samples");
        let stop = r["stop_reason"]
            .as_str()
            .expect("stop_reason of a measured result");
        assert!(
            ["precision", "budget", "max_samples"].contains(&stop),
            "{name}: stop_reason {stop}"
        );
    }
    if samples > 0 {
        let median = num(&r["median"], &ctx("median"));
        let lo = num(&r["ci_low"], &ctx("ci_low"));
        let hi = num(&r["ci_high"], &ctx("ci_high"));
        let min = num(&r["min"], &ctx("min"));
        let mean = num(&r["mean"], &ctx("mean"));
        let stddev = num(&r["stddev"], &ctx("stddev"));
        assert!(
            lo <= median && median <= hi,
            "{name}: ci_low {lo} <= median {median} <= ci_high {hi}"
        );
        assert!(min <= median, "{name}: min {min} <= median {median}");
        assert!(mean.is_finite(), "{name}: mean {mean}");
        assert!(stddev >= 0.0, "{name}: stddev {stddev}");
        let rusage = object(&r["rusage"], &ctx("rusage"));
        for field in RUSAGE_FIELDS {
            let v = rusage
                .get(field)
                .unwrap_or_else(|| panic!("{name}: rusage.{field} missing: {r:#}"));
            assert!(num(v, &ctx(field)) >= 0.0, "{name}: rusage.{field} = {v}");
        }
    } else {
        assert!(r["median"].is_null(), "{name}: no samples, no median");
    }

    for (counter, c) in object(&r["counters"], &ctx("counters")) {
        let what = format!("{name}: counter {counter}");
        object(c, &what);
        let cstatus = c["status"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: status"));
        assert!(
            COUNTER_STATUSES.contains(&cstatus),
            "{what}: status {cstatus}"
        );
        assert!(c.get("per_op").is_some(), "{what}: per_op missing");
        assert!(c.get("reason").is_some(), "{what}: reason missing");
        match cstatus {
            "ok" => {
                let per_op = num(&c["per_op"], &format!("{what}: per_op"));
                assert!(per_op >= 0.0, "{what}: per_op {per_op}");
            }
            "unsupported" => {
                assert!(
                    non_empty_str(&c["reason"]),
                    "{what}: unsupported says why: {c}"
                );
                assert!(c["per_op"].is_null(), "{what}: unsupported has no figure");
            }
            _ => assert!(c["per_op"].is_null(), "{what}: not counted has no figure"),
        }
    }

    let validation = r["validation"].as_array().expect("validation is an array");
    for v in validation {
        assert!(
            non_empty_str(&v["check"]),
            "{name}: validation check named: {v}"
        );
        assert!(v["ok"].is_boolean(), "{name}: validation ok is a bool: {v}");
        assert!(
            non_empty_str(&v["detail"]),
            "{name}: validation detail: {v}"
        );
    }
}

/// `counters.NAME.per_op` when the counter was counted in this result.
pub fn counter_per_op(r: &Value, counter: &str) -> Option<f64> {
    let c = &r["counters"][counter];
    (c["status"] == "ok").then(|| num(&c["per_op"], counter))
}

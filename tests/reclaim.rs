//! The reclaim lab end to end: beside `--load memory`, every sample carries the kernel's
//! reclaim counters of the experiment's memory cgroup (`cg.*`) and of the machine (`vm.*`) as
//! non-negative deltas, and `show` has the reclaim section.
//!
//! Where this machine has no memory cgroup oslab may use (no controller mounted, not root),
//! each test prints why and returns, except under `CI=true`, where the CI machine must have
//! one. No timing value is asserted.

// Memory cgroups and /proc/vmstat are Linux's.
#![cfg(target_os = "linux")]

mod common;

use common::Lab;
use oslab::platform::cgroup;
use serde_json::Value;

/// Why `--load memory` cannot run here, if it cannot; under CI it must.
fn unsupported_here() -> Option<String> {
    let reason = match cgroup::hierarchy() {
        Ok(_) => return None,
        Err(oslab::experiment::SetupError::Unsupported(r))
        | Err(oslab::experiment::SetupError::Failed(r)) => r,
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI needs a memory cgroup for the reclaim lab: {reason}"
    );
    eprintln!("skipped: --load memory cannot run here: {reason}");
    Some(reason)
}

/// The stored run `id`'s results, from the export (samples and counter statuses included).
fn exported_results(lab: &Lab, id: &Value) -> Vec<Value> {
    let out = lab.oslab(&["export", &id.to_string()]);
    out.assert_code(0);
    out.json()["run"]["results"]
        .as_array()
        .expect("results")
        .clone()
}

/// The counters both scopes keep.
const COMMON: [&str; 3] = ["pgmajfault", "workingset_refault_file", "oom_kill"];

fn is_reclaim(name: &str) -> bool {
    name.starts_with("cg.") || name.starts_with("vm.")
}

#[test]
fn reclaim_counters_come_from_the_experiments_cgroup_as_non_negative_deltas() {
    if unsupported_here().is_some() {
        return;
    }
    // A 64 MiB file mapping beside a 64 MiB competitor in a 128 MiB cgroup: the file cannot
    // stay cached, so every pass reads some of it back.
    let lab = Lab::new();
    let doc = lab.run_json(
        &[
            "mmap.access",
            "--quick",
            "--budget",
            "0.3",
            "--repeat",
            "1",
            "--param",
            "backing=file_shared",
            "--param",
            "size=64M",
            "--load",
            "memory",
            "--dir",
            lab.dir().to_str().expect("utf-8"),
        ],
        0,
    );
    let results = exported_results(&lab, &doc["run_id"]);
    let r = &results[0];
    assert_eq!(r["status"], "ok", "{:#}", r["reason"]);
    let statuses = r["counters"].as_array().expect("statuses");
    let supported = |name: &str| {
        statuses
            .iter()
            .any(|s| s["name"] == name && s["supported"] == true)
    };
    for name in [
        "vm.pgmajfault",
        "vm.workingset_refault_file",
        "cg.pgmajfault",
    ] {
        assert!(supported(name), "{name} is counted: {statuses:#?}");
    }
    for s in statuses
        .iter()
        .filter(|s| is_reclaim(s["name"].as_str().unwrap_or("")))
    {
        if s["supported"] == false {
            assert!(
                s["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "an uncounted reclaim counter says why: {s}"
            );
        }
    }
    let samples = r["samples"].as_array().expect("samples");
    assert!(!samples.is_empty());
    let mut refaults = 0.0;
    let mut totals: std::collections::BTreeMap<&str, (f64, f64)> = Default::default();
    for s in samples {
        let counters = s["counters"].as_object().expect("counters");
        let get = |name: &str| counters.get(name).and_then(|c| c["value"].as_f64());
        for (name, c) in counters.iter().filter(|(n, _)| is_reclaim(n)) {
            let value = c["value"].as_f64().expect("a value");
            assert!(value >= 0.0 && value.is_finite(), "{name}: {value}");
            assert_eq!(c["raw"].as_f64(), Some(value), "{name}");
        }
        for key in COMMON {
            if let (Some(cg), Some(vm)) = (get(&format!("cg.{key}")), get(&format!("vm.{key}"))) {
                let t = totals.entry(key).or_insert((0.0, 0.0));
                t.0 += cg;
                t.1 += vm;
            }
        }
        refaults +=
            get("cg.workingset_refault_file").unwrap_or(0.0) + get("cg.pgmajfault").unwrap_or(0.0);
    }
    // The cgroup is part of the machine: its counts cannot exceed the machine's, but for the
    // machine's per-CPU counts folded into /proc/vmstat lazily (up to a threshold per CPU).
    for (key, (cg, vm)) in totals {
        assert!(cg <= vm * 1.05 + 512.0, "cg.{key} {cg} > vm.{key} {vm}");
    }
    assert!(
        refaults > 0.0,
        "the experiment's cgroup read its file back under the competitor's pressure"
    );
    let show = lab.oslab(&["show"]);
    show.assert_code(0);
    let text = &show.stdout;
    assert!(
        text.contains("Reclaim (what page replacement did"),
        "{text}"
    );
}

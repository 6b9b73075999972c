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
    ["cg.", "vm.", "vmscan."]
        .iter()
        .any(|p| name.starts_with(p))
}

#[test]
fn reclaim_counters_come_from_the_experiments_cgroup_as_non_negative_deltas() {
    if unsupported_here().is_some() {
        return;
    }
    // A 64 MiB file mapping beside a 64 MiB competitor in a 128 MiB cgroup: the file cannot
    // stay cached, so every pass reads some of it back.
    let lab = Lab::new();
    let dir = lab.dir().to_str().expect("utf-8").to_string();
    let args = [
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
        &dir,
    ];
    let doc = lab.run_json(&args, 0);
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

    // The same again: compare names the kernels and holds each counter's change against the
    // noise, in text and JSON.
    let again = lab.run_json(&args, 0);
    let (a, b) = (doc["run_id"].to_string(), again["run_id"].to_string());
    let cmp = lab.oslab(&["compare", &a, &b]);
    cmp.assert_code(0);
    assert!(
        cmp.stdout.contains("Reclaim (B against A"),
        "{}",
        cmp.stdout
    );
    assert!(cmp.stdout.contains("same kernel in both"), "{}", cmp.stdout);
    let json = lab.oslab(&["compare", &a, &b, "--json"]).json();
    let changes = json["reclaim"].as_array().expect("a reclaim array");
    assert!(!changes.is_empty());
    for c in changes {
        assert!(is_reclaim(c["counter"].as_str().unwrap_or("")), "{c}");
        assert!(["more", "fewer", "no change"].contains(&c["verdict"].as_str().unwrap_or("")));
        assert!(c["a"].as_f64().is_some_and(|v| v >= 0.0), "{c}");
    }
}

/// Whether this process is root (`--swap` needs it); under CI it must be.
fn root_or_skip(what: &str) -> bool {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI runs as root for {what}"
        );
        eprintln!("skipped: {what} needs root");
    }
    root
}

/// The swap areas and swap files oslab made that are still there.
fn oslab_swap_left() -> Vec<String> {
    let mut left: Vec<String> = std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter(|l| l.contains("oslab-swap-"))
        .map(str::to_string)
        .collect();
    if let Ok(entries) = std::fs::read_dir("/var/tmp") {
        left.extend(
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("oslab-swap-")),
        );
    }
    left
}

fn sum(r: &Value, counter: &str) -> f64 {
    r["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .filter_map(|s| s["counters"][counter]["value"].as_f64())
        .sum()
}

fn detail<'a>(r: &'a Value, name: &str) -> &'a str {
    r["load"]["details"]
        .as_array()
        .and_then(|d| d.iter().find(|pair| pair[0] == name))
        .and_then(|pair| pair[1].as_str())
        .unwrap_or("")
}

#[test]
fn the_reclaim_suite_with_swap_pages_anonymous_memory_out_and_removes_its_swap() {
    if unsupported_here().is_some() || !root_or_skip("--swap") {
        return;
    }
    let lab = Lab::new();
    if let Some(why) = common::unsupported_under_emulation("the reclaim suite's 24 walks") {
        // Minutes under qemu-user: one configuration shows what the suite's configurations do.
        return one_tight_configuration_under_emulation(&lab, &why);
    }
    let doc = lab.run_json(
        &[
            "--suite",
            "reclaim",
            "--quick",
            "--swap",
            "256M",
            "--dir",
            lab.dir().to_str().expect("utf-8"),
        ],
        0,
    );
    assert!(oslab_swap_left().is_empty(), "{:?}", oslab_swap_left());
    let results = exported_results(&lab, &doc["run_id"]);
    // Four backings, three levels, with swap and without: a forced OOM loses nothing.
    assert_eq!(results.len(), 24);
    for r in &results {
        let label = r["label"].as_str().unwrap_or("");
        assert_eq!(r["status"], "ok", "{label}: {:#}", r["reason"]);
        assert!(
            r["samples"][0]["counters"]
                .as_object()
                .is_some_and(|c| c.keys().any(|k| is_reclaim(k))),
            "{label} carries reclaim counters"
        );
    }
    let find = |label: &str| {
        results
            .iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("no {label}"))
    };
    // A quarter of the experiment does not fit: with swap, anonymous pages go out. (The walk
    // never comes back to a block it has walked, so on a kernel whose LRU evicts those cold
    // blocks first, few come back in: no count of swap-ins is asserted.)
    let tight = find("anonymous, headroom -25%");
    assert!(sum(tight, "vm.pswpout") > 0.0, "nothing swapped out");
    // Reclaim's own tracepoints, where they open (root), saw the pages go.
    let traced = tight["counters"].as_array().is_some_and(|c| {
        c.iter()
            .any(|s| s["name"] == "vmscan.reclaimed" && s["supported"] == true)
    });
    if traced {
        assert!(sum(tight, "vmscan.scanned") >= sum(tight, "vmscan.reclaimed"));
        assert!(
            sum(tight, "vmscan.reclaimed") > 0.0,
            "the tracepoints saw no reclaim"
        );
    }
    // A file mapping that does not fit is read back on every pass.
    let file = find("file shared, headroom -25%");
    let read_back = sum(file, "cg.workingset_refault_file") + sum(file, "cg.pgmajfault");
    assert!(read_back > 0.0, "the file was not read back");
    // Without swap the competitor is the OOM killer's, recorded as such.
    let no_swap = find("anonymous, headroom -25%, no swap");
    assert!(
        detail(no_swap, "competitor at the end").starts_with("OOM-killed"),
        "{:#}",
        no_swap["load"]
    );
    assert!(detail(no_swap, "swap").contains("swap=off"));
    let settings = &lab.oslab(&["export", &doc["run_id"].to_string()]).json()["run"]["settings"];
    assert!(
        settings["swap"]
            .as_str()
            .is_some_and(|s| s.contains("swap file")),
        "{settings:#}"
    );
    let show = lab.oslab(&["show"]);
    assert!(
        show.stdout.contains("anonymous pages cannot be"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("the competitor was OOM-killed"),
        "{}",
        show.stdout
    );
}

/// Under emulation: the tightest anonymous configuration with swap made for the run. The
/// worker is the emulator, whose own memory counts in the cgroup too, so the OOM killer may
/// take it: its result is stored whatever it is, with the reclaim counters' statuses, and the
/// swap is gone afterwards.
fn one_tight_configuration_under_emulation(lab: &Lab, why: &str) {
    let out = lab.oslab(&[
        "run",
        "mmap.access",
        "--quick",
        "--param",
        "size=64M",
        "--load",
        "memory:headroom=-25",
        "--swap",
        "128M",
        "--json",
    ]);
    eprintln!("{why}: exit {:?}", out.code);
    let doc = out.json();
    assert!(oslab_swap_left().is_empty(), "{:?}", oslab_swap_left());
    let results = exported_results(lab, &doc["run_id"]);
    let r = &results[0];
    assert_ne!(r["status"], "unsupported", "{:#}", r["reason"]);
    if r["status"] == "failed" {
        // The OOM killer took the emulator: said, not lost.
        assert!(r["reason"].as_str().is_some_and(|w| !w.is_empty()), "{r:#}");
        return;
    }
    assert!(
        r["counters"].as_array().is_some_and(|c| c
            .iter()
            .any(|s| is_reclaim(s["name"].as_str().unwrap_or("")))),
        "{r:#}"
    );
}

/// An `oslab run` that makes a swap area and measures for a minute, once its area is on; and
/// the area's name.
fn started_with_swap(lab: &Lab) -> (std::process::Child, String) {
    let child = lab
        .command(&[
            "run",
            "syscall.getppid",
            "--swap",
            "32M",
            // A precision it cannot reach: it measures until the budget is spent.
            "--precision",
            "0.0001",
            "--budget",
            "60",
            "--repeat",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("oslab starts");
    let name = format!("oslab-swap-{}", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !oslab_swap_left().iter().any(|l| l.contains(&name)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the swap never came on"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child, name)
}

#[test]
fn ctrl_c_removes_the_swap_area() {
    if !root_or_skip("--swap") {
        return;
    }
    let lab = Lab::new();
    let turn = common::measuring_turn();
    let (mut child, name) = started_with_swap(&lab);
    // SAFETY: signalling the oslab this test started, not yet reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().expect("reaped");
    drop(turn);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(
        !oslab_swap_left().iter().any(|l| l.contains(&name)),
        "{:?}",
        oslab_swap_left()
    );
}

#[test]
fn a_swap_area_a_killed_oslab_left_is_removed_by_the_next_run() {
    if !root_or_skip("--swap") {
        return;
    }
    let lab = Lab::new();
    let turn = common::measuring_turn();
    let (mut child, name) = started_with_swap(&lab);
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    assert!(
        oslab_swap_left().iter().any(|l| l.contains(&name)),
        "a killed oslab cannot remove its swap"
    );
    // The next run, still in this test's turn so that no other run sweeps the area first.
    let next = lab
        .command(&["run", "syscall.getppid", "--quick", "--budget", "0.1"])
        .output()
        .expect("oslab runs");
    drop(turn);
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{stderr}");
    assert!(
        !oslab_swap_left().iter().any(|l| l.contains(&name)),
        "{:?}",
        oslab_swap_left()
    );
    // Any oslab that starts removes the areas of dead ones, machine-wide: another test suite
    // running on this machine at the same time may have been that next run (seen while a
    // second `cargo test` ran beside this one). Gone is what counts; who said so varies.
    if !stderr.contains("removed the swap area") {
        eprintln!("the swap area was removed by another oslab on this machine first");
    }
}

#[test]
fn bad_swap_sizes_are_one_line_errors() {
    let lab = Lab::new();
    for (arg, needle) in [
        ("1X", "--swap 1X"),
        ("4K", "from 16M"),
        ("zram:", "zram:1G"),
    ] {
        lab.oslab(&["run", "syscall.getppid", "--quick", "--swap", arg])
            .assert_user_error(&[needle]);
    }
    lab.oslab(&["run", "syscall.getppid", "--load", "memory:headroom=x"])
        .assert_user_error(&["memory:headroom=PERCENT"]);
}

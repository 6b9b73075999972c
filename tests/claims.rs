//! Every experiment's claims are true: `oslab trace --experiment NAME --json` of one pass of
//! its measured loop matches the system calls it claims (`ExperimentInfo::syscalls` at the
//! traced parameters, and its `syscalls` counter expectation), for every experiment `oslab
//! list --json` names at its defaults (with the `--quick` sizes), and at the parameter values that change which calls
//! the loop makes (the libc entry, a partner thread, sync and cache modes, a dynamic program,
//! a file with data…). Outside CI a kernel that refuses tracing is one line and the test
//! returns; under `CI=true` it must trace, except under user-mode emulation (qemu-user
//! implements neither bpf nor perf_event_open), where the one line must say so. An experiment
//! unsupported here exits 0 with one line on stderr. No timing is asserted.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::time::Instant;

use common::*;
use serde_json::Value;

fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// Operations in a traced pass: enough that a partner's last start-up calls (three
/// close_range, say, when it is still starting as the pass begins) stay below 0.01 per op.
const OPS: &str = "1000";
/// For the slow loops (a device flush or a new process per op).
const FEW_OPS: &str = "300";

/// The parameter values, beside the defaults, that change which calls a loop makes (each
/// pass also takes the `--quick` values of the parameters it does not set).
const VARIANTS: &[(&str, &[&str])] = &[
    ("syscall.clock_gettime", &["entry=libc"]),
    ("syscall.getpid", &["entry=libc"]),
    ("syscall.read", &["entry=libc"]),
    ("syscall.write", &["entry=libc"]),
    ("syscall.fstat", &["entry=libc"]),
    ("syscall.fstat", &["entry=inline"]),
    ("syscall.stat", &["entry=libc"]),
    ("syscall.open_close", &["entry=libc"]),
    ("ctxswitch.pipe", &["placement=cross"]),
    ("ctxswitch.futex", &["mode=threads"]),
    ("ctxswitch.futex", &["placement=cross"]),
    ("ctxswitch.yield", &["competitor=same_cpu"]),
    ("ipc.pipe_bandwidth", &["size=1M"]),
    ("ipc.pipe_bandwidth", &["capacity=4K"]),
    ("ipc.pipe_bandwidth", &["size=1", "placement=cross"]),
    ("ipc.unix_latency", &["placement=cross"]),
    ("process.fork_exec", &["target=dynamic"]),
    ("process.posix_spawn", &["target=dynamic"]),
    ("unixbench.spawn", &["forker=worker"]),
    ("pagefault.anon", &["populate=madv_populate_write"]),
    ("pagefault.prefault_sweep", &["batch=16"]),
    ("pagefault.prefault_sweep", &["batch=512", "order=random"]),
    ("pagefault.file", &["cache=cold"]),
    ("pagefault.file", &["map=private", "access=write"]),
    ("mmap.access", &["backing=malloc"]),
    (
        "mmap.access",
        &["backing=file_shared", "prepare=memset_msync"],
    ),
    ("fs.write", &["sync=end"]),
    ("fs.write", &["sync=each"]),
    ("fs.write", &["sync=direct"]),
    ("fs.copy", &["sync=end"]),
    ("fs.random_write", &["sync=end"]),
    ("fs.read", &["cache=cold"]),
    ("fs.random_read", &["cache=cold"]),
    ("fs.create", &["filesize=1K"]),
    ("fs.delete", &["filesize=1K"]),
];

/// The parameters a default pass of `experiment` (its `oslab list --json` entry) is traced
/// with: each parameter's `--quick` value where it has one. Those only shrink the region, the
/// file or the fileset a pass works on (a 1 GiB file is 16 MiB), which changes no call a
/// loop makes, and keep the test's disk use small: CI's temporary directory may have less
/// than 1 GiB free.
fn default_params(experiment: &Value) -> Vec<String> {
    experiment["params"]
        .as_array()
        .expect("params")
        .iter()
        .filter_map(|p| Some(format!("{}={}", p["name"].as_str()?, p["quick"].as_str()?)))
        .collect()
}

fn ops_for(name: &str) -> &'static str {
    match name {
        "fs.fsync" | "fs.mkdir_rmdir" | "process.fork_exec" | "process.posix_spawn" => FEW_OPS,
        "unixbench.spawn" | "unixbench.execl" => FEW_OPS,
        // Each op runs a shell script: ten processes and thousands of calls.
        "unixbench.shell" => "20",
        _ => OPS,
    }
}

/// Experiments whose loop runs the system's own programs (UnixBench's shell scripts: /bin/sh,
/// sort, od, grep, tee, wc): what those programs call is theirs and differs between systems,
/// so only the calls the experiment claims are checked (each must be made), not the rest.
const FOREIGN_PROGRAMS: &[&str] = &["unixbench.shell"];

/// The differences of `doc` that count: all of them, or only the claimed calls' for an
/// experiment in [`FOREIGN_PROGRAMS`].
fn counted_differences(name: &str, doc: &Value) -> Vec<String> {
    let all = doc["differences"].as_array().cloned().unwrap_or_default();
    all.iter()
        .filter_map(Value::as_str)
        .filter(|d| !FOREIGN_PROGRAMS.contains(&name) || d.contains(" is claimed but made "))
        .map(str::to_string)
        .collect()
}

/// What one traced pass showed.
enum Traced {
    Refused,
    Unsupported,
    Checked(Value),
}

/// `oslab trace --experiment NAME --json --ops N --param P...`, in the lab's directory (the
/// file experiments work there).
fn trace(lab: &Lab, name: &str, params: &[String]) -> Traced {
    let mut args = vec![
        "trace",
        "--experiment",
        name,
        "--json",
        "--ops",
        ops_for(name),
    ];
    for p in params {
        args.extend(["--param", p]);
    }
    let out = lab
        .command(&args)
        .current_dir(lab.dir())
        .output()
        .expect("start oslab");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = format!("oslab {}\nstderr: {stderr}", args.join(" "));
    if let Some(emulator) = unsupported_under_emulation("tracing") {
        assert_eq!(
            out.status.code(),
            Some(2),
            "refused under {emulator}: {shown}"
        );
        assert!(
            stderr.starts_with("oslab: cannot trace here: unsupported under emulation"),
            "{shown}"
        );
        assert_eq!(stderr.lines().count(), 1, "{shown}");
        return Traced::Refused;
    }
    if out.status.code() == Some(2) && stderr.contains("cannot trace here") {
        assert!(!in_ci(), "CI=true, and tracing is refused\n{shown}");
        assert_eq!(stderr.lines().count(), 1, "{shown}");
        return Traced::Refused;
    }
    if out.status.code() == Some(0) && stdout.trim().is_empty() {
        assert_eq!(stderr.lines().count(), 1, "one line says why: {shown}");
        assert!(stderr.contains("unsupported here"), "{shown}");
        return Traced::Unsupported;
    }
    assert!(
        matches!(out.status.code(), Some(0 | 5)),
        "{:?}: {shown}",
        out.status
    );
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {shown}"));
    Traced::Checked(doc)
}

/// The calls of a document at 0.01 per op or more, for a failure's message.
fn busy_calls(doc: &Value) -> Vec<String> {
    doc["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter(|c| c["per_op"].as_f64().unwrap_or(0.0) >= 0.01)
        .map(|c| format!("{} {:.3} ({})", c["syscall"], c["per_op"], c["process"]))
        .collect()
}

#[test]
fn every_experiment_makes_the_calls_it_claims_at_every_parameter_that_changes_them() {
    let lab = Lab::new();
    let list = lab.oslab(&["list", "--json"]);
    list.assert_code(0);
    let listed = list.json();
    let experiments = listed.as_array().expect("experiments");
    assert!(experiments.len() >= 41, "{listed}");
    let mut passes: Vec<(String, Vec<String>)> = experiments
        .iter()
        .map(|e| {
            let name = e["name"].as_str().expect("a name");
            (name.to_string(), default_params(e))
        })
        .collect();
    for (name, params) in VARIANTS {
        let listed = experiments.iter().find(|e| e["name"] == *name);
        let listed = listed.unwrap_or_else(|| panic!("{name} is listed"));
        let mut all: Vec<String> = default_params(listed)
            .into_iter()
            .filter(|d| !params.iter().any(|p| same_param(d, p)))
            .collect();
        all.extend(params.iter().map(|p| p.to_string()));
        passes.push((name.to_string(), all));
    }
    let started = Instant::now();
    let mut differ = Vec::new();
    for (name, params) in &passes {
        let doc = match trace(&lab, name, params) {
            Traced::Refused => return,
            Traced::Unsupported => continue,
            Traced::Checked(doc) => doc,
        };
        assert_eq!(doc["experiment"], name.as_str(), "{doc}");
        let differences = counted_differences(name, &doc);
        if !differences.is_empty() {
            differ.push(format!(
                "{}: {differences:?}\n    calls: {}",
                doc["configuration"],
                busy_calls(&doc).join(", ")
            ));
        }
    }
    eprintln!(
        "{} passes traced in {:.1} s",
        passes.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        differ.is_empty(),
        "{} of {} traced passes differ from their claims:\n  {}",
        differ.len(),
        passes.len(),
        differ.join("\n  ")
    );
}

/// `size=16M` and `size=1M` set the same parameter.
fn same_param(a: &str, b: &str) -> bool {
    a.split('=').next() == b.split('=').next()
}

/// `oslab list` shows the claims at the defaults; its JSON names them.
#[test]
fn list_shows_the_claims_at_the_defaults() {
    let lab = Lab::new();
    let list = lab.oslab(&["list", "--json"]);
    list.assert_code(0);
    let doc = list.json();
    let syscalls = |name: &str| -> Vec<String> {
        let e = doc
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"));
        serde_json::from_value(e["syscalls"].clone()).expect("a list of names")
    };
    assert_eq!(syscalls("fs.create"), ["openat", "close"]);
    assert_eq!(syscalls("fs.write"), ["pwrite64"]);
    assert_eq!(syscalls("ipc.pipe_bandwidth"), ["write", "read"]);
    assert_eq!(syscalls("pagefault.cow"), Vec::<String>::new());
    assert_eq!(syscalls("syscall.fstat"), ["fstat"]);
    let text = lab.oslab(&["list"]);
    text.assert_code(0);
    assert!(
        text.stdout
            .contains("system calls: clone, set_robust_list, exit_group, wait4"),
        "{}",
        text.stdout
    );
}

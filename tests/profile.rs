//! `oslab profile` end to end: the real binary measures and profiles syscall.getppid, prints
//! where its time goes, writes a flame graph that is valid SVG with the kernel's frames in
//! it, keeps the profile through export and import, and draws the differential graph of two
//! runs. Where the kernel refuses perf events the command must say so in one line; under
//! `CI=true` that is a failure, since CI's machine allows cpu-clock sampling, except under
//! user-mode emulation (qemu-user does not implement perf_event_open), where the one line
//! must say so.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// `oslab profile syscall.getppid` in one process, quick; `None` (with the refusal checked)
/// where this machine refuses sampling outside CI, or under emulation.
fn profile(lab: &Lab, out: &Path, extra: &[&str]) -> Option<Value> {
    let out_dir = out.display().to_string();
    let mut args = vec![
        "profile",
        "syscall.getppid",
        "--quick",
        "--repeat",
        "1",
        "-o",
        &out_dir,
        "--json",
    ];
    args.extend_from_slice(extra);
    let run = lab.oslab(&args);
    if unsupported_under_emulation("sampling").is_some() {
        run.assert_user_error(&[
            "cannot profile here: unsupported under emulation",
            "perf_event_open",
        ]);
        return None;
    }
    if run.code == Some(2) && run.stderr.contains("cannot profile here") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true, and sampling is refused\n{run}"
        );
        run.assert_user_error(&["cannot profile here"]);
        return None;
    }
    run.assert_code(0);
    assert!(run.stderr.contains("stored as run"), "{run}");
    assert!(run.stderr.contains("flame graph: "), "{run}");
    Some(run.json())
}

/// The frames of a flame graph (its `<title>` texts), after checking it is well-formed XML
/// with an svg root.
fn svg_frames(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read the SVG");
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut frames = Vec::new();
    let (mut root, mut in_title) = (None, false);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Start(e)) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).to_string();
                root.get_or_insert(name.clone());
                in_title = name == "title";
            }
            Ok(quick_xml::events::Event::Text(t)) if in_title => {
                frames.push(String::from_utf8_lossy(t.as_ref()).to_string());
            }
            Ok(quick_xml::events::Event::End(_)) => in_title = false,
            Ok(quick_xml::events::Event::Eof) => break,
            Err(e) => panic!("{} is not well-formed XML: {e}", path.display()),
            _ => {}
        }
    }
    assert_eq!(root.as_deref(), Some("svg"), "{}", path.display());
    frames
}

#[test]
fn profile_names_the_kernel_frames_and_draws_them() {
    let lab = Lab::new();
    let out = lab.dir().join("flames");
    let Some(doc) = profile(&lab, &out, &[]) else {
        return;
    };
    let configs = doc["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 2, "entry=call and entry=inline: {doc}");
    for c in configs {
        assert!(c["samples"].as_u64().unwrap() > 20, "{c}");
        let stacks = c["stacks"].to_string();
        assert!(
            stacks.contains("do_syscall_64_[k]"),
            "the syscall entry: {c}"
        );
        assert!(
            stacks.contains("sys_getppid_[k]"),
            "the syscall's own function: {c}"
        );
        let parts = c["parts"].as_object().expect("parts");
        let total: f64 = parts.values().map(|v| v.as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-9, "the parts add up: {c}");
        assert!(parts["entry/exit"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["profiled_ns_per_op"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["unprofiled_ns_per_op"].as_f64().unwrap() > 0.0, "{c}");
    }
    let graphs = doc["flame_graphs"].as_array().expect("flame_graphs");
    assert_eq!(graphs.len(), 2);
    for g in graphs {
        let frames = svg_frames(Path::new(g.as_str().unwrap()));
        assert!(
            frames.iter().any(|f| f.contains("sys_getppid")),
            "{g}: {frames:?}"
        );
    }

    // The text form: the functions and the table of parts.
    let text = lab.oslab(&["profile", "--runs", "1", "-o", &out.display().to_string()]);
    text.assert_code(0);
    assert!(text.stdout.contains("do_syscall_64"), "{text}");
    assert!(text.stdout.contains("Where the time goes"), "{text}");
    assert!(text.stdout.contains("entry/exit"), "{text}");
}

#[test]
fn a_profile_survives_export_and_import_and_two_runs_differ_in_colour() {
    let lab = Lab::new();
    let out = lab.dir().join("flames");
    let Some(first) = profile(&lab, &out, &["--param", "entry=inline"]) else {
        return;
    };
    let second = profile(&lab, &out, &["--param", "entry=inline"]).expect("sampled once");

    let export = lab.dir().join("run1.json");
    lab.oslab(&["export", "1", "-o", &export.display().to_string()])
        .assert_code(0);
    let other = Lab::new();
    other
        .oslab(&["import", &export.display().to_string()])
        .assert_code(0);
    let again = other.oslab(&[
        "profile",
        "--runs",
        "1",
        "--json",
        "-o",
        &out.display().to_string(),
    ]);
    again.assert_code(0);
    assert_eq!(
        again.json()["configurations"][0]["stacks"],
        first["configurations"][0]["stacks"],
        "the imported profile is the exported one"
    );

    let diff = lab.oslab(&[
        "profile",
        "--runs",
        "1",
        "2",
        "--json",
        "-o",
        &out.display().to_string(),
    ]);
    diff.assert_code(0);
    let doc = diff.json();
    let graph = doc["configurations"][0]["flame_graph"]
        .as_str()
        .expect("a differential graph");
    assert!(graph.ends_with("-diff.svg"), "{doc}");
    let svg = std::fs::read_to_string(graph).unwrap();
    svg_frames(Path::new(graph));
    // Two runs never sample alike: something grew (red) or shrank (blue).
    assert!(
        svg.contains("rgb(255,") || svg.contains(",255)"),
        "the differential graph is coloured"
    );
    assert!(second["configurations"][0]["samples"].as_u64().unwrap() > 0);

    // `compare --profile` draws the same graph beside the comparison.
    let flames = lab.dir().join("compared");
    let compared = lab.oslab(&[
        "compare",
        "1",
        "2",
        "--json",
        &format!("--profile={}", flames.display()),
    ]);
    compared.assert_code(0);
    let doc = compared.json();
    let graph = doc["profiles"][0]["flame_graph"].as_str().expect("a graph");
    assert!(graph.starts_with(&flames.display().to_string()), "{doc}");
    svg_frames(Path::new(graph));
    assert!(doc["profiles"][0]["functions"].is_array(), "{doc}");
    let text = lab.oslab(&[
        "compare",
        "1",
        "2",
        &format!("--profile={}", flames.display()),
    ]);
    text.assert_code(0);
    assert!(text.stdout.contains("Where the time moved"), "{text}");

    // A run measured without profiling has nothing to set against.
    lab.oslab(&[
        "run",
        "syscall.getppid",
        "--quick",
        "--param",
        "entry=inline",
    ])
    .assert_code(0);
    lab.oslab(&[
        "profile",
        "--runs",
        "1",
        "3",
        "-o",
        &out.display().to_string(),
    ])
    .assert_user_error(&["runs 1 and 3 have no profiled configuration in common"]);
    lab.oslab(&["compare", "1", "3", "--profile"])
        .assert_user_error(&["runs 1 and 3 have no profiled configuration in common"]);
}

#[test]
fn mistakes_are_one_line_each() {
    let lab = Lab::new();
    lab.oslab(&["profile", "syscall.getppid", "--frequency", "0"])
        .assert_user_error(&["--frequency 0", "samples per second"]);
    lab.oslab(&["profile", "syscall.getppid", "--frequency", "100000000"])
        .assert_user_error(&["--frequency", "perf_event_max_sample_rate"]);
    lab.oslab(&["profile", "syscall.getppid", "--seconds=-1"])
        .assert_user_error(&["--seconds -1"]);
    lab.oslab(&["profile", "nosuch.experiment"])
        .assert_user_error(&["nosuch.experiment", "oslab list"]);
    lab.oslab(&["profile", "--runs", "7"])
        .assert_user_error(&["oslab run"]);
    lab.oslab(&["profile", "--runs", "1", "2", "3"])
        .assert_user_error(&["unknown experiment or family '3'"]);
    // A stored run that `oslab run` made, without profiles.
    lab.oslab(&["run", "syscall.getppid", "--quick"])
        .assert_code(0);
    lab.oslab(&["profile", "--runs", "1"])
        .assert_user_error(&["run 1 has no profiles", "oslab profile EXPERIMENT"]);
}

//! Samples taken in a slow kernel phase of the host are left out of every figure, end to end:
//! a real `--repeat 3` run, exported, its samples rewritten so that the second process took
//! its first half in a slow phase (a null call of 260 ns against 170, the figure 150 ns against
//! 100), imported beside a copy without the phase. `show` gives the same median for both and
//! says the samples were left out; `compare` calls the two the same; a copy marked as run
//! under a user-mode emulator keeps them, and so does an experiment that stays in user space.
//! A run whose null calls were slower than an earlier run's throughout says so when it ends
//! and whenever it is shown, and a later run's interval is not floored by it.
//! No timing is asserted: the figures are the ones written.

// The kernel canary is read on Unix's systems; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use common::Lab;
use serde_json::{Value, json};

/// The exported run with every sample rewritten: steady (figure about 100 ns, null call about
/// 170), or, with `phase`, the second process's first half slow (150 ns, 260). The results say
/// they ran natively unless `emulator` names one: this test runs under qemu-user too, where
/// the real run says so, and a run under an emulator leaves nothing out.
fn rewritten(export: &Value, uuid: &str, phase: bool, emulator: Option<&str>) -> Value {
    rewritten_share(export, uuid, if phase { 0.5 } else { 0.0 }, emulator)
}

/// As [`rewritten`], the second process's first `share` of its samples slow (1.0: all of
/// them, a phase as long as the process).
fn rewritten_share(export: &Value, uuid: &str, share: f64, emulator: Option<&str>) -> Value {
    let mut doc = export.clone();
    doc["run"]["uuid"] = json!(uuid);
    let results = doc["run"]["results"].as_array_mut().expect("results");
    assert_eq!(results.len(), 3, "three processes");
    for (k, result) in results.iter_mut().enumerate() {
        result["emulation"] = json!(emulator);
        let samples = result["samples"].as_array_mut().expect("samples");
        // A phase wants samples enough on both sides of it; a quick run stops at its precision,
        // with as few as 13 a process in CI: its samples are copied in turn up to 24 (every
        // figure is rewritten below).
        let measured = samples.len();
        assert!(measured > 0, "a process without samples");
        for i in measured..SAMPLES {
            let copy = samples[i % measured].clone();
            samples.push(copy);
        }
        let slow_until = (samples.len() as f64 * share) as usize;
        for (i, s) in samples.iter_mut().enumerate() {
            let slow = k == 1 && i < slow_until;
            let (figure, call) = if slow {
                (150.0, 260.0)
            } else {
                (100.0 + (i % 5) as f64 * 0.1, 170.0 + (i % 3) as f64)
            };
            set_figure(s, figure);
            s["counters"]["host.kernel_canary_ns"] =
                json!({ "value": call, "raw": call as u64, "enabled_ns": 0, "running_ns": 0 });
        }
    }
    doc
}

/// Give sample `s` the time per operation `figure`, its wall time moved to match: what the
/// sample's timer and loop overheads subtract from it stays as measured.
fn set_figure(s: &mut Value, figure: f64) {
    let number = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("a number: {v}"));
    let ops = number(&s["ops"]);
    let subtracted = number(&s["elapsed_ns"]) - number(&s["ns_per_op"]) * ops;
    s["elapsed_ns"] = json!(figure * ops + subtracted);
    s["ns_per_op"] = json!(figure);
}

/// The exported run under `uuid` with every sample's null call halved: an earlier run at a
/// level the next real run reads as a slow kernel phase of the host.
fn halved_canaries(export: &Value, uuid: &str) -> Value {
    let mut fast = export.clone();
    fast["run"]["uuid"] = json!(uuid);
    for result in fast["run"]["results"].as_array_mut().expect("results") {
        for s in result["samples"].as_array_mut().expect("samples") {
            let canary = &mut s["counters"]["host.kernel_canary_ns"];
            let half = canary["value"].as_f64().expect("a kernel canary") / 2.0;
            canary["value"] = json!(half);
            canary["raw"] = json!(half as u64);
        }
    }
    fast
}

fn import(lab: &Lab, doc: &Value, name: &str) {
    let file = lab.dir().join(name);
    std::fs::write(&file, doc.to_string()).unwrap();
    lab.oslab(&["import", file.to_str().unwrap()])
        .assert_code(0);
}

/// The run every test here measures: `syscall.getppid entry=call`, three processes, quick.
const GETPPID: [&str; 7] = [
    "run",
    "syscall.getppid",
    "--param",
    "entry=call",
    "--repeat",
    "3",
    "--quick",
];

/// The fewest samples a rewritten process has.
const SAMPLES: usize = 24;

/// A real run of [`GETPPID`], exported as JSON.
fn measured_and_exported() -> Value {
    measured_and_exported_as(&GETPPID)
}

/// A real run of `args`, exported as JSON.
fn measured_and_exported_as(args: &[&str]) -> Value {
    let lab = Lab::new();
    lab.oslab_as_given(args).assert_code(0);
    lab.oslab(&["export", "1", "--format", "json"]).json()
}

#[test]
fn a_slow_kernel_phase_is_left_out_of_show_and_compare() {
    let export = measured_and_exported();

    let other = Lab::new();
    import(
        &other,
        &rewritten(&export, "00000000-0000-4000-8000-000000000001", false, None),
        "steady.json",
    );
    import(
        &other,
        &rewritten(&export, "00000000-0000-4000-8000-000000000002", true, None),
        "phased.json",
    );
    let emulator = "user-mode emulation of aarch64 on an x86_64 kernel";
    import(
        &other,
        &rewritten(
            &export,
            "00000000-0000-4000-8000-000000000003",
            true,
            Some(emulator),
        ),
        "emulated.json",
    );

    let configuration = |id: &str| {
        let doc = other.oslab(&["show", id, "--json"]).json();
        doc["configurations"][0].clone()
    };
    let (steady, phased) = (configuration("1"), configuration("2"));
    // Under an emulator the null call times the emulator: the same phase stays in.
    let emulated = configuration("3");
    assert_eq!(
        emulated["host"]["kernel_phase"]["left_out"], false,
        "{emulated:#}"
    );
    assert_eq!(
        emulated["host"]["kernel_phase"]["left_out_samples"], 0,
        "{emulated:#}"
    );
    let phase = &phased["host"]["kernel_phase"];
    assert_eq!(phase["in_phases"], true, "{phased:#}");
    assert_eq!(phase["left_out"], true, "{phased:#}");
    assert!(phase["slow_samples"].as_u64().unwrap() >= 8, "{phase}");
    assert_eq!(steady["host"]["kernel_phase"]["left_out"], false);
    // The second process's median is its steady samples' (about 100), not 125.
    let medians = phased["process_medians"].as_array().unwrap();
    assert!(
        medians.iter().all(|m| m.as_f64().unwrap() < 101.0),
        "{medians:?}"
    );
    assert_eq!(phased["median"], steady["median"], "{phased:#}");

    let text = other.oslab(&["show", "2"]);
    text.assert_code(0);
    let words = text.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("1 of 1 configurations leave out their samples taken in slow kernel phases"),
        "{text}"
    );
    let slow = phase["slow_samples"].as_u64().unwrap();
    let read = phase["samples"].as_u64().unwrap();
    assert!(
        words.contains(&format!("slow kernel phases: {slow} of its {read} samples")),
        "the configuration's note: {text}"
    );
    assert_eq!(phase["left_out_samples"], phase["slow_samples"], "{phase}");
    assert!(
        words.contains(&format!("{slow} are left out")),
        "the configuration's note: {text}"
    );

    let cmp = other.oslab(&["compare", "1", "2", "--json"]).json();
    let pair = &cmp["results"][0];
    assert_eq!(pair["verdict"], "no_change", "{pair:#}");
    assert!(
        (pair["ratio"].as_f64().unwrap() - 1.0).abs() < 1e-9,
        "{pair:#}"
    );
}

/// A process taken wholly in a slow phase is left out whole where two others stand without
/// it: `show` lists its median apart and the figure is the other two's.
#[test]
fn a_process_wholly_in_a_slow_phase_is_left_out_whole() {
    let export = measured_and_exported();
    let other = Lab::new();
    import(
        &other,
        &rewritten_share(&export, "00000000-0000-4000-8000-000000000011", 0.0, None),
        "steady.json",
    );
    import(
        &other,
        &rewritten_share(&export, "00000000-0000-4000-8000-000000000012", 1.0, None),
        "whole.json",
    );
    let doc = other.oslab(&["show", "2", "--json"]).json();
    let whole = &doc["configurations"][0];
    assert_eq!(whole["processes"], 3, "{whole:#}");
    assert_eq!(
        whole["left_out_process_medians"],
        json!([150.0]),
        "{whole:#}"
    );
    let medians = whole["process_medians"].as_array().unwrap();
    assert_eq!(medians.len(), 2, "{whole:#}");
    assert!(
        medians.iter().all(|m| m.as_f64().unwrap() < 101.0),
        "{medians:?}"
    );
    assert_eq!(whole["host"]["kernel_phase"]["left_out_processes"], 1);
    let steady = other.oslab(&["show", "1", "--json"]).json();
    let steady_median = steady["configurations"][0]["median"].as_f64().unwrap();
    let whole_median = whole["median"].as_f64().unwrap();
    assert!(
        (whole_median - steady_median).abs() < 0.25,
        "{whole_median} {steady_median}"
    );

    let text = other.oslab(&["show", "2"]);
    text.assert_code(0);
    let words = text.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("left out, wholly in a slow kernel phase: 150 ns"),
        "{text}"
    );
    assert!(
        words.contains("with one process taken wholly in them, left out whole"),
        "{text}"
    );
    // The report draws it as a dashed dot beside the two that stand, and its table names it.
    let page = other.dir().join("whole.html");
    other
        .oslab(&["report", "2", "-o", page.to_str().unwrap()])
        .assert_code(0);
    let html = std::fs::read_to_string(&page).expect("the report");
    assert!(
        html.contains(r#"<circle class="process left-out""#),
        "a dashed dot for the process left out"
    );
    assert!(
        html.contains("left out, wholly in a slow kernel phase: 150 ns"),
        "the samples column"
    );

    // The same samples of an experiment that stays in user space: a kernel phase does not
    // move its figures, and every process stands.
    let mut user = rewritten_share(&export, "00000000-0000-4000-8000-000000000013", 1.0, None);
    for result in user["run"]["results"].as_array_mut().unwrap() {
        result["experiment"] = json!("syscall.function_call");
        result["params"] = json!({});
    }
    import(&other, &user, "user.json");
    let doc = other.oslab(&["show", "3", "--json"]).json();
    let user = &doc["configurations"][0];
    assert_eq!(user["experiment"], "syscall.function_call", "{user:#}");
    assert_eq!(user["left_out_process_medians"], json!([]), "{user:#}");
    assert_eq!(user["process_medians"].as_array().unwrap().len(), 3);
    let phase = &user["host"]["kernel_phase"];
    assert_eq!(phase["left_out"], false, "{phase}");
    assert_eq!(phase["in_phases"], true, "{phase}");
}

/// A run whose kernel entry was slower through it than in this machine's earlier runs says so
/// when it ends, and `compare` marks it against the earlier run: the earlier run is a real one
/// imported with its null calls halved. Under a user-mode emulator the canary times the
/// emulator, and nothing is said.
#[test]
fn a_run_slower_to_enter_the_kernel_than_the_earlier_runs_says_so() {
    let export = measured_and_exported();
    let emulated = export["run"]["results"][0]["emulation"].is_string();
    let lab = Lab::new();
    import(
        &lab,
        &halved_canaries(&export, "00000000-0000-4000-8000-000000000021"),
        "fast.json",
    );
    let out = lab.oslab_as_given(&GETPPID);
    out.assert_code(0);
    let words = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = words
        .contains("longer or more in 1 of 1 configurations than in this machine's earlier runs");
    assert_eq!(said, !emulated, "{out}");
    if said {
        assert!(words.contains("syscall.getppid"), "{out}");
    }
    // Stored with the run: `show` and the report say it again whenever they show it.
    let show = lab.oslab(&["show", "2"]);
    show.assert_code(0);
    let shown = show.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        shown.contains("longer or more in 1 of 1 configurations than in this machine's"),
        said,
        "{show}"
    );
    let doc = lab.oslab(&["show", "2", "--json"]).json();
    let ratio = doc["configurations"][0]["kernel_slower_than_earlier"].as_f64();
    assert_eq!(ratio.is_some(), said, "{doc}");
    assert!(ratio.is_none_or(|r| r >= 1.2), "{ratio:?}");
    let html = lab.dir().join("report.html");
    lab.oslab(&["report", "2", "-o", html.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.contains("<p class=\"note slow-run\">"), said);
    // `compare` marks the pair †, whatever its verdict, with the same ratio; so does the
    // report's comparison table, the note on hover.
    let cmp = lab.oslab(&["compare", "1", "2", "--json"]).json();
    let marked = &cmp["results"][0]["kernel_slower_than_earlier"];
    assert_eq!(marked[0], Value::Null, "{cmp}");
    assert_eq!(marked[1].as_f64(), ratio, "{cmp}");
    let text = lab.oslab(&["compare", "1", "2"]);
    text.assert_code(0);
    let words = text.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        words.contains("† syscall.getppid entry=call: B measured it in a slow kernel phase"),
        said,
        "{text}"
    );
    lab.oslab(&["report", "1", "2", "-o", html.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(&html).unwrap();
    // The slow run's note, on hover of its mark. The mark alone is not enough: it also notes a
    // kernel canary that moved with the figure, as the halved one does against B wherever the
    // runs' figures differ enough, which an emulator's noise can make them.
    assert_eq!(
        page.contains("<span class=\"host-mark\"")
            && page.contains("B measured it in a slow kernel phase"),
        said
    );
}

/// A configuration whose processes sat in a slow kernel phase against this machine's earlier
/// runs gets more processes, up to the most, where the interval alone would have stopped it:
/// the earlier run is a real one imported with its null calls halved, so every new process
/// reads as slow. Under a user-mode emulator nothing is slow.
#[test]
fn a_configuration_slow_against_the_earlier_runs_gets_more_processes() {
    // A target of ±50%: three processes reach it, unless the host's phase adds the fourth
    // (each stops at its least samples, about 0.25 s, far within a budget of 4 s). The earlier
    // run measured alike (the same settings), its null calls halved.
    let adaptive = [
        "run",
        "syscall.getppid",
        "--param",
        "entry=call",
        "--budget",
        "4",
        "--precision",
        "50",
        "--max-processes",
        "4",
    ];
    let export = measured_and_exported_as(&adaptive);
    let emulated = export["run"]["results"][0]["emulation"].is_string();
    let lab = Lab::new();
    import(
        &lab,
        &halved_canaries(&export, "00000000-0000-4000-8000-000000000041"),
        "fast.json",
    );
    lab.oslab_as_given(&adaptive).assert_code(0);
    let doc = lab.oslab(&["show", "2", "--json"]).json();
    let config = &doc["configurations"][0];
    let processes = config["process_medians"].as_array().expect("medians").len()
        + config["left_out_process_medians"]
            .as_array()
            .map_or(0, Vec::len);
    let stopped = config["stopped_adding"].as_str();
    if emulated {
        // The canary times the emulator: nothing is slow, and the widths alone decide.
        assert_eq!(
            config["kernel_slower_than_earlier"],
            Value::Null,
            "{config:#}"
        );
    } else {
        assert_eq!((processes, stopped), (4, Some("most")), "{config:#}");
    }
}

#[test]
fn an_earlier_run_wholly_in_a_slow_phase_floors_no_later_interval() {
    let export = measured_and_exported();
    let lab = Lab::new();
    import(
        &lab,
        &rewritten(&export, "00000000-0000-4000-8000-000000000031", false, None),
        "steady.json",
    );
    // Every sample of every process slow: 150 ns, a null call of 260 against the other's 170.
    let mut slow = rewritten(&export, "00000000-0000-4000-8000-000000000032", false, None);
    for result in slow["run"]["results"].as_array_mut().expect("results") {
        for s in result["samples"].as_array_mut().expect("samples") {
            set_figure(s, 150.0);
            s["counters"]["host.kernel_canary_ns"] =
                json!({ "value": 260.0, "raw": 260, "enabled_ns": 0, "running_ns": 0 });
        }
    }
    import(&lab, &slow, "slow.json");
    lab.oslab_as_given(&GETPPID).assert_code(0);
    let run = lab.oslab(&["export", "3", "--format", "json"]).json();
    let result = &run["run"]["results"][0];
    let medians = |key: &str| -> Vec<f64> {
        result[key]
            .as_array()
            .map(|a| a.iter().map(|m| m.as_f64().expect("a median")).collect())
            .unwrap_or_default()
    };
    let steady = medians("earlier_medians");
    assert!(
        steady.len() == 1 && (99.0..101.0).contains(&steady[0]),
        "{steady:?}"
    );
    assert_eq!(medians("earlier_slow_medians"), [150.0]);
    let show = lab.oslab(&["show", "3"]);
    show.assert_code(0);
    let words = show.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("earlier runs in slow phases: 1 of this machine's 2 earlier runs")
            && words.contains("its median 150 ns"),
        "{show}"
    );
}

//! A comparison across operating systems: a real run here, the same run as another system's
//! (its export with the environment's `os` changed, as a FreeBSD machine would have stored
//! it), imported and compared. The system difference leads, and the experiments the two
//! systems perform differently are marked with how each does.

// "Here" is Linux: the run's experiments include Linux's vDSO read. On FreeBSD, .ci/freebsd
// compares a real FreeBSD run with a Linux one; tests/windows.rs runs on Windows.
#![cfg(target_os = "linux")]

mod common;

use common::Lab;
use serde_json::Value;

#[test]
fn a_run_of_another_system_is_compared_with_its_different_paths_marked() {
    let lab = Lab::new();
    lab.oslab(&[
        "run",
        "syscall.getppid_libc",
        "syscall.vdso_clock_gettime",
        "--quick",
        "--budget",
        "0.2",
        "--tag",
        "linux",
    ])
    .assert_code(0);
    let file = lab.dir().join("run.json");
    let file_arg = file.to_str().unwrap();
    lab.oslab(&["export", "linux", "-o", file_arg])
        .assert_code(0);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["run"]["environment"]["os"] = "freebsd".into();
    doc["run"]["environment"]["os_release"] = "FreeBSD 14.1-RELEASE".into();
    doc["run"]["tag"] = "bsd".into();
    // An edited run keeping the original's identity is refused: it would be two runs of one
    // UUID. Without it, it is another run.
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    lab.oslab(&["import", file_arg])
        .assert_user_error(&["other content", "remove the document's \"uuid\""]);
    doc["run"].as_object_mut().unwrap().remove("uuid");
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    lab.oslab(&["import", file_arg]).assert_code(0);

    let out = lab.oslab(&["compare", "linux", "bsd"]);
    out.assert_code(0);
    let text = &out.stdout;
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.starts_with("A ran on Linux, B on FreeBSD")),
        "the systems are said first: {text}"
    );
    let diff = text
        .lines()
        .skip_while(|l| !l.starts_with("Environment differences"))
        .nth(2)
        .expect("an environment diff");
    assert!(
        diff.trim_start().starts_with("os "),
        "the OS leads the diff: {text}"
    );
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {text}"))
            .to_string()
    };
    // The vDSO read is Linux's only: on FreeBSD the experiment does not run as such.
    assert!(row("syscall.vdso_clock_gettime").ends_with('≠'), "{text}");
    assert!(!row("syscall.getppid_libc").contains('≠'), "{text}");
    assert!(
        text.contains("≠ syscall.vdso_clock_gettime: A (Linux) clock_gettime in the vDSO; B (FreeBSD) not enabled"),
        "{text}"
    );
    assert!(text.contains("≠ marks 1 performed differently"), "{text}");

    let json = lab.oslab(&["compare", "linux", "bsd", "--json"]).json();
    assert_eq!(json["systems"]["a"], "linux");
    assert_eq!(json["systems"]["b"], "freebsd");
    let results = json["results"].as_array().unwrap();
    let implementation = |name: &str| {
        results
            .iter()
            .find(|r| r["experiment"] == name)
            .map(|r| r["implementation"].clone())
            .unwrap()
    };
    assert_eq!(
        implementation("syscall.vdso_clock_gettime")["differs"],
        true
    );
    assert_eq!(
        implementation("syscall.getppid_libc")["a"],
        implementation("syscall.getppid_libc")["b"]
    );
    assert_eq!(implementation("syscall.getppid_libc")["differs"], false);

    // The HTML report says the same: the systems over the table, ≠ on the row, how on hover.
    let page = lab.dir().join("report.html");
    lab.oslab(&["report", "linux", "bsd", "-o", page.to_str().unwrap()])
        .assert_code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("A ran on Linux, B on FreeBSD"),
        "systems line"
    );
    let marks = html.matches("class=\"other-path\"").count();
    assert_eq!(marks, 1, "one row marked ≠");
    assert!(
        html.contains("title=\"A (Linux): clock_gettime in the vDSO; B (FreeBSD): not enabled")
    );

    // Two runs of one system: no systems, no marks.
    let same = lab.oslab(&["compare", "linux", "linux", "--json"]).json();
    assert!(same["systems"].is_null());
    assert!(
        same["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("implementation").is_none())
    );
}

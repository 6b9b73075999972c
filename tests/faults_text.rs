//! What oslab prints of strings it did not write (issue 31): foreign text cannot drive the
//! terminal, a 100 kB name is cut, a numeric tag can be named (`tag:1`), and a `--db` that
//! is not a regular file is refused before SQLite puts a journal beside it.

#![cfg(unix)]

mod common;

use common::{Lab, lab_with_a_run};
use serde_json::Value;

/// The sequences of the drill: retitle the window, turn the text red, NUL, right-to-left.
const EVIL: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[31mRED\u{0}\u{202e}";

fn assert_inert(what: &str, text: &str) {
    for c in ['\u{1b}', '\u{7}', '\u{0}', '\u{202e}'] {
        assert!(!text.contains(c), "{what} prints {c:?} raw:\n{text}");
    }
}

/// An export whose tag and CPU model are `EVIL`, as another machine could send it.
fn evil_export(lab: &Lab) -> std::path::PathBuf {
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["run"]["tag"] = EVIL.into();
    doc["run"]["environment"]["cpu_model"] = EVIL.into();
    doc["run"]["environment"]["hostname"] = format!("two\nlines{EVIL}").into();
    doc["run"].as_object_mut().unwrap().remove("uuid");
    let file = lab.dir().join("evil.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    file
}

#[test]
fn foreign_text_cannot_drive_the_terminal() {
    let lab = lab_with_a_run();
    let file = evil_export(&lab);
    let import = lab.oslab(&["import", file.to_str().unwrap()]);
    import.assert_code(0);
    for args in [
        vec!["show", "2"],
        vec!["show", "--list"],
        vec!["compare", "1", "2"],
    ] {
        let out = lab.oslab(&args);
        out.assert_code(0);
        assert_inert(&format!("{args:?}"), &out.stdout);
        assert!(out.stdout.contains("\\u001b]0;PWNED"), "{args:?}: {out}");
    }
    // A newline in a stored name does not break a table: one line per run.
    let list = lab.oslab(&["show", "--list"]);
    assert_eq!(list.stdout.lines().count(), 3, "{list}");
    assert!(list.stdout.contains("two\\u000alines"), "{list}");
    // JSON keeps meaning the same string.
    let json = lab.oslab(&["show", "2", "--json"]);
    json.assert_code(0);
    assert_inert("show --json", &json.stdout);
    assert_eq!(json.json()["tag"], EVIL, "{json}");

    // A name given on the command line is escaped in the error that echoes it.
    let line = lab
        .oslab(&["run", "bad\u{1b}[31m\u{202e}name"])
        .assert_user_error(&["unknown experiment", "bad\\u001b[31m\\u202ename"]);
    assert_inert("an error", &line);
    let line = lab
        .oslab(&["show", "x\u{1b}]0;PWNED\u{7}"])
        .assert_user_error(&["no run", "\\u001b"]);
    assert_inert("an error", &line);
}

#[test]
fn an_error_cuts_a_huge_name() {
    let lab = Lab::new();
    let huge = "x".repeat(100_000);
    let line = lab.oslab(&["run", &huge]).assert_user_error(&[
        "unknown experiment",
        "… (100000 bytes)",
        "oslab list",
    ]);
    assert!(line.len() < 400, "{} bytes: {line}", line.len());
    let line = lab
        .oslab(&["--bogus", &huge])
        .assert_user_error(&["--bogus"]);
    assert!(line.len() < 400, "{} bytes", line.len());
}

#[test]
fn a_tag_that_is_a_number_is_named_tag_colon() {
    let lab = lab_with_a_run();
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["run"]["tag"] = "1".into();
    doc["run"].as_object_mut().unwrap().remove("uuid");
    let file = lab.dir().join("tagged.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    lab.oslab(&["import", file.to_str().unwrap()])
        .assert_code(0);
    // `1` is run 1 (untagged); `tag:1` the run tagged "1", which is run 2.
    let by_id = lab.oslab(&["show", "1", "--json"]);
    assert_eq!(by_id.json()["run_id"], 1, "{by_id}");
    let by_tag = lab.oslab(&["show", "tag:1", "--json"]);
    by_tag.assert_code(0);
    assert_eq!(by_tag.json()["run_id"], 2, "{by_tag}");
    assert_eq!(by_tag.json()["tag"], "1", "{by_tag}");
    lab.oslab(&["compare", "1", "tag:1"]).assert_code(0);
    lab.oslab(&["show", "tag:2"])
        .assert_user_error(&["no run tag:2"]);
    let help = lab.oslab(&["show", "--help"]);
    assert!(help.stdout.contains("tag:1"), "{help}");
}

#[test]
fn a_database_path_that_is_not_a_file_is_refused_untouched() {
    let lab = lab_with_a_run();
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["run"].as_object_mut().unwrap().remove("uuid");
    let file = lab.dir().join("doc.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let journal = std::path::Path::new("/dev/null-journal");
    let journal_before = journal.exists();
    let dir = lab.dir().join("a-directory");
    std::fs::create_dir(&dir).unwrap();
    for db in [std::path::Path::new("/dev/null"), dir.as_path()] {
        for args in [
            vec!["import", file.to_str().unwrap()],
            vec!["show", "--list"],
        ] {
            lab.oslab_with(db, &args, &[]).assert_user_error(&[
                &db.display().to_string(),
                "not a regular file",
                "--db",
            ]);
        }
    }
    if !journal_before {
        assert!(!journal.exists(), "SQLite made {}", journal.display());
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing in the directory"
    );
}

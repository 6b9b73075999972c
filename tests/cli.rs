//! The commands that do not measure (`env`, `list`) and every mistake a user can make on the
//! command line or with the database: exit code 2, one line naming the fix, nothing on stdout,
//! and a database file oslab refuses is left byte-for-byte as it was.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::path::Path;

use common::{Lab, kernel_release};
use serde_json::Value;

// --- oslab env ---

#[test]
fn env_text_mentions_the_kernel_release() {
    let lab = Lab::new();
    let out = lab.oslab(&["env"]);
    out.assert_code(0);
    let release = kernel_release();
    assert!(
        out.stdout.contains(&release),
        "`oslab env` mentions the kernel release {release}\n{out}"
    );
    assert!(!lab.db().exists(), "`oslab env` does not create a database");
}

#[test]
fn env_json_lists_the_software_counters() {
    let lab = Lab::new();
    let out = lab.oslab(&["env", "--json"]);
    out.assert_code(0);
    let doc = out.json();
    assert_eq!(
        doc["environment"]["kernel_release"].as_str(),
        Some(kernel_release().as_str())
    );
    let counters = doc["environment"]["counters"]
        .as_object()
        .unwrap_or_else(|| panic!("environment.counters is an object\n{out}"));
    for name in ["task-clock", "page-faults", "context-switches"] {
        assert!(
            counters.contains_key(name),
            "environment.counters has {name}: {:?}",
            counters.keys().collect::<Vec<_>>()
        );
    }
    for (name, c) in counters {
        let supported = c["supported"]
            .as_bool()
            .unwrap_or_else(|| panic!("counter {name}: `supported` is a bool: {c}"));
        if !supported {
            assert!(
                c["reason"].as_str().is_some_and(|r| !r.trim().is_empty()),
                "unsupported counter {name} says why: {c}"
            );
        }
    }
    let source = doc["clock"]["source"].as_str().expect("clock.source");
    assert!(common::CLOCK_SOURCES.contains(&source), "{source}");
}

// --- oslab list ---

fn list_json(lab: &Lab) -> Vec<Value> {
    let out = lab.oslab(&["list", "--json"]);
    out.assert_code(0);
    out.json()
        .as_array()
        .unwrap_or_else(|| panic!("`list --json` is an array\n{out}"))
        .clone()
}

#[test]
fn list_json_describes_every_experiment() {
    let lab = Lab::new();
    let list = list_json(&lab);
    let names: Vec<&str> = list.iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(names.len(), list.len(), "every entry has a name");
    for name in common::SYSCALL_EXPERIMENTS
        .iter()
        .chain(&["synthetic.spin"])
    {
        assert!(names.contains(name), "list --json has {name}: {names:?}");
    }
    for e in &list {
        let name = e["name"].as_str().unwrap();
        assert!(e["subtract_loop_overhead"].is_boolean(), "{name}: {e}");
        assert!(e["default_suite"].is_boolean(), "{name}: {e}");
        assert!(e["params"].is_array(), "{name}: {e}");
    }
    let read = list.iter().find(|e| e["name"] == "syscall.read").unwrap();
    assert!(
        read["params"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "size"),
        "syscall.read has a size parameter: {read}"
    );
    let synthetic = list.iter().find(|e| e["name"] == "synthetic.spin").unwrap();
    assert_eq!(synthetic["default_suite"], false, "{synthetic}");
}

/// The text block of one experiment in `oslab list`: its name line up to the next name line.
fn list_block<'a>(text: &'a str, name: &str, all: &[&str]) -> &'a str {
    let start = text
        .find(&format!("  {name}  "))
        .unwrap_or_else(|| panic!("`oslab list` names {name}:\n{text}"));
    let rest = &text[start + name.len() + 2..];
    let end = all
        .iter()
        .filter(|other| **other != name)
        .filter_map(|other| rest.find(&format!("  {other}  ")))
        .min()
        .unwrap_or(rest.len());
    &text[start..start + name.len() + 2 + end]
}

#[test]
fn list_names_every_experiment_its_parameters_and_loop_subtraction() {
    let lab = Lab::new();
    let list = list_json(&lab);
    let out = lab.oslab(&["list"]);
    out.assert_code(0);
    let text = &out.stdout;
    let names: Vec<&str> = list.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for e in &list {
        let name = e["name"].as_str().unwrap();
        let block = list_block(text, name, &names);
        for p in e["params"].as_array().unwrap() {
            let param = p["name"].as_str().unwrap();
            assert!(
                block.contains(param),
                "`oslab list` shows parameter {param} under {name}:\n{block}"
            );
        }
        let says = if e["subtract_loop_overhead"] == true {
            "empty loop subtracted"
        } else {
            "empty loop not subtracted"
        };
        assert!(
            block.contains(says),
            "`oslab list` says {says:?} for {name}:\n{block}"
        );
        if e["default_suite"] == false {
            assert!(
                block.contains("not in the default suite"),
                "`oslab list` says {name} is hidden:\n{block}"
            );
        }
    }
    let read = list_block(text, "syscall.read", &names);
    assert!(read.contains("size"), "{read}");
    assert!(read.contains("empty loop subtracted"), "{read}");
    assert!(out.stderr.is_empty(), "nothing on stderr\n{out}");
}

// --- user errors on the command line ---

#[test]
fn unknown_experiment_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "nosuch"])
        .assert_user_error(&["nosuch", "oslab list"]);
}

#[test]
fn unknown_family_member_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.nosuch"])
        .assert_user_error(&["syscall.nosuch", "oslab list"]);
}

#[test]
fn bad_parameter_value_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.read", "--param", "size=abc"])
        .assert_user_error(&["size=abc", "expected"]);
}

#[test]
fn out_of_range_parameter_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.read", "--param", "size=2G"])
        .assert_user_error(&["size=2G", "expected"]);
}

#[test]
fn parameter_no_selected_experiment_has_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.function_call", "--param", "size=4"])
        .assert_user_error(&["size", "oslab list"]);
}

#[test]
fn malformed_parameter_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.read", "--param", "size"])
        .assert_user_error(&["NAME=VALUE"]);
}

#[test]
fn cpu_outside_the_affinity_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.getppid", "--cpu", "999"])
        .assert_user_error(&["--cpu 999", "may use CPUs"]);
}

#[test]
fn cpu_that_is_not_a_list_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.getppid", "--cpu", "x"])
        .assert_user_error(&["--cpu x", "may use CPUs"]);
}

#[test]
fn zero_precision_is_a_user_error() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.getppid", "--precision", "0"])
        .assert_user_error(&["--precision", "percentage"]);
}

#[test]
fn passes_outside_a_timed_suite_or_range_are_user_errors() {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.getppid", "--passes", "3"])
        .assert_user_error(&["--passes 3", "--suite unixbench"]);
    lab.oslab(&["run", "--suite", "mmap-lab", "--passes", "3"])
        .assert_user_error(&["--passes 3", "mmap-lab", "drop --passes"]);
    lab.oslab(&["run", "--suite", "unixbench", "--passes", "0"])
        .assert_user_error(&["--passes 0", "1 to 100"]);
}

// --- user errors with the database ---

#[test]
fn show_on_a_missing_database_is_a_user_error() {
    let lab = Lab::new();
    for args in [
        &["show"][..],
        &["show", "--json"],
        &["show", "--list"],
        &["show", "1"],
    ] {
        lab.oslab(args).assert_user_error(&["oslab run", "--db"]);
        assert!(
            !lab.db().exists(),
            "`oslab {args:?}` does not create a database"
        );
    }
}

/// A small run that creates the lab's database.
fn create_database(lab: &Lab) {
    lab.oslab(&["run", "syscall.function_call", "--quick", "--budget", "0.3"])
        .assert_code(0);
    assert!(lab.db().exists());
}

#[test]
fn show_of_a_run_that_does_not_exist_is_a_user_error() {
    let lab = Lab::new();
    create_database(&lab);
    lab.oslab(&["show", "999"])
        .assert_user_error(&["999", "oslab show --list"]);
    lab.oslab(&["show", "999", "--json"])
        .assert_user_error(&["999", "oslab show --list"]);
    lab.oslab(&["show", "no-such-tag"])
        .assert_user_error(&["no-such-tag", "oslab show --list"]);
}

/// `run` and `show` both refuse the file at `db` with a user error, and leave it unchanged.
fn assert_refused_and_untouched(lab: &Lab, db: &Path, needles: &[&str]) {
    let before = std::fs::read(db).expect("read the database file");
    let dir_before = dir_listing(db.parent().unwrap());
    for args in [
        &["run", "syscall.getppid", "--quick", "--budget", "0.3"][..],
        &[
            "run",
            "syscall.getppid",
            "--quick",
            "--budget",
            "0.3",
            "--json",
        ],
        &["show"],
        &["show", "--json"],
        &["show", "--list"],
        &["show", "1"],
    ] {
        let out = lab.oslab_with(db, args, &[]);
        out.assert_user_error(needles);
        assert_eq!(
            std::fs::read(db).expect("read the database file"),
            before,
            "`oslab {args:?}` left {} byte-for-byte as it was",
            db.display()
        );
        assert_eq!(
            dir_listing(db.parent().unwrap()),
            dir_before,
            "`oslab {args:?}` left no journal or other file beside {}",
            db.display()
        );
    }
}

fn dir_listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the directory")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_text_file_as_database_is_refused_and_left_untouched() {
    let lab = Lab::new();
    let db = lab.dir().join("notes.txt");
    let text: String = (0..100)
        .map(|i| format!("line {i}: this is a text file, not a database\n"))
        .collect();
    std::fs::write(&db, text).unwrap();
    assert_refused_and_untouched(&lab, &db, &["notes.txt", "not an SQLite database", "--db"]);
}

#[test]
fn a_short_text_file_as_database_is_refused_and_left_untouched() {
    let lab = Lab::new();
    let db = lab.dir().join("short.txt");
    std::fs::write(&db, "hello\n").unwrap();
    assert_refused_and_untouched(&lab, &db, &["short.txt", "--db"]);
}

#[test]
fn a_database_from_a_newer_schema_is_refused_and_left_untouched() {
    let lab = Lab::new();
    create_database(&lab);
    {
        let conn = rusqlite::Connection::open(lab.db()).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    assert_refused_and_untouched(&lab, lab.db(), &["newer oslab", "99", "upgrade oslab"]);
}

#[test]
fn a_foreign_sqlite_database_is_refused_and_left_untouched() {
    let lab = Lab::new();
    let db = lab.dir().join("recipes.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE recipes (name TEXT NOT NULL, minutes INTEGER);
             INSERT INTO recipes VALUES ('bread', 180), ('soup', 40);",
        )
        .unwrap();
    }
    assert_refused_and_untouched(&lab, &db, &["recipes.db", "another program", "--db"]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let count: i64 = conn
        .query_row("SELECT count(*) FROM recipes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 2, "the foreign data is still there");
}

#[test]
fn database_in_a_missing_directory_is_a_user_error_and_creates_nothing() {
    let lab = Lab::new();
    let missing = lab.dir().join("no-such-dir");
    let db = missing.join("oslab.db");
    lab.oslab_with(&db, &["run", "syscall.getppid", "--quick"], &[])
        .assert_user_error(&["no-such-dir", "does not exist", "--db"]);
    lab.oslab_with(&db, &["show"], &[])
        .assert_user_error(&["no-such-dir", "--db"]);
    assert!(!missing.exists(), "no directory was created");
}

// --- completions, manual page, colour ---

#[test]
fn completions_and_man_page_come_from_the_parser() {
    let lab = Lab::new();
    let bash = lab.oslab(&["completions", "bash"]);
    assert_eq!(bash.code, Some(0));
    assert!(bash.stdout.contains("_oslab()"), "{}", bash.stdout);
    for word in ["run", "compare", "report", "maps"] {
        assert!(bash.stdout.contains(word), "bash completion lacks {word}");
    }
    for shell in ["zsh", "fish"] {
        let out = lab.oslab(&["completions", shell]);
        assert_eq!(out.code, Some(0), "{shell}");
        assert!(out.stdout.contains("oslab"), "{shell}");
    }
    let man = lab.oslab(&["man"]);
    assert_eq!(man.code, Some(0));
    assert!(man.stdout.contains(".TH oslab 1"), "{}", man.stdout);
    assert!(man.stdout.contains("completions"));
}

#[test]
fn man_writes_a_page_per_command_into_a_directory() {
    let lab = Lab::new();
    let dir = lab.dir().join("man1");
    std::fs::create_dir(&dir).expect("create the man directory");
    let dir_arg = dir.to_str().expect("UTF-8 path");
    let out = lab.oslab(&["man", "-o", dir_arg]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", out.stdout);
    for page in ["oslab.1", "oslab-run.1", "oslab-maps.1", "oslab-man.1"] {
        let text = std::fs::read_to_string(dir.join(page)).expect(page);
        assert!(text.contains(".TH"), "{page}");
    }
    assert!(
        !dir.join("oslab-worker.1").exists(),
        "hidden commands get no page"
    );
    let missing = lab.dir().join("no-such-dir");
    lab.oslab(&["man", "-o", missing.to_str().expect("UTF-8 path")])
        .assert_user_error(&["no-such-dir", "not a directory"]);
}

#[test]
fn unknown_shell_and_bad_color_are_user_errors() {
    let lab = Lab::new();
    lab.oslab(&["completions", "tcsh"])
        .assert_user_error(&["tcsh", "oslab completions --help"]);
    lab.oslab(&["--color", "sometimes", "list"])
        .assert_user_error(&["sometimes", "--color"]);
}

#[test]
fn a_missing_argument_is_named_with_its_command_s_help() {
    let lab = Lab::new();
    lab.oslab(&["export"]).assert_user_error(&[
        "required arguments were not provided: <RUN>",
        "`oslab export --help`",
    ]);
    lab.oslab(&["history"])
        .assert_user_error(&["<EXPERIMENT>", "`oslab history --help`"]);
}

#[test]
fn color_never_and_no_color_print_no_escape() {
    let lab = Lab::new();
    let never = lab.oslab(&["--color", "never", "--help"]);
    assert_eq!(never.code, Some(0));
    assert!(!never.stdout.contains('\u{1b}'));
    let no_color = lab.oslab_with(lab.db(), &["--help"], &[("NO_COLOR", "1")]);
    assert!(!no_color.stdout.contains('\u{1b}'));
    let always = lab.oslab(&["--color", "always", "--help"]);
    assert!(
        always.stdout.contains('\u{1b}'),
        "--color always colours the help"
    );
}

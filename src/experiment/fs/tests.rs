use super::*;

fn params(info: &ExperimentInfo, given: &[(&str, &str)]) -> Params {
    let given: Vec<(String, String)> = given
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    Params::resolve(info.name, info.params, &given).unwrap()
}

fn ctx(dir: &Path) -> Context {
    Context {
        work_dir: Some(dir.to_path_buf()),
        ..Context::default()
    }
}

fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oslab-fs-test-")
        .tempdir()
        .unwrap()
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn span_and_expected_blocks() {
    assert_eq!(pages_spanned(64 << 20, 4096, 4096), 1.0);
    assert_eq!(pages_spanned(64 << 20, 256, 4096), 1.0);
    assert_eq!(pages_spanned(64 << 20, 8192, 4096), 2.0);
    let s = pages_spanned(1 << 20, 3000, 4096);
    assert!(s > 1.0 && s < 2.0, "{s}");
}

#[test]
fn transfers_wrap_around_and_leave_their_files() {
    let t = tmp();
    let c = ctx(t.path());
    for (info, given) in [
        (&WRITE, vec![("size", "64K"), ("bufsize", "4096")]),
        (
            &WRITE,
            vec![("size", "64K"), ("bufsize", "1000"), ("sync", "end")],
        ),
        (&READ, vec![("size", "64K"), ("bufsize", "256")]),
        (&COPY, vec![("size", "64K"), ("bufsize", "1024")]),
        (&RANDOM_READ, vec![("size", "64K")]),
        (&RANDOM_WRITE, vec![("size", "64K"), ("bufsize", "256")]),
    ] {
        let p = params(info, &given);
        match (info.setup)(&p, &c) {
            Ok(mut r) => r.run(100).unwrap_or_else(|e| panic!("{}: {e}", info.name)),
            Err(SetupError::Unsupported(why)) => assert!(!why.is_empty()),
            Err(SetupError::Failed(e)) => panic!("{}: {e}", info.name),
        }
        assert!(!(info.expectations)(&p).is_empty());
    }
    let len = std::fs::metadata(t.path().join("data")).unwrap().len();
    assert_eq!(len, 64 << 10, "rewritten in place, never grown");
}

#[test]
fn create_keeps_the_population() {
    let t = tmp();
    let p = params(&CREATE, &[("files", "10"), ("filesize", "1K")]);
    let mut r = setup_create(&p, &ctx(t.path())).unwrap();
    let files = t.path().join("files");
    assert_eq!(entries(&files), 10);
    r.prepare(25).unwrap();
    assert_eq!(
        entries(&files),
        0,
        "prepare made room for the 25 files the batch creates"
    );
    r.run(25).unwrap();
    assert_eq!(entries(&files), 25, "each op created one file");
    r.prepare(5).unwrap();
    r.run(5).unwrap();
    assert_eq!(
        entries(&files),
        10,
        "back to the population once batches are smaller"
    );
    let first = std::fs::read_dir(&files)
        .unwrap()
        .flatten()
        .map(|e| e.file_name());
    let mut names: Vec<String> = first.map(|n| n.to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names[0], "f00000030", "the oldest were removed");
    assert_eq!(
        std::fs::metadata(files.join("f00000039")).unwrap().len(),
        1024
    );
}

#[test]
fn delete_removes_exactly_what_prepare_made() {
    let t = tmp();
    let p = params(&DELETE, &[("files", "10"), ("filesize", "1K")]);
    let mut r = setup_delete(&p, &ctx(t.path())).unwrap();
    let files = t.path().join("files");
    assert_eq!(entries(&files), 10, "the files that stay");
    r.prepare(7).unwrap();
    assert_eq!(entries(&files), 17);
    r.run(7).unwrap();
    assert_eq!(entries(&files), 10, "each op removed one file");
    assert!(
        r.run(1).is_err(),
        "nothing prepared: an error, not a silent no-op"
    );
}

#[test]
fn metadata_routines_run() {
    for info in [&STAT, &OPEN_CLOSE, &RENAME, &MKDIR_RMDIR] {
        let t = tmp();
        let mut r = (info.setup)(&Params::default(), &ctx(t.path())).unwrap();
        r.run(5).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        if info.name == "fs.rename" {
            assert!(
                t.path().join("b").exists(),
                "5 renames: a → b → a → b → a → b"
            );
        }
        if info.name == "fs.mkdir_rmdir" {
            assert!(
                !t.path().join("d").exists(),
                "the directory was removed again"
            );
        }
    }
}

#[test]
fn preflight_refuses_what_does_not_fit() {
    let t = tmp();
    let c = ctx(t.path());
    let huge = params(&WRITE, &[("size", "1T")]);
    let e = preflight_one(&huge, &c).unwrap_err();
    assert!(
        matches!(
            e,
            Refusal::Room {
                shrink: Some("size"),
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("free"), "{e}");
    let big_buf = params(&WRITE, &[("size", "64K"), ("bufsize", "1M")]);
    let e = preflight_one(&big_buf, &c).unwrap_err();
    assert!(
        matches!(
            e,
            Refusal::Exceeds {
                param: "bufsize",
                limit: "size",
                ..
            }
        ),
        "{e}"
    );
    assert!(preflight_one(&params(&WRITE, &[("size", "64K")]), &c).is_ok());
}

#[test]
fn registered_with_ladder_headliners() {
    for e in EXPERIMENTS {
        assert!(
            super::super::find(e.name).is_some(),
            "{} registered",
            e.name
        );
        assert!(e.work_dir && e.default_suite, "{}", e.name);
    }
    let ladder: Vec<&str> = EXPERIMENTS
        .iter()
        .filter(|e| e.ladder)
        .map(|e| e.name)
        .collect();
    assert_eq!(ladder, ["fs.write", "fs.create", "fs.fsync"]);
}

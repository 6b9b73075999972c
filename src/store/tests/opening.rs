//! Opening, migrations and refusals of files that are not ours.

use super::*;

// --- opening, migrations and refusals ---

#[test]
fn new_database_gets_our_header_and_reopening_does_not_migrate_again() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).expect("create");
    assert_eq!(store.migrated_from(), Some(0));
    let (app_id, version): (i32, i64) = store
        .conn
        .query_row(
            "SELECT (SELECT application_id FROM pragma_application_id), \
                    (SELECT user_version FROM pragma_user_version)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("header");
    assert_eq!((app_id, version), (APPLICATION_ID, SCHEMA_VERSION));
    drop(store);

    let before = std::fs::read(&path).expect("read db");
    let store = Store::open(&path).expect("reopen");
    assert_eq!(store.migrated_from(), None);
    drop(store);
    let store = Store::open_existing(&path).expect("reopen existing");
    assert_eq!(store.migrated_from(), None);
    drop(store);
    assert_eq!(
        std::fs::read(&path).expect("read db"),
        before,
        "reopening wrote to the file"
    );
}

#[test]
fn a_schema_1_database_is_migrated_and_keeps_its_runs() {
    let (_dir, path) = temp_db();
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(crate::store::schema::MIGRATIONS[0])
            .unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO environments (hash, json) VALUES ('0', '{\"os\":\"linux\",\"arch\":\"x86_64\"}')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO runs (started_at, oslab_version, settings, clock_source, clock_reason, \
             environment_id) VALUES (1.0, '0.1.0', '{}', 'tsc', 'invariant', 1)",
            [],
        )
        .unwrap();
    }
    let mut store = Store::open(&path).expect("open migrates");
    assert_eq!(store.migrated_from(), Some(1));
    let old = store.load_run(1).expect("the schema-1 run reads back");
    assert!(old.results.is_empty());
    // Schema 6: the old run has the identity of its fingerprint, the one `import` gives the
    // same run exported before schema 6.
    assert_eq!(
        Some(old.uuid.clone()),
        crate::model::identity::run_uuid_from_fingerprint(&crate::store::fingerprint(&old))
    );
    store
        .add_result(1, &pagefault_result())
        .expect("a result with facts");
    let back = store.load_run(1).unwrap();
    assert_eq!(back.results[0].facts.len(), 2);
    assert_eq!(
        back.results[0].label.as_deref(),
        Some("anonymous, memory load")
    );
    let mut remembered = syscall_result();
    remembered.earlier_medians = vec![120.5, 118.0];
    store
        .add_result(1, &remembered)
        .expect("a result with earlier runs");
    let back = store.load_run(1).unwrap();
    assert_eq!(back.results[0].earlier_medians, Vec::<f64>::new());
    assert_eq!(back.results[1].earlier_medians, vec![120.5, 118.0]);
    // Schema 4: the migrated database holds profiles.
    assert!(
        back.results[1].profile.is_some(),
        "a profile after migration"
    );
    assert_eq!(back.results[1].profile, remembered.profile);
    // Schema 7: the earlier runs left out for a slow phase.
    assert_eq!(back.results[0].earlier_slow_medians, Vec::<f64>::new());
    assert_eq!(
        back.results[1].earlier_slow_medians,
        remembered.earlier_slow_medians
    );
    assert!(!remembered.earlier_slow_medians.is_empty());
    assert_eq!(SCHEMA_VERSION, 7);
}

#[test]
fn empty_file_is_initialised() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"").expect("create empty file");
    let mut store = Store::open(&path).expect("open empty file");
    assert_eq!(store.migrated_from(), Some(0));
    let id = store.begin_run(&run(None, 1.0, vec![])).expect("begin_run");
    assert_eq!(store.latest_run_id().expect("latest"), Some(id));
}

#[test]
fn text_file_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    let text = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&path, &text).expect("write text file");

    let err = Store::open(&path).expect_err("a text file must be refused");
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err:?}");
    assert_one_line_naming(&err, &path);
    let err = Store::open_existing(&path).expect_err("a text file must be refused");
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err:?}");

    assert_eq!(std::fs::read(&path).expect("read back"), text);
}

#[test]
fn short_text_file_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"hello\n").expect("write text file");
    let err = Store::open(&path).expect_err("a text file must be refused");
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err:?}");
    assert_eq!(std::fs::read(&path).expect("read back"), b"hello\n");
}

#[test]
fn foreign_sqlite_database_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    {
        let conn = Connection::open(&path).expect("create foreign db");
        conn.execute_batch(
            "CREATE TABLE contacts (name TEXT, phone TEXT);
             INSERT INTO contacts VALUES ('Ada', '555');",
        )
        .expect("fill foreign db");
    }
    let before = std::fs::read(&path).expect("read db");

    let err = Store::open(&path).expect_err("a foreign database must be refused");
    assert!(
        matches!(
            err,
            StoreError::Foreign {
                application_id: 0,
                objects: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_one_line_naming(&err, &path);
    assert_eq!(std::fs::read(&path).expect("read db"), before);
}

#[test]
fn database_claimed_by_another_application_is_refused_even_without_tables() {
    let (_dir, path) = temp_db();
    {
        let conn = Connection::open(&path).expect("create db");
        conn.pragma_update(None, "application_id", 0x4750_4B47) // "GPKG"
            .expect("set application_id");
    }
    let before = std::fs::read(&path).expect("read db");
    let err = Store::open(&path).expect_err("another application's file must be refused");
    assert!(
        matches!(
            err,
            StoreError::Foreign {
                application_id: 0x4750_4B47,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&path).expect("read db"), before);
}

#[test]
fn newer_schema_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    {
        let conn = Connection::open(&path).expect("create db");
        conn.execute_batch("CREATE TABLE runs (id INTEGER PRIMARY KEY, future TEXT);")
            .expect("create table");
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .expect("set application_id");
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .expect("set user_version");
    }
    let before = std::fs::read(&path).expect("read db");

    for err in [
        Store::open(&path).expect_err("a newer schema must be refused"),
        Store::open_existing(&path).expect_err("a newer schema must be refused"),
    ] {
        match &err {
            StoreError::TooNew {
                found, supported, ..
            } => assert_eq!((*found, *supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION)),
            other => panic!("expected TooNew, got {other:?}"),
        }
        assert_one_line_naming(&err, &path);
        assert!(err.to_string().contains(&format!(
            "written by a newer oslab (schema {}, this build reads up to {}); upgrade oslab or \
             use another --db",
            SCHEMA_VERSION + 1,
            SCHEMA_VERSION
        )));
    }
    assert_eq!(std::fs::read(&path).expect("read db"), before);
}

#[test]
fn open_in_a_missing_directory_names_the_directory() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let missing = dir.path().join("no-such-dir");
    let path = missing.join("oslab.db");
    let err = Store::open(&path).expect_err("the directory is missing");
    match &err {
        StoreError::NoDirectory { dir, .. } => assert_eq!(dir, &missing),
        other => panic!("expected NoDirectory, got {other:?}"),
    }
    assert_one_line_naming(&err, &missing);
    assert!(!missing.exists(), "open must not create directories");
}

#[test]
fn open_existing_on_a_missing_file_says_so_and_creates_nothing() {
    let (_dir, path) = temp_db();
    let err = Store::open_existing(&path).expect_err("no file there");
    assert!(matches!(err, StoreError::Missing { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "no database at {}; run `oslab run` first or pass --db",
            path.display()
        )
    );
    assert!(!path.exists());
}

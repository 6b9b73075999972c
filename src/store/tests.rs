//! Tests of the results database against real SQLite files in temporary directories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rusqlite::Connection;
use tempfile::TempDir;

use super::schema::{APPLICATION_ID, SCHEMA_VERSION};
use super::{Store, StoreError};
use crate::model::env::{Cache, CounterAvailability, Environment};
use crate::model::{
    Calibration, Check, ClockInfo, CounterStatus, CounterValue, ExperimentResult, Fact, LoadRecord,
    ProbeCount, Run, RunSettings, Rusage, Sample, Status, StopReason,
};

// --- fixtures ---

fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("oslab.db");
    (dir, path)
}

fn environment(hostname: &str) -> Environment {
    let mut env = Environment {
        cpu_model: Some("Test CPU @ 2.40GHz".into()),
        cpu_vendor: Some("GenuineIntel".into()),
        logical_cpus: Some(8),
        cpu_mhz: Some(2400.125),
        caches: vec![Cache {
            level: 1,
            kind: "Data".into(),
            size_bytes: 32 * 1024,
            line_bytes: Some(64),
            ways: Some(8),
            shared_cpus: Some("0-1".into()),
        }],
        tsc_invariant: Some(true),
        page_size: Some(4096),
        os: "linux".into(),
        kernel_release: Some("6.8.0-test".into()),
        arch: "x86_64".into(),
        hostname: Some(hostname.into()),
        perf_event_paranoid: Some(2),
        oslab_version: "0.1.0".into(),
        ..Environment::default()
    };
    env.vulnerabilities
        .insert("spectre_v2".into(), "Mitigation: Retpolines".into());
    env.counters.insert(
        "cycles".into(),
        CounterAvailability {
            supported: true,
            reason: None,
        },
    );
    env.counters.insert(
        "dtlb_load_misses".into(),
        CounterAvailability {
            supported: false,
            reason: Some("ENOENT: no such event on this PMU".into()),
        },
    );
    env
}

fn sample(i: u64, with_counters: bool) -> Sample {
    let mut counters = BTreeMap::new();
    if with_counters {
        counters.insert(
            "cycles".into(),
            CounterValue {
                value: Some(1.0e6 + i as f64 * 0.1),
                raw: 1_000_000 + i,
                enabled_ns: 500_000,
                running_ns: 250_000,
            },
        );
        // Never scheduled during the sample: no value, but the times are kept.
        counters.insert(
            "l1d_read_misses".into(),
            CounterValue {
                value: None,
                raw: 0,
                enabled_ns: 500_000,
                running_ns: 0,
            },
        );
    }
    Sample {
        ops: 10_000 + i,
        elapsed_ns: 123_456.789 + i as f64,
        ns_per_op: 0.1 + 1.0 / 3.0 + i as f64,
        rusage: Rusage {
            utime_us: 100 + i as i64,
            stime_us: 7,
            maxrss_kb: 2048,
            minflt: -1,
            majflt: 0,
            inblock: 8,
            oublock: 16,
            nvcsw: 2,
            nivcsw: i64::MAX,
        },
        partner: i.is_multiple_of(2).then(|| Rusage {
            nvcsw: 10 + i as i64,
            minflt: 3,
            ..Rusage::default()
        }),
        children: (i == 1).then(|| Rusage {
            minflt: 250,
            utime_us: 4000,
            maxrss_kb: 1024,
            ..Rusage::default()
        }),
        counters,
    }
}

fn syscall_result() -> ExperimentResult {
    ExperimentResult {
        experiment: "syscall.getpid".into(),
        params: BTreeMap::from([("mode".into(), "raw".into()), ("n".into(), "1".into())]),
        unit: "ns/call".into(),
        status: Status::Ok,
        reason: None,
        stop_reason: Some(StopReason::Precision),
        calibration: Calibration {
            ops_per_sample: 10_000,
            timer_overhead_ns: 21.5,
            loop_overhead_ns: Some(0.25),
            baseline_ns: Some(12.5),
            warmup_ns: 1.0e7,
            cpus: vec![2, 3],
        },
        samples: (0..5).map(|i| sample(i, true)).collect(),
        probes: vec![
            ProbeCount {
                name: "syscalls".into(),
                ops: 30_000,
                count: CounterValue {
                    value: Some(30_003.0),
                    raw: 30_003,
                    enabled_ns: 7,
                    running_ns: 7,
                },
            },
            ProbeCount {
                name: "never_ran".into(),
                ops: 1,
                count: CounterValue {
                    value: None,
                    raw: 0,
                    enabled_ns: 5,
                    running_ns: 0,
                },
            },
        ],
        counters: vec![
            CounterStatus {
                name: "cycles".into(),
                supported: true,
                reason: None,
            },
            CounterStatus {
                name: "dtlb_load_misses".into(),
                supported: false,
                reason: Some("ENOENT: no such event on this PMU".into()),
            },
        ],
        validation: vec![
            Check {
                check: "no major faults".into(),
                ok: true,
                detail: "0 majflt".into(),
            },
            Check {
                check: "cpu migrations".into(),
                ok: false,
                detail: "3 migrations in 5 samples".into(),
            },
        ],
        other_cpus_busy: Some(0.031_25),
        facts: Vec::new(),
        label: None,
        load: None,
        started_at: 1_700_000_000.123_456,
        duration_s: 2.5,
    }
}

fn pagefault_result() -> ExperimentResult {
    ExperimentResult {
        experiment: "pagefault.anon".into(),
        params: BTreeMap::from([("bytes".into(), "2GiB".into())]),
        unit: "ns/page".into(),
        status: Status::Suspect,
        reason: Some("minflt per page 0.5, expected 1".into()),
        stop_reason: None,
        calibration: Calibration {
            ops_per_sample: 1,
            timer_overhead_ns: 30.0,
            loop_overhead_ns: None,
            baseline_ns: None,
            warmup_ns: 0.0,
            cpus: vec![],
        },
        samples: (0..3).map(|i| sample(i, false)).collect(),
        probes: vec![],
        counters: vec![],
        validation: vec![Check {
            check: "one minor fault per page".into(),
            ok: false,
            detail: "0.5 minflt/page".into(),
        }],
        other_cpus_busy: None,
        facts: vec![
            Fact::new(
                "munmap_ns_per_page",
                61.5,
                "ns/page",
                "munmap of the region",
            ),
            Fact::new(
                "anon_huge_pages_kb",
                4096.0,
                "kB",
                "AnonHugePages of the region",
            ),
        ],
        label: Some("anonymous, memory load".into()),
        load: Some(LoadRecord {
            kind: "memory".into(),
            details: vec![
                ("limit".into(), "1.25 GiB".into()),
                ("swap".into(), "none".into()),
            ],
        }),
        started_at: 1_700_000_003.0,
        duration_s: 0.75,
    }
}

fn run(tag: Option<&str>, started_at: f64, results: Vec<ExperimentResult>) -> Run {
    Run {
        id: 0,
        started_at,
        finished_at: None,
        tag: tag.map(str::to_string),
        oslab_version: "0.1.0".into(),
        settings: RunSettings {
            quick: false,
            precision: 0.01,
            budget_s: 10.0,
            min_time_s: 1.0,
            timeout_s: 40.0,
            load: Some("cpu".into()),
            dir: None,
            dir_mount: None,
            cpus: vec![2],
            argv: vec!["oslab".into(), "run".into(), "--tag".into(), "x".into()],
        },
        clock: ClockInfo {
            source: "tsc".into(),
            reason: "invariant TSC, calibrated".into(),
            tsc_hz: Some(2_400_000_123.5),
            overhead_ns: 18.25,
            resolution_ns: 0.416_666_666_666_666_7,
        },
        environment: environment("lab-1"),
        results,
    }
}

fn assert_one_line_naming(err: &StoreError, path: &Path) {
    let text = err.to_string();
    assert!(!text.contains('\n'), "not one line: {text}");
    assert!(
        text.contains(&path.display().to_string()),
        "does not name {}: {text}",
        path.display()
    );
}

fn count_rows(store: &Store, table: &str) -> i64 {
    store
        .conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get(0)
        })
        .expect("count rows")
}

// --- round trips ---

#[test]
fn run_round_trips_through_begin_add_finish() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    let mut expected = run(None, 1_700_000_000.5, vec![]);
    let id = store.begin_run(&expected).expect("begin_run");
    expected.results = vec![syscall_result(), pagefault_result()];
    for result in &expected.results {
        store.add_result(id, result).expect("add_result");
    }
    store.finish_run(id, 1_700_000_009.25).expect("finish_run");
    expected.id = id;
    expected.finished_at = Some(1_700_000_009.25);

    assert_eq!(store.load_run(id).expect("load_run"), expected);
    // Reading again from a fresh connection gives the same record.
    drop(store);
    let store = Store::open_existing(&path).expect("reopen");
    assert_eq!(store.load_run(id).expect("load_run"), expected);
}

#[test]
fn run_with_results_round_trips_through_begin_run_alone() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    let mut expected = run(
        Some("baseline"),
        1.5,
        vec![pagefault_result(), syscall_result()],
    );
    expected.finished_at = Some(2.5);
    let id = store.begin_run(&expected).expect("begin_run");
    expected.id = id;
    assert_eq!(store.load_run(id).expect("load_run"), expected);
}

/// NaN goes in as NULL and comes back as NaN; -0.0 comes back as 0.0 (SQLite keeps integral
/// REALs as integers on disk and integer zero has no sign); every other finite value keeps
/// its exact bits.
#[test]
fn nan_negative_zero_and_subnormals_round_trip() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    let id = store.begin_run(&run(None, 1.0, vec![])).expect("begin_run");
    let mut result = pagefault_result();
    result.samples[0].ns_per_op = f64::NAN;
    result.samples[1].elapsed_ns = -0.0;
    result.samples[2].ns_per_op = f64::MIN_POSITIVE / 4.0; // subnormal
    result.samples[2].elapsed_ns = -1.0e300;
    store.add_result(id, &result).expect("add_result");

    let loaded = store.load_run(id).expect("load_run");
    let samples = &loaded.results[0].samples;
    assert!(samples[0].ns_per_op.is_nan());
    assert_eq!(samples[1].elapsed_ns.to_bits(), 0.0_f64.to_bits());
    for (got, want) in [
        (samples[2].ns_per_op, result.samples[2].ns_per_op),
        (samples[2].elapsed_ns, result.samples[2].elapsed_ns),
    ] {
        assert_eq!(got.to_bits(), want.to_bits());
    }
}

#[test]
fn samples_table_has_one_column_per_rusage_field() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).expect("open");
    let mut stmt = store
        .conn
        .prepare("SELECT name FROM pragma_table_info('samples')")
        .expect("prepare");
    let columns: Vec<String> = stmt
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    for field in Rusage::FIELDS {
        assert!(columns.iter().any(|c| c == field), "no column {field}");
    }
}

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
        conn.execute_batch(super::schema::MIGRATIONS[0]).unwrap();
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
    store
        .add_result(1, &pagefault_result())
        .expect("a result with facts");
    let back = store.load_run(1).unwrap();
    assert_eq!(back.results[0].facts.len(), 2);
    assert_eq!(
        back.results[0].label.as_deref(),
        Some("anonymous, memory load")
    );
    assert_eq!(SCHEMA_VERSION, 2);
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

// --- finding runs ---

#[test]
fn latest_run_and_tag_lookup_pick_the_latest_started() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    assert_eq!(store.latest_run_id().expect("latest"), None);

    let first_a = store
        .begin_run(&run(Some("a"), 100.0, vec![syscall_result()]))
        .expect("run 1");
    let newest_b = store
        .begin_run(&run(Some("b"), 300.0, vec![]))
        .expect("run 2");
    // Stored last (an import, say) but started between the two.
    let second_a = store
        .begin_run(&run(
            Some("a"),
            200.0,
            vec![pagefault_result(), syscall_result()],
        ))
        .expect("run 3");
    let untagged = store.begin_run(&run(None, 250.0, vec![])).expect("run 4");
    store.finish_run(second_a, 210.0).expect("finish");

    assert_eq!(store.latest_run_id().expect("latest"), Some(newest_b));
    assert_eq!(store.run_id_for_tag("a").expect("tag a"), Some(second_a));
    assert_eq!(store.run_id_for_tag("b").expect("tag b"), Some(newest_b));
    assert_eq!(store.run_id_for_tag("c").expect("tag c"), None);

    let listed: Vec<(i64, usize, Option<f64>)> = store
        .list_runs()
        .expect("list")
        .iter()
        .map(|s| (s.id, s.results, s.finished_at))
        .collect();
    assert_eq!(
        listed,
        vec![
            (first_a, 1, None),
            (second_a, 2, Some(210.0)),
            (untagged, 0, None),
            (newest_b, 0, None)
        ]
    );
    let summary = &store.list_runs().expect("list")[0];
    assert_eq!(summary.tag.as_deref(), Some("a"));
    assert_eq!(summary.started_at, 100.0);
    assert_eq!(summary.hostname.as_deref(), Some("lab-1"));
    assert_eq!(summary.kernel_release.as_deref(), Some("6.8.0-test"));
}

#[test]
fn unknown_run_ids_are_reported() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    for err in [
        store.load_run(42).expect_err("load"),
        store.add_result(42, &syscall_result()).expect_err("add"),
        store.finish_run(42, 1.0).expect_err("finish"),
    ] {
        assert!(
            matches!(err, StoreError::NoSuchRun { run_id: 42, .. }),
            "{err:?}"
        );
        assert_one_line_naming(&err, &path);
    }
    assert_eq!(count_rows(&store, "results"), 0);
}

// --- transactions and integrity ---

#[test]
fn each_result_is_visible_to_another_process_before_the_run_finishes() {
    let (_dir, path) = temp_db();
    let mut writer = Store::open(&path).expect("open writer");
    let id = writer
        .begin_run(&run(None, 1.0, vec![]))
        .expect("begin_run");
    writer
        .add_result(id, &syscall_result())
        .expect("add_result");

    let reader = Store::open_existing(&path).expect("open reader");
    let seen = reader.load_run(id).expect("load_run");
    assert_eq!(seen.finished_at, None);
    assert_eq!(seen.results, vec![syscall_result()]);

    writer
        .add_result(id, &pagefault_result())
        .expect("add_result");
    assert_eq!(reader.load_run(id).expect("load_run").results.len(), 2);
}

#[test]
fn a_value_sqlite_cannot_hold_stores_nothing_of_that_result() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    let id = store.begin_run(&run(None, 1.0, vec![])).expect("begin_run");
    let mut bad = syscall_result();
    if let Some(counter) = bad.samples[3].counters.get_mut("cycles") {
        counter.raw = u64::MAX;
    }
    let err = store
        .add_result(id, &bad)
        .expect_err("u64::MAX cannot be stored");
    assert!(
        matches!(
            err,
            StoreError::OutOfRange {
                value: u64::MAX,
                ..
            }
        ),
        "{err:?}"
    );
    assert_one_line_naming(&err, &path);
    for table in [
        "results",
        "samples",
        "sample_counters",
        "counter_status",
        "validations",
    ] {
        assert_eq!(
            count_rows(&store, table),
            0,
            "{table} kept part of the result"
        );
    }
    // The store is still usable, and the next result takes the first position.
    store
        .add_result(id, &pagefault_result())
        .expect("add_result");
    assert_eq!(
        store.load_run(id).expect("load").results,
        vec![pagefault_result()]
    );
}

#[test]
fn identical_environments_are_stored_once() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    store.begin_run(&run(None, 1.0, vec![])).expect("run 1");
    store.begin_run(&run(None, 2.0, vec![])).expect("run 2");
    assert_eq!(count_rows(&store, "environments"), 1);
    let mut other = run(None, 3.0, vec![]);
    other.environment = environment("lab-2");
    let id = store.begin_run(&other).expect("run 3");
    assert_eq!(count_rows(&store, "environments"), 2);
    assert_eq!(
        store
            .load_run(id)
            .expect("load")
            .environment
            .hostname
            .as_deref(),
        Some("lab-2")
    );
}

#[test]
fn deleting_a_run_cascades_to_everything_it_measured() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    let gone = store
        .begin_run(&run(None, 1.0, vec![syscall_result(), pagefault_result()]))
        .expect("run 1");
    let kept = store
        .begin_run(&run(None, 2.0, vec![syscall_result()]))
        .expect("run 2");
    let counters_per_run = count_rows(&store, "sample_counters") / 2;
    assert!(counters_per_run > 0);

    store
        .conn
        .execute("DELETE FROM runs WHERE id = ?1", [gone])
        .expect("delete run");
    assert_eq!(count_rows(&store, "results"), 1);
    assert_eq!(count_rows(&store, "samples"), 5);
    assert_eq!(count_rows(&store, "sample_counters"), counters_per_run);
    assert_eq!(count_rows(&store, "counter_status"), 2);
    assert_eq!(count_rows(&store, "validations"), 2);
    assert_eq!(
        store.load_run(kept).expect("load").results,
        vec![syscall_result()]
    );
}

#[test]
fn a_hand_edited_status_is_reported_as_damage() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    let id = store
        .begin_run(&run(None, 1.0, vec![syscall_result()]))
        .expect("begin_run");
    store
        .conn
        .execute("UPDATE results SET status = 'great'", [])
        .expect("edit");
    let err = store.load_run(id).expect_err("unknown status");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_one_line_naming(&err, &path);
    assert!(err.to_string().contains("great"), "{err}");
}

// --- property: any sample survives the trip ---

fn finite_f64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

/// Every value SQLite can hold as an INTEGER; larger ones are refused (tested above).
fn storable_u64() -> impl Strategy<Value = u64> {
    0..=i64::MAX as u64
}

fn counter_value() -> impl Strategy<Value = CounterValue> {
    (
        proptest::option::of(finite_f64()),
        storable_u64(),
        storable_u64(),
        storable_u64(),
    )
        .prop_map(|(value, raw, enabled_ns, running_ns)| CounterValue {
            value,
            raw,
            enabled_ns,
            running_ns,
        })
}

fn rusage() -> impl Strategy<Value = Rusage> {
    proptest::array::uniform9(any::<i64>()).prop_map(|v| Rusage {
        utime_us: v[0],
        stime_us: v[1],
        maxrss_kb: v[2],
        minflt: v[3],
        majflt: v[4],
        inblock: v[5],
        oublock: v[6],
        nvcsw: v[7],
        nivcsw: v[8],
    })
}

fn any_sample() -> impl Strategy<Value = Sample> {
    (
        storable_u64(),
        finite_f64(),
        finite_f64(),
        rusage(),
        proptest::collection::btree_map("[a-zA-Z0-9_.:-]{1,24}", counter_value(), 0..6),
        proptest::option::of(rusage()),
        proptest::option::of(rusage()),
    )
        .prop_map(
            |(ops, elapsed_ns, ns_per_op, rusage, counters, partner, children)| Sample {
                ops,
                elapsed_ns,
                ns_per_op,
                rusage,
                partner,
                children,
                counters,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_samples_round_trip(samples in proptest::collection::vec(any_sample(), 0..12)) {
        let (_dir, path) = temp_db();
        let mut store = Store::open(&path).expect("open");
        let id = store.begin_run(&run(None, 1.0, vec![])).expect("begin_run");
        let result = ExperimentResult { samples, ..syscall_result() };
        store.add_result(id, &result).expect("add_result");
        let loaded = store.load_run(id).expect("load_run");
        prop_assert_eq!(loaded.results.len(), 1);
        let loaded = &loaded.results[0].samples;
        prop_assert_eq!(loaded, &result.samples);
        // Beyond PartialEq: the exact bits survive, except the sign of a zero (see
        // `nan_negative_zero_and_subnormals_round_trip`).
        for (got, want) in loaded.iter().zip(&result.samples) {
            for (got, want) in [(got.elapsed_ns, want.elapsed_ns), (got.ns_per_op, want.ns_per_op)] {
                let want = if want == 0.0 { 0.0 } else { want };
                prop_assert_eq!(got.to_bits(), want.to_bits());
            }
        }
    }
}

//! Finding runs; transactions and integrity.

use super::*;

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

#[test]
fn a_counter_or_a_partner_without_its_sample_is_reported_as_damage() {
    for (table, row, named) in [
        (
            "sample_counters (result_id, sample_idx, name, value, raw, enabled_ns, running_ns)",
            "(?1, 99, 'cycles', 1.0, 1, 1, 1)",
            "counter cycles",
        ),
        (
            "sample_rusage (result_id, sample_idx, who, utime_us, stime_us, maxrss_kb, minflt, \
             majflt, inblock, oublock, nvcsw, nivcsw)",
            "(?1, 99, 'partner', 0, 0, 0, 0, 0, 0, 0, 0, 0)",
            "the partner's figures",
        ),
    ] {
        let (_dir, path) = temp_db();
        let mut store = Store::open(&path).expect("open");
        let id = store
            .begin_run(&run(None, 1.0, vec![syscall_result()]))
            .expect("begin_run");
        let result_id: i64 = store
            .conn
            .query_row("SELECT id FROM results", [], |r| r.get(0))
            .expect("a result");
        // Only a file written with the foreign keys off can hold such a row.
        store
            .conn
            .execute_batch("PRAGMA foreign_keys = OFF")
            .expect("keys off");
        store
            .conn
            .execute(&format!("INSERT INTO {table} VALUES {row}"), [result_id])
            .expect("a row without its sample");
        let err = store.load_run(id).expect_err("a row without its sample");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        assert_one_line_naming(&err, &path);
        let text = err.to_string();
        assert!(
            text.contains(&format!("{named} of result {result_id} has no sample 99")),
            "{text}"
        );
    }
}

//! Round trips: a run stored and read back is the run, down to the bits of its floats.

use super::*;

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

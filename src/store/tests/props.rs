//! Property: any sample survives the trip.

use super::*;

// --- property: any sample survives the trip ---

pub(super) fn finite_f64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

/// Every value SQLite can hold as an INTEGER; larger ones are refused (tested above).
pub(super) fn storable_u64() -> impl Strategy<Value = u64> {
    0..=i64::MAX as u64
}

pub(super) fn counter_value() -> impl Strategy<Value = CounterValue> {
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

pub(super) fn rusage() -> impl Strategy<Value = Rusage> {
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

pub(super) fn any_sample() -> impl Strategy<Value = Sample> {
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

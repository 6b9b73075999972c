use super::*;
use crate::platform::memory::PsiLine;

#[test]
fn sizes_leave_room_and_respect_memavailable() {
    let gib = 1u64 << 30;
    let s = sizes(Some(512 * MIB), 24 * gib, Pressure::default()).unwrap();
    assert_eq!(s.limit, 640 * MIB);
    assert_eq!(s.region, 320 * MIB);
    assert!(s.high < s.limit && s.high > s.limit * 9 / 10);
    assert_eq!(s.capped_at, None);
    // A file of S bytes cannot stay cached beside the competitor.
    assert!(s.limit - s.region < s.experiment);
    // Small experiments still leave the worker 64 MiB.
    let small = sizes(Some(16 * MIB), 24 * gib, Pressure::default()).unwrap();
    assert_eq!(small.limit, 80 * MIB);
    let none = sizes(None, 24 * gib, Pressure::default()).unwrap();
    assert_eq!(none.experiment, DEFAULT_SIZE);
    assert!(!none.from_experiment);
    // Never more than half of MemAvailable.
    let big = sizes(Some(20 * gib), 8 * gib, Pressure::default()).unwrap();
    assert_eq!(big.limit, 4 * gib);
    assert_eq!(big.capped_at, Some(4 * gib));
    assert!(sizes(Some(gib), 100 * MIB, Pressure::default()).is_err());
}

#[test]
fn a_headroom_leaves_that_share_of_the_experiment_beside_a_competitor_as_large() {
    let gib = 1u64 << 30;
    for (percent, limit) in [
        (50, 640 * MIB),
        (10, 537 * MIB + 614 * 1024),
        (0, 512 * MIB),
        (-25, 448 * MIB),
    ] {
        let p = Pressure {
            headroom: Some(percent),
            no_swap: false,
        };
        let s = sizes(Some(256 * MIB), 24 * gib, p).unwrap();
        assert_eq!(s.region, 256 * MIB, "{percent}%");
        assert!(
            s.limit.abs_diff(limit) < 4096,
            "{percent}%: {} vs {limit}",
            s.limit
        );
        assert_eq!(s.limits().swap, 256 * MIB);
    }
    let off = Pressure {
        headroom: Some(0),
        no_swap: true,
    };
    assert_eq!(
        sizes(Some(256 * MIB), 24 * gib, off).unwrap().limits().swap,
        0
    );
    let small = sizes(Some(16 * MIB), 24 * gib, off).unwrap_err();
    assert!(small.contains("larger size"), "{small}");
    // Never capped: refused instead.
    let err = sizes(Some(2 * gib), 6 * gib, off).unwrap_err();
    assert!(err.contains("smaller size"), "{err}");
}

#[test]
fn stalls_are_the_growth_of_the_totals() {
    let line = |total_us| PsiLine {
        avg10: 0.0,
        total_us,
    };
    let before = Psi {
        some: line(1234),
        full: Some(line(567)),
    };
    let after = Psi {
        some: line(2000),
        full: None,
    };
    assert_eq!(describe_stall(&before, &after), "some 766 µs");
    let both = Psi {
        some: line(2000),
        full: Some(line(600)),
    };
    assert_eq!(describe_stall(&before, &both), "some 766 µs, full 33 µs");
}

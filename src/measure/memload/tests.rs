use super::*;
use crate::platform::memory::parse_psi;

#[test]
fn sizes_leave_room_and_respect_memavailable() {
    let gib = 1u64 << 30;
    let s = sizes(Some(512 * MIB), 24 * gib).unwrap();
    assert_eq!(s.limit, 640 * MIB);
    assert_eq!(s.region, 320 * MIB);
    assert!(s.high < s.limit && s.high > s.limit * 9 / 10);
    assert_eq!(s.capped_at, None);
    // A file of S bytes cannot stay cached beside the competitor.
    assert!(s.limit - s.region < s.experiment);
    // Small experiments still leave the worker 64 MiB.
    let small = sizes(Some(16 * MIB), 24 * gib).unwrap();
    assert_eq!(small.limit, 80 * MIB);
    let none = sizes(None, 24 * gib).unwrap();
    assert_eq!(none.experiment, DEFAULT_SIZE);
    assert!(!none.from_experiment);
    // Never more than half of MemAvailable.
    let big = sizes(Some(20 * gib), 8 * gib).unwrap();
    assert_eq!(big.limit, 4 * gib);
    assert_eq!(big.capped_at, Some(4 * gib));
    assert!(sizes(Some(gib), 100 * MIB).is_err());
}

#[test]
fn psi_lines() {
    let psi = parse_psi(
        "some avg10=1.50 avg60=0.00 avg300=0.00 total=1234\n\
             full avg10=0.25 avg60=0.00 avg300=0.00 total=567\n",
    )
    .unwrap();
    assert_eq!(psi.some.avg10, 1.5);
    assert_eq!(psi.some.total_us, 1234);
    assert_eq!(psi.full.map(|f| f.total_us), Some(567));
    let later = parse_psi("some avg10=0 avg60=0 avg300=0 total=2000\n").unwrap();
    assert_eq!(later.full, None);
    assert_eq!(describe_stall(&psi, &later), "some 766 µs");
    assert_eq!(parse_psi(""), None);
}

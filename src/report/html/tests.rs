use super::environment::utc;
use super::metric_ids;

#[test]
fn dates() {
    assert_eq!(utc(0.0), "1970-01-01 00:00 UTC");
    assert_eq!(utc(1_700_000_000.0), "2023-11-14 22:13 UTC");
}

#[test]
fn twelve_metrics() {
    assert_eq!(metric_ids().len(), 12);
}

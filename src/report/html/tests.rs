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

#[test]
fn counters_unsupported_for_one_reason_are_listed_once() {
    use crate::model::env::CounterAvailability;
    let no = |why: &str| CounterAvailability {
        supported: false,
        reason: Some(why.into()),
        event: None,
    };
    let counters = [
        ("cycles".to_string(), no("no PMU")),
        ("instructions".to_string(), no("no PMU")),
        ("syscalls".to_string(), no("paranoid")),
        (
            "page-faults".to_string(),
            CounterAvailability {
                supported: true,
                reason: None,
                event: None,
            },
        ),
    ]
    .into();
    assert_eq!(
        super::environment::unsupported_counters(&counters).as_deref(),
        Some("2 counters (cycles, instructions): no PMU\nsyscalls: paranoid")
    );
    assert_eq!(
        super::environment::unsupported_counters(&Default::default()),
        None
    );
}

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

#[test]
fn scaling_curves_get_a_chart_with_the_ideal_line_and_a_table() {
    use crate::model::copies::{Copies, Mode};
    let result = |count: u32| {
        let mut r = crate::store::tests::syscall_result();
        Copies {
            count,
            mode: Mode::Threads,
        }
        .record(&mut r.params);
        r
    };
    let run = crate::store::tests::run(None, 1.0, vec![result(1), result(2)]);
    let html = super::scaling::section(std::slice::from_ref(&run));
    assert!(html.contains("<section id=\"scaling\">"), "{html}");
    assert!(html.contains("class=\"ideal\""), "{html}");
    assert!(html.contains("copies as threads"), "{html}");
    assert!(html.contains("<td>100%</td>"), "{html}");
    let plain = crate::store::tests::run(None, 1.0, vec![crate::store::tests::syscall_result()]);
    assert!(super::scaling::section(&[plain]).is_empty());
}

#[test]
fn reclaim_figures_get_bars_per_pressure_level_and_a_table() {
    use crate::model::{CounterStatus, CounterValue};
    let result = |label: &str, stolen: f64| {
        let mut r = crate::store::tests::syscall_result();
        r.experiment = "mmap.access".into();
        r.label = Some(label.into());
        r.counters = ["vm.pgsteal_kswapd", "vm.pgsteal_direct", "cg.pgscan"]
            .iter()
            .map(|n| CounterStatus {
                name: n.to_string(),
                supported: !n.starts_with("cg."),
                reason: n.starts_with("cg.").then(|| "cgroup v1".into()),
            })
            .collect();
        for s in &mut r.samples {
            for (name, v) in [("vm.pgsteal_kswapd", 0.0), ("vm.pgsteal_direct", stolen)] {
                s.counters.insert(
                    name.into(),
                    CounterValue {
                        value: Some(v),
                        raw: v as u64,
                        enabled_ns: 0,
                        running_ns: 0,
                    },
                );
            }
        }
        r
    };
    let run = crate::store::tests::run(
        None,
        1.0,
        vec![
            result("anonymous, headroom 50%", 0.0),
            result("anonymous, headroom -25%", 8000.0),
        ],
    );
    let pooled = vec![crate::report::pool::pool(&run.results)];
    let html = super::reclaim::section(std::slice::from_ref(&run), &pooled);
    assert!(html.contains("<section id=\"reclaim\">"), "{html}");
    assert!(html.contains("mmap.access (anonymous)"), "{html}");
    assert!(html.contains("headroom -25%"), "{html}");
    // The steals at -25% are a bar, the machine's (*), and the table has both levels.
    assert!(html.contains("stolen 8000 pages per sample"), "{html}");
    assert!(html.contains("<td>8000*</td>"), "{html}");
    assert_eq!(html.matches("<tr><td>headroom").count(), 2, "{html}");
    let plain = crate::store::tests::run(None, 1.0, vec![crate::store::tests::syscall_result()]);
    let pooled = vec![crate::report::pool::pool(&plain.results)];
    assert!(super::reclaim::section(std::slice::from_ref(&plain), &pooled).is_empty());
}

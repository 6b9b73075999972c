use super::*;

#[test]
fn scaling_follows_time_running() {
    assert_eq!(scale(100, 10, 10).value, Some(100.0));
    assert_eq!(scale(100, 20, 10).value, Some(200.0));
    assert_eq!(scale(100, 10, 0).value, None, "never ran");
    assert_eq!(scale(0, 0, 0).value, Some(0.0), "empty window");
}

#[test]
fn every_counter_has_one_status_and_software_counts_faults() {
    let mut set = CounterSet::open();
    let names: Vec<_> = set.statuses().iter().map(|s| s.name.clone()).collect();
    let expected: Vec<_> = names
        .iter()
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(names.len(), expected.len(), "one status per counter");
    assert_eq!(
        probe().len(),
        super::names().count(),
        "env lists timed and probe counters"
    );
    for s in set.statuses() {
        assert!(
            s.supported || s.reason.as_deref().is_some_and(|r| !r.is_empty()),
            "{s:?}"
        );
    }
    // Where page faults can be counted, touching fresh pages must show them.
    let before = set.read_before();
    let mut v = vec![0u8; 64 << 20];
    for i in (0..v.len()).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(&v);
    let after = set.read_after();
    let delta = set.delta(&before, &after);
    if let Some(faults) = delta.get("page-faults").and_then(|c| c.value) {
        assert!(
            faults >= 1000.0,
            "touched 16384 pages, counted {faults} faults"
        );
    }
}

#[test]
fn the_syscall_probe_counts_every_call_or_says_why_not() {
    let mut probes = CounterSet::open_probes(false);
    let status = probes
        .statuses()
        .iter()
        .find(|s| s.name == "syscalls")
        .cloned()
        .unwrap();
    if !status.supported {
        assert!(status.reason.is_some_and(|r| !r.is_empty()));
        return;
    }
    let before = probes.read_before();
    for _ in 0..1000 {
        // SAFETY: getppid has no arguments and cannot fail.
        std::hint::black_box(unsafe { libc::getppid() });
    }
    let after = probes.read_after();
    let counted = probes.delta(&before, &after)["syscalls"].value.unwrap();
    // 1000 calls plus the counter's own read.
    assert!((1000.0..=1010.0).contains(&counted), "counted {counted}");
}

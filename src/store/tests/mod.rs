//! Tests of the results database against real SQLite files in temporary directories: the
//! fixtures (a machine, samples, two results, a run) here, the tests by theme beside them.

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

mod integrity;
mod opening;
mod props;
mod round_trip;

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
            event: None,
        },
    );
    env.counters.insert(
        "dtlb_load_misses".into(),
        CounterAvailability {
            supported: false,
            reason: Some("ENOENT: no such event on this PMU".into()),
            event: None,
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

pub(crate) fn syscall_result() -> ExperimentResult {
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
        earlier_medians: vec![101.5, 99.25, 100.0],
        earlier_slow_medians: vec![131.5],
        earlier_kernel_canaries: vec![171.25, 169.5],
        profile: Some(crate::model::profile::Profile {
            event: "cpu-clock".into(),
            frequency_hz: 4000,
            stacks: vec![
                crate::model::profile::FoldedStack {
                    stack: "main;[user];entry_SYSCALL_64_[k];__x64_sys_getpid_[k]".into(),
                    count: 812,
                },
                crate::model::profile::FoldedStack {
                    stack: "main;getpid_loop".into(),
                    count: 301,
                },
            ],
            lost: 2,
            batch_ns_per_op: vec![120.5, 118.25],
            problem: Some("a problem, said".into()),
        }),
        emulation: Some("qemu-aarch64 (binfmt_misc), user-mode emulation".into()),
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
        earlier_medians: vec![],
        earlier_slow_medians: vec![],
        earlier_kernel_canaries: vec![],
        profile: None,
        emulation: None,
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

pub(crate) fn run(tag: Option<&str>, started_at: f64, results: Vec<ExperimentResult>) -> Run {
    Run {
        id: 0,
        uuid: crate::model::identity::new_run_uuid(),
        started_at,
        finished_at: None,
        tag: tag.map(str::to_string),
        oslab_version: "0.1.0".into(),
        settings: RunSettings {
            quick: false,
            precision: 0.01,
            budget_s: 10.0,
            processes: 3,
            max_processes: Some(6),
            cpu_turns: vec![3, 2],
            cpu_choice: None,
            unpinned: None,
            min_time_s: 1.0,
            timeout_s: 40.0,
            load: Some("cpu".into()),
            swap: None,
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

//! The fleet store against a real PostgreSQL (tests/common/pg.rs): push and read back every
//! field, idempotence, many clients at once, a push killed or cut off mid-way, the errors a
//! user meets, and the fleet view.

#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::pg::{client, fresh_database, with_database};
use common::{Lab, spread, synthetic_result, synthetic_run};
use oslab::model::profile::{FoldedStack, Profile};
use oslab::model::{CounterValue, Fact, LoadRecord, Run};
use oslab::store::Store;
use serde_json::Value;

/// A run of `host` (machine id `machine`, kernel `kernel`) whose times are `scale` times the
/// base, with `samples` samples per result and every kind of field a result can carry.
fn run(host: &str, kernel: &str, scale: f64, samples: usize, started: f64) -> Run {
    let mut getppid = synthetic_result(
        "syscall.getppid",
        &[],
        &spread(100.0 * scale, 0.01, samples),
    );
    getppid.profile = Some(Profile {
        event: "cpu-clock".into(),
        frequency_hz: 4000,
        stacks: vec![FoldedStack {
            stack: "main;getppid;entry_SYSCALL_64_[k]".into(),
            count: 812,
        }],
        lost: 2,
        batch_ns_per_op: vec![120.5, 118.25],
        problem: None,
    });
    for (i, s) in getppid.samples.iter_mut().enumerate() {
        s.counters.insert(
            "vmscan.scanned".into(),
            CounterValue {
                value: Some(i as f64 * 1.5),
                raw: i as u64,
                enabled_ns: 1_000_003,
                running_ns: 999_999,
            },
        );
    }
    let mut mapped = synthetic_result(
        "mmap.access",
        &[("backing", "file")],
        &spread(7.5 * scale, 0.02, samples),
    );
    mapped.label = Some("file shared, headroom -25%".into());
    mapped.load = Some(LoadRecord {
        kind: "memory".into(),
        details: vec![
            ("limit".into(), "1.25 GiB".into()),
            ("swap".into(), "none".into()),
        ],
    });
    mapped.facts = vec![Fact {
        name: "munmap_ns_per_page".into(),
        value: f64::NAN,
        unit: "ns/page".into(),
        note: "not measured".into(),
    }];
    mapped.earlier_medians = vec![7.25, 7.5];
    let mut run = synthetic_run(0, &format!("on-{host}"), kernel, vec![getppid, mapped]);
    run.uuid = oslab::model::identity::new_run_uuid();
    run.started_at = started;
    run.finished_at = Some(started + 12.25);
    run.clock.tsc_hz = Some(2_596_122_135.870_115);
    run.clock.resolution_ns = 0.416_666_666_666_666_7;
    run.environment.hostname = Some(host.into());
    run.environment.machine = oslab::model::identity::machine_hash(host);
    run
}

/// A local database at `path` holding `runs`.
fn local(path: &Path, runs: &[Run]) {
    let mut store = Store::open(path).expect("a local database");
    for r in runs {
        store.begin_run(r).expect("store a run");
    }
}

fn count(url: &str, sql: &str) -> i64 {
    client(url).query_one(sql, &[]).expect("count").get(0)
}

fn without_id(mut doc: Value) -> Value {
    doc["run"]["id"] = Value::Null;
    doc
}

#[test]
fn a_pushed_run_reads_back_with_every_field_and_is_stored_once() {
    let Some(url) = fresh_database("round_trip") else {
        return;
    };
    let lab = Lab::new();
    local(lab.db(), &[run("lab-1", "6.1.0", 1.0, 30, 1.7e9)]);

    let out = lab.oslab(&["push", "--store", &url]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("pushed 1, already there 0, failed 0"),
        "{out}"
    );
    assert!(
        !out.stdout.contains(":oslab@"),
        "the password is masked: {out}"
    );

    // Every field as stored locally: the export of the store's copy is the local one's.
    let here = without_id(lab.oslab(&["export", "1"]).json());
    let uuid = here["run"]["uuid"].as_str().unwrap().to_string();
    let there = lab.oslab(&["export", &uuid, "--store", &url]);
    there.assert_code(0);
    assert_eq!(without_id(there.json()), here);
    assert!(here["run"]["results"][0]["profile"]["stacks"][0]["count"] == 812);

    // Again: nothing new to push; named: already there.
    let again = lab.oslab(&["push", "--store", &url]);
    assert!(
        again.stdout.contains("pushed 0, already there 0, failed 0"),
        "{again}"
    );
    let named = lab.oslab(&["push", "1", "--store", &url, "--json"]);
    named.assert_code(0);
    assert_eq!(named.json()["already_there"][0]["uuid"], uuid.as_str());

    // The same run exported and imported on another machine is still one run in the fleet.
    let other = Lab::new();
    let file = lab.dir().join("run.json");
    lab.oslab(&["export", "1", "-o", file.to_str().unwrap()])
        .assert_code(0);
    other
        .oslab(&["import", file.to_str().unwrap()])
        .assert_code(0);
    let theirs = other.oslab(&["push", "--store", &url]);
    assert!(
        theirs
            .stdout
            .contains("pushed 0, already there 1, failed 0"),
        "{theirs}"
    );
    assert_eq!(count(&url, "SELECT count(*) FROM oslab.runs"), 1);

    // Read from the store: the list, show and compare.
    let list = lab.oslab(&["show", "--list", "--store", &url]);
    list.assert_code(0);
    assert!(list.stdout.contains("on-lab-1"), "{list}");
    lab.oslab(&["show", "on-lab-1", "--store", &url, "--json"])
        .assert_code(0);
    lab.oslab(&["compare", "on-lab-1", &uuid, "--store", &url])
        .assert_code(0);
}

#[test]
fn eight_clients_pushing_at_once_into_a_new_store_store_each_run_once() {
    let Some(url) = fresh_database("concurrent") else {
        return;
    };
    let labs: Vec<Lab> = (0..8)
        .map(|c| {
            let lab = Lab::new();
            let runs: Vec<Run> = (0..50)
                .map(|i| run(&format!("m{c}"), "6.1.0", 1.0, 3, 1.7e9 + f64::from(i)))
                .collect();
            local(lab.db(), &runs);
            lab
        })
        .collect();
    let children: Vec<_> = labs
        .iter()
        .map(|lab| {
            lab.command(&["push", "--store", &url])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a push")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("a push ends");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("pushed 50, already there 0, failed 0"),
            "{stdout}"
        );
    }
    assert_eq!(count(&url, "SELECT count(*) FROM oslab.runs"), 400);
    assert_eq!(
        count(&url, "SELECT count(DISTINCT run_uuid) FROM oslab.runs"),
        400
    );
    assert_eq!(
        count(&url, "SELECT count(DISTINCT machine) FROM oslab.runs"),
        8
    );
}

/// A local database of `n` runs with `samples` samples per result, its path in `lab`.
/// A different run under a UUID the store holds is refused, as `import` refuses it: not
/// "already there", not marked pushed, exit 6 with a line that says what to do. The same
/// holds for a run pushed before the store kept fingerprints (read back to compare), and
/// the same run pushed again is still "already there".
#[test]
fn a_different_run_under_a_pushed_uuid_is_refused() {
    let Some(url) = fresh_database("uuid_clash") else {
        return;
    };
    let mine = run("lab-1", "6.1.0", 1.0, 10, 1.7e9);
    let mut other = run("lab-2", "6.8.0", 2.0, 10, 1.7e9 + 50.0);
    other.uuid = mine.uuid.clone();
    let (a, b) = (Lab::new(), Lab::new());
    local(a.db(), std::slice::from_ref(&mine));
    local(b.db(), &[other]);
    a.oslab(&["push", "--store", &url]).assert_code(0);

    let refused = |why: &str| {
        let out = b.oslab(&["push", "--store", &url]);
        out.assert_code(6);
        assert!(
            out.stdout.contains("pushed 0, already there 0, failed 1"),
            "{why}: {out}"
        );
        for needle in ["holds another run under UUID", &mine.uuid, "was not pushed"] {
            assert!(out.stderr.contains(needle), "{why}: {needle}\n{out}");
        }
    };
    refused("a store that keeps fingerprints");
    // Not marked pushed: the next push tries it again, and refuses it again.
    refused("the second push");
    assert_eq!(count(&url, "SELECT count(*) FROM oslab.runs"), 1);

    // A run pushed before schema 2 has no fingerprint: read back to compare.
    client(&url)
        .batch_execute("UPDATE oslab.runs SET fingerprint = NULL")
        .unwrap();
    refused("a run pushed without a fingerprint");
    let same = a.oslab(&["push", "1", "--store", &url]);
    same.assert_code(0);
    assert!(
        same.stdout.contains("pushed 0, already there 1, failed 0"),
        "{same}"
    );
    assert_eq!(
        count(
            &url,
            "SELECT count(*) FROM oslab.runs WHERE fingerprint IS NOT NULL"
        ),
        1,
        "the fingerprint read back is kept"
    );
}

fn many(lab: &Lab, n: u32, samples: usize) {
    let runs: Vec<Run> = (0..n)
        .map(|i| run("bulk", "6.1.0", 1.0, samples, 1.7e9 + f64::from(i)))
        .collect();
    local(lab.db(), &runs);
}

/// Runs in the store whose samples are not all there: must be none, whatever happened.
fn partial_runs(url: &str, samples: usize) -> i64 {
    count(
        url,
        &format!(
            "SELECT count(*) FROM oslab.runs r WHERE \
             (SELECT count(*) FROM oslab.samples s WHERE s.run_id = r.id) <> {} \
             OR (SELECT count(*) FROM oslab.figures f WHERE f.run_id = r.id) <> 2",
            2 * samples
        ),
    )
}

fn wait_for_runs(url: &str, at_least: i64) {
    let start = Instant::now();
    while count(url, "SELECT count(*) FROM oslab.runs") < at_least {
        assert!(start.elapsed() < Duration::from_secs(60), "no run arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_push_killed_midway_leaves_no_partial_run_and_the_retry_completes_it() {
    let Some(url) = fresh_database("killed") else {
        return;
    };
    let lab = Lab::new();
    many(&lab, 300, 150);
    // The schema first, so the count below can be read while the push runs.
    lab.oslab(&["show", "--list", "--store", &url])
        .assert_code(0);
    let mut child = lab
        .command(&["push", "--store", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a push");
    wait_for_runs(&url, 3);
    child.kill().expect("SIGKILL the push");
    child.wait().expect("reap it");
    let stored = count(&url, "SELECT count(*) FROM oslab.runs");
    assert!(
        stored < 300,
        "the push finished before it was killed ({stored} runs)"
    );
    assert_eq!(partial_runs(&url, 150), 0);

    let retry = lab.oslab(&["push", "--store", &url]);
    retry.assert_code(0);
    assert!(retry.stdout.contains("failed 0"), "{retry}");
    assert_eq!(count(&url, "SELECT count(*) FROM oslab.runs"), 300);
    assert_eq!(
        count(&url, "SELECT count(DISTINCT run_uuid) FROM oslab.runs"),
        300
    );
    assert_eq!(partial_runs(&url, 150), 0);
}

#[test]
fn a_server_stopped_midway_is_one_error_and_the_local_runs_stay() {
    if fresh_database("stopped").is_none() {
        return;
    }
    // A server of this test's own, to stop.
    let dir = std::env::temp_dir().join(format!("oslab-pg-stop-{}", std::process::id()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/postgres");
    let started = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let url = String::from_utf8_lossy(&started.stdout).trim().to_string();
    let lab = Lab::new();
    many(&lab, 300, 150);
    lab.oslab(&["show", "--list", "--store", &url])
        .assert_code(0);
    let child = lab
        .command(&["push", "--store", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a push");
    wait_for_runs(&url, 3);
    Command::new("bash")
        .arg(&script)
        .arg("stop")
        .arg(&dir)
        .status()
        .unwrap();
    let out = child.wait_with_output().expect("the push ends");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(6), "{stdout}{stderr}");
    assert!(stdout.contains("failed "), "{stdout}");
    assert!(!stdout.contains("failed 0"), "{stdout}");
    assert!(
        stderr.contains("closed the connection") || stderr.contains("cannot connect"),
        "{stderr}"
    );
    assert!(!stderr.contains(":oslab@"), "{stderr}");
    // Every run is still in the local database, and a push elsewhere would find them.
    let store = Store::open_existing(lab.db()).unwrap();
    assert_eq!(store.list_runs().unwrap().len(), 300);
}

#[test]
fn bad_stores_are_one_line_each_without_the_password() {
    let Some(url) = fresh_database("errors") else {
        return;
    };
    let lab = Lab::new();
    local(lab.db(), &[run("lab-1", "6.1.0", 1.0, 5, 1.7e9)]);
    let wrong = url.replacen(":oslab@", ":wrong-pw@", 1);
    let port = url
        .split(':')
        .nth(3)
        .and_then(|p| p.split('/').next())
        .unwrap_or("5432")
        .to_string();
    let unreachable = url.replacen(&format!(":{port}/"), ":1/", 1);
    for (store, says) in [
        (wrong.as_str(), "refused the login"),
        (unreachable.as_str(), "cannot connect"),
        ("mysql://a:pw@b/c", "not a postgres:// URL"),
    ] {
        let out = lab.oslab(&["push", "--store", store]);
        out.assert_code(2);
        assert!(out.stderr.contains(says), "{store}: {out}");
        assert_eq!(out.stderr.trim().lines().count(), 1, "{out}");
        for secret in ["wrong-pw", ":oslab@", "pw@"] {
            assert!(!out.stderr.contains(secret), "{store}: {out}");
        }
    }
    let none = lab.oslab_with(lab.db(), &["push"], &[("OSLAB_STORE", "")]);
    none.assert_code(2);
    assert!(none.stderr.contains("no fleet store given"), "{none}");
    // OSLAB_STORE is read when --store is not given.
    let by_env = lab.oslab_with(lab.db(), &["push"], &[("OSLAB_STORE", &url)]);
    by_env.assert_code(0);
    assert!(by_env.stdout.contains("pushed 1"), "{by_env}");

    // A store whose schema is newer than this oslab is refused before anything is written.
    client(&url)
        .batch_execute("UPDATE oslab.meta SET value = '99' WHERE key = 'schema_version'")
        .unwrap();
    let newer = lab.oslab(&["push", "--store", &url]);
    newer.assert_code(2);
    assert!(
        newer.stderr.contains("has schema 99") && newer.stderr.contains("upgrade oslab"),
        "{newer}"
    );
    let _ = with_database(&url, "postgres");
}

/// The URL's host, port and database (`postgres://USER:PW@HOST:PORT/DB`).
fn url_parts(url: &str) -> (String, String, String) {
    let rest = url.split_once('@').expect("a URL with a user").1;
    let (authority, db) = rest.split_once('/').expect("a database");
    let (host, port) = authority.rsplit_once(':').expect("a port");
    let db = db.split('?').next().unwrap_or(db);
    (host.into(), port.into(), db.into())
}

/// libpq's key=value form is taken (`run --push` with it, then `show --store` with it), and
/// its password — or one from a URL's query string, OSLAB_STORE or PGPASSWORD — is printed in
/// no line and recorded in no argv (issue 31).
#[test]
fn a_key_value_store_is_taken_and_its_password_shown_nowhere() {
    let Some(url) = fresh_database("key_value") else {
        return;
    };
    let (host, port, db) = url_parts(&url);
    let role = format!("kv_{}", std::process::id());
    client(&url)
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN PASSWORD 'secretpw'; \
             ALTER DATABASE \"{db}\" OWNER TO {role}"
        ))
        .unwrap();
    let kv = format!("host={host} port={port} user={role} password=secretpw dbname={db}");
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "syscall.getppid",
        "--quick",
        "--repeat",
        "1",
        "--push",
        "--store",
        &kv,
    ]);
    out.assert_code(0);
    assert!(out.stderr.contains("pushed run 1 to"), "{out}");
    assert!(!out.stdout.contains("secretpw"), "{out}");
    assert!(!out.stderr.contains("secretpw"), "{out}");
    let argv = lab.oslab(&["show", "--json"]).json()["settings"]["argv"].to_string();
    assert!(argv.contains("password=***"), "{argv}");
    assert!(!argv.contains("secretpw"), "{argv}");
    let there = lab.oslab(&["show", "--list", "--store", &kv]);
    there.assert_code(0);
    assert_eq!(common::listed_runs(&there.stdout), [1], "{there}");

    let base = format!("host={host} port={port} user={role} dbname={db}");
    let query = format!("postgres://{role}@{host}:{port}/{db}?password=wrongpw2");
    for (store, env, says) in [
        (
            format!("{base} password=wrongpw1"),
            vec![],
            "refused the login",
        ),
        (query, vec![], "refused the login"),
        (
            String::new(),
            vec![("OSLAB_STORE", format!("{base} password='wrong pw3'"))],
            "refused the login",
        ),
        (
            base.clone(),
            vec![("PGPASSWORD", "wrongpw4".to_string())],
            "refused the login",
        ),
        (
            format!("{base} password='wrongpw5"),
            vec![],
            "closing quote",
        ),
    ] {
        let mut args = vec!["push"];
        if !store.is_empty() {
            args.extend(["--store", &store]);
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let out = lab.oslab_with(lab.db(), &args, &env);
        let line = out.assert_user_error(&[says]);
        for secret in ["wrongpw", "wrong pw"] {
            assert!(!line.contains(secret), "{store} {env:?}: {line}");
        }
    }
}

/// An `oslab.meta` that is not oslab's, whatever its columns, gets the one-line refusal of
/// docs/fleet.md, not PostgreSQL's error, and nothing is written beside it (issue 31).
#[test]
fn a_foreign_oslab_meta_is_refused_whatever_its_columns() {
    let lab = Lab::new();
    local(lab.db(), &[run("lab-1", "6.1.0", 1.0, 5, 1.7e9)]);
    for (i, ddl) in [
        "CREATE TABLE oslab.meta (id int, note text)",
        "CREATE TABLE oslab.meta (key text PRIMARY KEY, value text NOT NULL)",
        "CREATE TABLE oslab.meta (key text, value int); \
         INSERT INTO oslab.meta VALUES ('application', 1)",
        "CREATE TABLE oslab.meta (key text, value text, extra text); \
         INSERT INTO oslab.meta VALUES ('application', 'oslab', ''), ('schema_version', '1', '')",
        "CREATE TABLE oslab.meta (key text, value text); \
         INSERT INTO oslab.meta VALUES ('application', 'other'), ('schema_version', '1')",
    ]
    .into_iter()
    .enumerate()
    {
        let Some(url) = fresh_database(&format!("foreign_meta_{i}")) else {
            return;
        };
        client(&url)
            .batch_execute(&format!("CREATE SCHEMA oslab; {ddl}"))
            .unwrap();
        for args in [
            vec!["push", "--store", &url],
            vec!["show", "--list", "--store", &url],
        ] {
            lab.oslab(&args)
                .assert_user_error(&["oslab.meta that is not oslab's", "another database"]);
        }
        let tables = "SELECT count(*) FROM information_schema.tables \
                      WHERE table_schema = 'oslab'";
        assert_eq!(count(&url, tables), 1, "{ddl}: only the foreign table");
        let _ = with_database(&url, "postgres");
    }
}

#[test]
fn the_fleet_view_groups_machines_and_flags_the_one_outside_the_band() {
    let Some(url) = fresh_database("fleet_view") else {
        return;
    };
    let lab = Lab::new();
    let mut runs: Vec<Run> = (0..5)
        .map(|i| {
            run(
                &format!("m{i}"),
                "6.1.0",
                1.0 + 0.005 * f64::from(i),
                20,
                1.7e9 + f64::from(i),
            )
        })
        .collect();
    runs.push(run("slow", "6.8.0", 1.8, 20, 1.8e9));
    local(lab.db(), &runs);
    lab.oslab(&["push", "--store", &url]).assert_code(0);

    let view = lab.oslab(&["report", "--store", &url, "--by", "kernel", "--json"]);
    view.assert_code(0);
    let doc = view.json();
    assert_eq!(doc["machines"], 6);
    let getppid = doc["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["config"] == "syscall.getppid")
        .expect("syscall.getppid across the fleet");
    assert_eq!(getppid["groups"].as_array().unwrap().len(), 2);
    let outliers = getppid["outliers"].as_array().unwrap();
    assert_eq!(outliers.len(), 1, "{getppid}");
    assert_eq!(outliers[0]["host"], "slow");
    assert_eq!(outliers[0]["group"], "6.8.0");

    let page = lab.dir().join("fleet.html");
    let out = lab.oslab(&[
        "report",
        "--store",
        &url,
        "--by",
        "cpu",
        "-o",
        page.to_str().unwrap(),
    ]);
    out.assert_code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("data-outlier="),
        "a flagged machine on the page"
    );
    assert!(html.contains("<section id=\"fleet\">"));
    let bad = lab.oslab(&["report", "1", "--store", &url, "--by", "kernel"]);
    bad.assert_code(2);
    assert!(bad.stderr.contains("cannot be used with"), "{bad}");
}

#[test]
fn run_push_measures_stores_and_pushes() {
    let Some(url) = fresh_database("run_push") else {
        return;
    };
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "syscall.getppid",
        "--quick",
        "--push",
        "--store",
        &url,
    ]);
    out.assert_code(0);
    assert!(out.stderr.contains("pushed run 1 to"), "{out}");
    assert_eq!(count(&url, "SELECT count(*) FROM oslab.runs"), 1);
    assert!(count(&url, "SELECT count(*) FROM oslab.figures") >= 1);
    // The store's password is in neither copy of the run's command line.
    let argv = lab.oslab(&["show", "--json"]).json()["settings"]["argv"].to_string();
    assert!(argv.contains("--store") && argv.contains(":***@"), "{argv}");
    assert!(!argv.contains(":oslab@"), "{argv}");
    let there =
        lab.oslab(&["show", "--json", "--store", &url]).json()["settings"]["argv"].to_string();
    assert_eq!(there, argv);
    // A bad URL is said before anything is measured.
    let bad = lab.oslab(&[
        "run",
        "syscall.getppid",
        "--quick",
        "--push",
        "--store",
        "http://x",
    ]);
    bad.assert_code(2);
    assert!(!bad.stderr.contains("stored as run"), "{bad}");
}

/// `bench/fleet.sh`: push throughput for a 100-run history, and the time of the fleet view
/// over 1,000 runs (target: under 2 s). Copies of a real run (`OSLAB_BENCH_SEED`, a database
/// holding one) from 20 machines on three kernels.
#[test]
#[ignore = "a benchmark: bench/fleet.sh runs it"]
fn bench_push_and_fleet_view() {
    let seed = std::env::var("OSLAB_BENCH_SEED").expect("bench/fleet.sh sets OSLAB_BENCH_SEED");
    let url = fresh_database("bench").expect("a PostgreSQL for the benchmark");
    let seed = Store::open_existing(Path::new(&seed))
        .and_then(|s| s.load_run(1))
        .expect("the seed run");
    let copy = |i: u32| {
        let mut r = seed.clone();
        r.uuid = oslab::model::identity::new_run_uuid();
        r.started_at += f64::from(i);
        let host = format!("host-{:02}", i % 20);
        r.environment.machine = oslab::model::identity::machine_hash(&host);
        r.environment.hostname = Some(host);
        r.environment.kernel_release = Some(["6.1.0", "6.6.0", "6.12.0"][(i % 3) as usize].into());
        r
    };
    let fill = |lab: &Lab, range: std::ops::Range<u32>| {
        let mut store = Store::open(lab.db()).unwrap();
        for i in range {
            store.begin_run(&copy(i)).unwrap();
        }
    };
    let results = seed.results.len();
    let samples: usize = seed.results.iter().map(|r| r.samples.len()).sum();
    let configs = oslab::report::pool::pool(&seed.results).len();
    let rows_per_run = 1 + results + samples + configs;

    // Without the commands' time limit: pushing 900 runs takes minutes.
    let push = |lab: &Lab| {
        let out = lab.command(&["push", "--store", &url]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let history = Lab::new();
    fill(&history, 0..100);
    let start = Instant::now();
    push(&history);
    let took = start.elapsed().as_secs_f64();
    println!(
        "push: 100 runs ({results} results, {samples} samples, {configs} configurations each: \
         {} rows) in {took:.2} s: {:.0} rows/s, {:.1} runs/s",
        100 * rows_per_run,
        (100 * rows_per_run) as f64 / took,
        100.0 / took
    );
    let rest = Lab::new();
    fill(&rest, 100..1000);
    push(&rest);
    assert_eq!(count(&url, "SELECT count(*) FROM oslab.runs"), 1000);
    for by in ["kernel", "host"] {
        let mut times = Vec::new();
        for _ in 0..5 {
            let start = Instant::now();
            let page = rest.dir().join("fleet.html");
            rest.oslab(&[
                "report",
                "--store",
                &url,
                "--by",
                by,
                "-o",
                page.to_str().unwrap(),
            ])
            .assert_code(0);
            times.push(start.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        println!(
            "fleet view --by {by} over 1000 runs ({} figure rows): median {:.3} s, min {:.3} s, \
             max {:.3} s of 5 (target < 2 s)",
            count(&url, "SELECT count(*) FROM oslab.figures"),
            times[2],
            times[0],
            times[4]
        );
    }
}

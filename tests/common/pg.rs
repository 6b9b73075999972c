//! A real PostgreSQL for the fleet store's tests: `OSLAB_TEST_PG` (a URL of a server the
//! tests may create databases on; `.ci/run` starts one), else a throwaway server this test
//! binary starts with `.ci/postgres` and stops when it exits. Each test gets a database of
//! its own. Where neither can be had the tests say they skipped, except under `CI=true`,
//! where that is a failure.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The server the tests of this binary share: its URL (to the `postgres` database).
static SERVER: OnceLock<Option<String>> = OnceLock::new();
/// The directory of a server this binary started, stopped at exit.
static STARTED: OnceLock<PathBuf> = OnceLock::new();

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/postgres")
}

extern "C" fn stop_server() {
    if let Some(dir) = STARTED.get() {
        let _ = std::process::Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(dir)
            .status();
    }
}

fn server() -> Option<String> {
    SERVER
        .get_or_init(|| {
            if let Ok(url) = std::env::var("OSLAB_TEST_PG")
                && !url.is_empty()
            {
                return Some(url);
            }
            let dir = std::env::temp_dir().join(format!("oslab-pg-{}", std::process::id()));
            let out = std::process::Command::new("bash")
                .arg(script())
                .arg("start")
                .arg(&dir)
                .output()
                .ok()?;
            if !out.status.success() {
                eprintln!(
                    "could not start a throwaway PostgreSQL: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                return None;
            }
            let _ = STARTED.set(dir);
            // SAFETY: registers a function of no arguments that only runs a command; exit
            // (the test harness's) runs it once.
            unsafe { libc::atexit(stop_server) };
            Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
        .clone()
}

/// A URL of a new, empty database on the test server, or `None` (said on stderr) where there
/// is no server; under `CI=true` no server fails the test.
pub fn fresh_database(test: &str) -> Option<String> {
    let Some(base) = server() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "{test}: no PostgreSQL (OSLAB_TEST_PG unset and .ci/postgres start failed); \
                 CI needs the fleet store's tests to run: `bash .ci/postgres install`"
            );
        }
        eprintln!("{test}: skipped: no PostgreSQL (set OSLAB_TEST_PG or install postgresql)");
        return None;
    };
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!(
        "t_{}_{}_{n}",
        test.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id()
    );
    let mut admin =
        postgres::Client::connect(&base, postgres::NoTls).expect("connect to the test server");
    admin
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .expect("create a test database");
    Some(with_database(&base, &name))
}

/// `url` with its database replaced.
pub fn with_database(url: &str, db: &str) -> String {
    let (head, tail) = url.rsplit_once('/').expect("a URL with a database");
    let query = tail
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    format!("{head}/{db}{query}")
}

/// A client of the database `url` names, for checks the CLI does not show.
pub fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).expect("connect to the test database")
}

//! Shared helpers of the integration tests: run the real `oslab` binary against a private
//! temporary database, and check the JSON contract of `run --json` / `show --json`.
//!
//! Nothing here asserts a timing value or whether a hardware counter works: the tests must
//! pass on a VM without a PMU and on a machine with one, as root or not.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tempfile::TempDir;

mod contract;
// A real PostgreSQL for the fleet store (started with .ci/postgres).
#[cfg(unix)]
pub mod pg;
// Signals, process groups and /proc: Unix's.
#[cfg(unix)]
mod drill;
#[cfg(unix)]
mod procs;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub use contract::*;
#[cfg(unix)]
#[allow(unused_imports)]
pub use drill::*;
#[cfg(unix)]
#[allow(unused_imports)]
pub use procs::*;

/// The longest any single command may take before the test gives up on it (a hung `oslab`
/// must fail the test, not hang the suite): see [`command_timeout`].
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// [`COMMAND_TIMEOUT`], or three times it where the tests run under a user-mode emulator
/// (qemu-user in CI's aarch64 step): there an emulated `run --suite unixbench --quick` took
/// 105 s of the 120 with another emulated test on the second CPU.
pub fn command_timeout() -> Duration {
    if oslab::platform::env::emulation().is_some() {
        COMMAND_TIMEOUT * 3
    } else {
        COMMAND_TIMEOUT
    }
}

/// Held while an `oslab run` measures (the tests of one binary run on parallel threads).
static MEASURING: Mutex<()> = Mutex::new(());

/// Wait for this thread's turn to measure; the turn lasts as long as the guard.
pub fn measuring_turn() -> MutexGuard<'static, ()> {
    MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `run ARGS... --json`: the command line of [`Lab::run_json`] and [`Lab::run_json_warm`].
fn json_run<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.push("--json");
    full
}

/// Result statuses the JSON contract allows.
pub const RESULT_STATUSES: [&str; 4] = ["ok", "suspect", "failed", "unsupported"];
/// Counter statuses the JSON contract allows.
pub const COUNTER_STATUSES: [&str; 3] = ["ok", "unsupported", "not_counted"];
/// The rusage fields every measured result carries per operation.
pub const RUSAGE_FIELDS: [&str; 6] = [
    "minflt", "majflt", "nvcsw", "nivcsw", "utime_us", "stime_us",
];

/// The eleven experiments of the `syscall` family, in registry order.
pub const SYSCALL_EXPERIMENTS: [&str; 11] = [
    "syscall.function_call",
    "syscall.vdso_clock_gettime",
    "syscall.clock_gettime",
    "syscall.getpid",
    "syscall.getppid",
    "syscall.getppid_libc",
    "syscall.read",
    "syscall.write",
    "syscall.fstat",
    "syscall.stat",
    "syscall.open_close",
];

/// A private directory with a database path in it; every command gets `--db` pointing there,
/// and XDG_DATA_HOME pointing into the directory too, so the user's database is never touched
/// even by a command that forgot `--db`.
pub struct Lab {
    dir: TempDir,
    db: PathBuf,
}

/// What one invocation of the binary did.
#[derive(Debug)]
pub struct Out {
    pub args: Vec<String>,
    /// `None` when the process was killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// `run` measures each configuration in one worker process unless the test says how many
/// (`--repeat`): most tests check what one experiment does, one result each. The default of
/// several processes has tests of its own.
fn one_process(args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let says = args
        .iter()
        .any(|a| a.starts_with("--repeat") || a.starts_with("--processes"));
    if args.first() == Some(&"run") && !says && !args.contains(&"--help") {
        v.insert(1, "--repeat".into());
        v.insert(2, "1".into());
    }
    v
}

impl Lab {
    pub fn new() -> Lab {
        let dir = tempfile::Builder::new()
            .prefix("oslab-it-")
            .tempdir()
            .expect("create a temporary directory");
        let db = dir.path().join("oslab.db");
        Lab { dir, db }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> &Path {
        &self.db
    }

    /// Run `oslab --db <this lab's db> ARGS...`.
    pub fn oslab(&self, args: &[&str]) -> Out {
        self.oslab_with(&self.db, args, &[])
    }

    /// Run `oslab --db DB ARGS...` with extra environment variables.
    pub fn oslab_with(&self, db: &Path, args: &[&str], envs: &[(&str, &str)]) -> Out {
        let given = one_process(args);
        let given: Vec<&str> = given.iter().map(String::as_str).collect();
        self.invoke(db, &given, envs)
    }

    /// Run `oslab --db <this lab's db> ARGS...` exactly as given: a `run` keeps oslab's own
    /// number of processes.
    pub fn oslab_as_given(&self, args: &[&str]) -> Out {
        self.invoke(&self.db, args, &[])
    }

    fn invoke(&self, db: &Path, args: &[&str], envs: &[(&str, &str)]) -> Out {
        let mut full: Vec<String> = vec!["--db".into(), db.display().to_string()];
        full.extend(args.iter().map(|a| a.to_string()));
        let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_oslab"));
        cmd.args(&full)
            .env_remove("OSLAB_DB")
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .current_dir(self.dir.path())
            .env("PWD", self.dir.path())
            .timeout(command_timeout());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        // Measuring commands take turns: every worker is pinned to the same CPU by default,
        // and two experiments sharing it would measure each other.
        let _turn = matches!(args.first(), Some(&"run" | &"profile")).then(measuring_turn);
        let start = Instant::now();
        let output = cmd.output().expect("start the oslab binary");
        Out {
            args: full,
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
            elapsed: start.elapsed(),
        }
    }

    /// A `std::process::Command` for `oslab --db <this lab's db> ARGS...` with the same
    /// environment as [`Lab::oslab`], for tests that need to watch or signal the process.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_oslab"));
        cmd.arg("--db")
            .arg(&self.db)
            .args(one_process(args))
            .env_remove("OSLAB_DB")
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .current_dir(self.dir.path())
            .env("PWD", self.dir.path());
        cmd
    }

    /// `oslab run ARGS... --json`, expecting exit code `code`; returns the parsed document.
    pub fn run_json(&self, args: &[&str], code: i32) -> Value {
        let out = self.oslab(&json_run(args));
        out.assert_code(code);
        out.assert_stored();
        out.json()
    }

    /// [`Lab::run_json`] expecting exit code 0, by way of [`Lab::run_warm`].
    pub fn run_json_warm(&self, args: &[&str]) -> Value {
        let out = self.run_warm(&json_run(args));
        out.assert_stored();
        out.json()
    }

    /// `oslab ARGS...` (a run, with or without `--json`) expecting exit code 0, run once more
    /// where it exited 4 and the only checks that failed in its stored run are blocks read
    /// that cached file-system metadata should have spared (`inblock per op < …`). A fresh
    /// CI machine's builds write tens of GiB beside the tests, and the page cache evicts
    /// directory and inode-table blocks meanwhile (0.054 blocks per create against < 0.05 in
    /// one CI run): the check is right to call that result suspect, and the first run read
    /// the blocks back in. Any other failure stands.
    pub fn run_warm(&self, args: &[&str]) -> Out {
        let out = self.oslab(args);
        if out.code != Some(4) || !self.only_evicted_blocks() {
            out.assert_code(0);
            return out;
        }
        eprintln!(
            "metadata blocks were read (evicted by the machine's other work); run again\n{out}"
        );
        let again = self.oslab(args);
        again.assert_code(0);
        again
    }

    /// Whether the last stored run's only failed checks are `inblock per op` bounds.
    fn only_evicted_blocks(&self) -> bool {
        let shown = self.oslab(&["show", "--json"]);
        shown.assert_code(0);
        let doc = shown.json();
        let failed: Vec<&Value> = results(&doc)
            .iter()
            .flat_map(|r| r["validation"].as_array().into_iter().flatten())
            .filter(|v| v["ok"] == false)
            .collect();
        !failed.is_empty()
            && failed.iter().all(|v| {
                v["check"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("inblock per op <"))
            })
    }
}

impl Out {
    /// A run reports where it was stored, on stderr.
    pub fn assert_stored(&self) {
        assert!(
            self.stderr.contains("stored as run"),
            "a run reports where it was stored on stderr\n{self}"
        );
    }

    pub fn assert_code(&self, code: i32) -> &Out {
        assert_eq!(
            self.code,
            Some(code),
            "exit code of oslab {:?}\n{self}",
            self.args
        );
        self
    }

    /// stdout parsed as exactly one JSON document (nothing else may be printed there).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout of oslab {:?} is not one JSON document: {e}\n{self}",
                self.args
            )
        })
    }

    /// A mistake the user can fix: exit code 2, one line on stderr that starts with `oslab: `
    /// and contains every one of `needles` (the fix it names), nothing on stdout.
    pub fn assert_user_error(&self, needles: &[&str]) -> String {
        self.assert_code(2);
        assert!(
            self.stdout.is_empty(),
            "a user error prints nothing on stdout\n{self}"
        );
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "a user error is exactly one line on stderr\n{self}"
        );
        assert!(
            self.stderr.ends_with('\n'),
            "the error line is terminated\n{self}"
        );
        let line = lines[0];
        assert!(
            line.starts_with("oslab: "),
            "the error line starts with 'oslab: '\n{self}"
        );
        assert!(
            line.len() > "oslab: ".len() + 10,
            "the error line says something\n{self}"
        );
        for needle in needles {
            assert!(
                line.contains(needle),
                "the error line mentions {needle:?}\n{self}"
            );
        }
        line.to_string()
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A run document is summarised (its environment alone would fill the screen).
        let stdout = match serde_json::from_str::<Value>(&self.stdout) {
            Ok(doc) if doc["results"].is_array() => summary(&doc),
            _ => self.stdout.chars().take(4000).collect(),
        };
        write!(
            f,
            "--- oslab {:?}: exit {:?} after {:.2?}\n--- stdout ({} bytes):\n{stdout}\n--- stderr:\n{}",
            self.args,
            self.code,
            self.elapsed,
            self.stdout.len(),
            self.stderr
        )
    }
}

/// One line per result of a run document: what a failing assertion needs to see.
pub fn summary(doc: &Value) -> String {
    let mut text = format!("run {} clock {}\n", doc["run_id"], doc["clock"]["source"]);
    for r in doc["results"].as_array().into_iter().flatten() {
        let failed: Vec<&Value> = r["validation"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["ok"] != true)
            .collect();
        text.push_str(&format!(
            "  {} {} status={} reason={} samples={} median={} stop={} rusage={} contamination={} failed_checks={failed:?}\n",
            r["experiment"],
            r["params"],
            r["status"],
            r["reason"],
            r["samples"],
            r["median"],
            r["stop_reason"],
            r["rusage"],
            r["contamination"],
        ));
    }
    text
}

/// The user-mode emulator this test binary (and so the oslab it starts) runs under, in words
/// (qemu-user through binfmt_misc: `oslab env` says the same); `None` on native hardware.
pub fn emulation() -> Option<String> {
    oslab::platform::env::emulation()
}

/// In a test whose subject user-mode emulation cannot show (pre-faulting, vfork, fault and
/// switch counts, /proc views, tracing): the emulator, with the reason on stderr, so the test
/// checks what emulation does instead; `None` natively, where the test checks its subject.
pub fn unsupported_under_emulation(what: &str) -> Option<String> {
    let why = emulation()?;
    eprintln!("{what}: unsupported under emulation ({why})");
    Some(why)
}

/// Under emulation, a result is measured and says so, and no expectation of it is judged:
/// `emulation` names the emulator and every check holds with a detail saying why it was not
/// checked (`validate::UNDER_EMULATION`).
pub fn assert_unjudged_under_emulation(r: &Value) {
    let name = &r["experiment"];
    assert!(
        r["emulation"].as_str().is_some_and(|e| !e.is_empty())
            && r["emulation"].as_str().map(str::to_string) == emulation(),
        "{name}: the result names its emulator: {r:#}"
    );
    let validation = r["validation"].as_array().expect("validation is an array");
    assert!(!validation.is_empty(), "{name}: the expectations are shown");
    for v in validation {
        assert_eq!(v["ok"], true, "{name}: {v}");
        assert!(
            v["detail"]
                .as_str()
                .is_some_and(|d| d.contains("unsupported under emulation")),
            "{name}: the check says emulation kept it from being judged: {v}"
        );
    }
}

/// The kernel release as `uname -r` prints it, from uname(2) (a system without the command,
/// such as the FreeBSD test guest, has the call).
#[cfg(unix)]
pub fn kernel_release() -> String {
    // SAFETY: utsname is plain data; all zeroes is a valid value, and uname fills it.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: a valid, writable utsname.
    assert_eq!(unsafe { libc::uname(&mut uts) }, 0, "uname(2)");
    // SAFETY: uname NUL-terminates the release.
    unsafe { std::ffi::CStr::from_ptr(uts.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Windows' version as its registry gives it (`10.0.19045.3803`), the figure oslab records as
/// the kernel release (Windows has no `uname`).
#[cfg(windows)]
pub fn kernel_release() -> String {
    oslab::platform::env::collect()
        .kernel_release
        .expect("the registry's CurrentBuildNumber")
}

/// The `results` array of a run document.
pub fn results(doc: &Value) -> &Vec<Value> {
    doc["results"]
        .as_array()
        .unwrap_or_else(|| panic!("`results` is an array: {doc:#}"))
}

/// The experiment names of a run document's results, in order.
pub fn experiment_names(doc: &Value) -> Vec<String> {
    results(doc)
        .iter()
        .map(|r| {
            r["experiment"]
                .as_str()
                .expect("experiment name")
                .to_string()
        })
        .collect()
}

/// The one result of `experiment` in a run document: for a system-call rung measured on
/// several paths into the kernel, the one on the called path (`entry=call`, the headline).
pub fn result<'a>(doc: &'a Value, experiment: &str) -> &'a Value {
    let found: Vec<&Value> = results(doc)
        .iter()
        .filter(|r| r["experiment"] == experiment)
        .filter(|r| r["params"]["entry"].is_null() || r["params"]["entry"] == "call")
        .collect();
    assert_eq!(
        found.len(),
        1,
        "exactly one result of {experiment} in {:?}",
        experiment_names(doc)
    );
    found[0]
}

pub fn num(v: &Value, what: &str) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("{what} is a number, found {v}"))
}

fn object<'a>(v: &'a Value, what: &str) -> &'a Map<String, Value> {
    v.as_object()
        .unwrap_or_else(|| panic!("{what} is an object, found {v}"))
}

fn non_empty_str(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.trim().is_empty())
}

/// Whether `dir` is on a file system that keeps its files in memory (tmpfs, ramfs).
pub fn memory_backed(dir: &Path) -> bool {
    oslab::platform::mount::mount_of(dir).is_ok_and(|m| m.memory_backed())
}

/// A temporary directory on a memory-backed /dev/shm, or `None` where there is none (the
/// test that needs one then has nothing to check).
pub fn shm_dir(prefix: &str) -> Option<TempDir> {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() || !memory_backed(shm) {
        return None;
    }
    tempfile::Builder::new().prefix(prefix).tempdir_in(shm).ok()
}

/// `n` timing-like values around `center`, spread ±`rel`, fixed (no randomness).
pub fn spread(center: f64, rel: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| center * (1.0 + rel * (((i * 7) % 13) as f64 / 6.0 - 1.0)))
        .collect()
}

/// An `ok` result of `experiment` with one sample per value (1000 ops each, a minor fault
/// every other sample), as the store would hold it: the fixture of the compare and report
/// tests.
pub fn synthetic_result(
    experiment: &str,
    params: &[(&str, &str)],
    values: &[f64],
) -> oslab::model::ExperimentResult {
    let mut r = oslab::model::ExperimentResult::from_values(experiment, params, values, 1000);
    for (i, s) in r.samples.iter_mut().enumerate() {
        s.rusage.minflt = (i % 2) as i64;
    }
    r
}

/// A run holding `results` as the compare, report and fleet tests build them: quick, one CPU,
/// a TSC clock, Linux on x86-64 with `kernel`, started at 1.7e9 + `id` seconds.
pub fn synthetic_run(
    id: i64,
    tag: &str,
    kernel: &str,
    results: Vec<oslab::model::ExperimentResult>,
) -> oslab::model::Run {
    oslab::model::Run {
        id,
        uuid: String::new(),
        started_at: 1_700_000_000.0 + id as f64,
        finished_at: Some(1_700_000_100.0 + id as f64),
        tag: Some(tag.into()),
        oslab_version: "0.1.0".into(),
        settings: oslab::model::RunSettings {
            quick: true,
            precision: 0.05,
            cpus: vec![1],
            ..oslab::model::RunSettings::default()
        },
        clock: oslab::model::ClockInfo {
            source: "tsc".into(),
            reason: "invariant".into(),
            tsc_hz: Some(2.5e9),
            overhead_ns: 20.0,
            resolution_ns: 10.0,
        },
        environment: oslab::model::env::Environment {
            cpu_model: Some("Test CPU".into()),
            kernel_release: Some(kernel.into()),
            os: "linux".into(),
            arch: "x86_64".into(),
            ..oslab::model::env::Environment::default()
        },
        results,
    }
}

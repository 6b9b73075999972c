//! The fault drills' tools: oslab started so that the test can interrupt or kill it (alone or
//! with its process group, as a terminal's Ctrl-C does), a private temporary directory so
//! that what a killed oslab leaves there can be seen, and the checks every drill ends with —
//! the database whole, no file half-written, no process or directory left behind.

#![allow(dead_code)]

use std::process::ExitStatus;

use super::*;

/// A run whose worker hangs beside a memory load (a competitor in a memory cgroup) until it is
/// interrupted or killed, or the 60 s limit passes: the drills' and the load tests' target.
/// The worker hangs at its 40th batch: a precision no run reaches and a budget of 5 s keep it
/// sampling until then (with `--quick`'s 5% alone, a quiet machine reached it in 17 samples,
/// the run ended in 0.8 s without hanging, and a Ctrl-C drill found exit 0, 2026-12-04).
pub const HANG_UNDER_MEMORY_LOAD: [&str; 13] = [
    "run",
    "synthetic.spin",
    "--param",
    "mode=hang",
    "--quick",
    "--precision",
    "0.01",
    "--budget",
    "5",
    "--load",
    "memory",
    "--timeout",
    "60",
];

/// A tiny xorshift generator: the drills pick their moments at random, and print the seed so
/// that a failure can be replayed (`OSLAB_DRILL_SEED=N`).
pub struct Moments(u64);

impl Moments {
    pub fn new() -> Moments {
        let seed = std::env::var("OSLAB_DRILL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            })
            | 1;
        eprintln!("drill seed {seed} (OSLAB_DRILL_SEED={seed} replays it)");
        Moments(seed)
    }

    /// A moment between zero and `max`.
    pub fn upto(&mut self, max: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let fraction = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        max.mul_f64(fraction)
    }
}

/// One oslab the drill will interrupt or kill: its stderr goes to a file read afterwards.
pub struct Drilled {
    pub child: KillOnDrop,
    pub marker: String,
    stderr: PathBuf,
}

/// Start `oslab --db <lab's db> ARGS` with `marker` in its environment, TMPDIR set to `tmp`
/// (where its workers' scratch directories go), SIGINT at its default disposition, and —
/// when `own_group` — leading a process group of its own, as a shell's foreground job does.
pub fn start(lab: &Lab, args: &[&str], tmp: &Path, own_group: bool) -> Drilled {
    start_on(lab, lab.db(), args, tmp, own_group)
}

/// [`start`] with another database than the lab's.
pub fn start_on(lab: &Lab, db: &Path, args: &[&str], tmp: &Path, own_group: bool) -> Drilled {
    use std::os::unix::process::CommandExt;
    let marker = unique_marker("drill");
    let stderr = lab.dir().join(format!("stderr-{marker}"));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_oslab"));
    cmd.arg("--db")
        .arg(db)
        .args(one_process(args))
        .env_remove("OSLAB_DB")
        .env("XDG_DATA_HOME", lab.dir().join("xdg"))
        .env(MARKER_VAR, &marker)
        .env("TMPDIR", tmp)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("stderr file"));
    // SAFETY: signal(2) and setpgid(2) are async-signal-safe, the only calls made between
    // fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            if own_group {
                libc::setpgid(0, 0);
            }
            Ok(())
        });
    }
    Drilled {
        child: KillOnDrop(cmd.spawn().expect("start oslab")),
        marker,
        stderr,
    }
}

impl Drilled {
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// Send `signal` to oslab, or to its whole process group (`group`: it must lead one).
    pub fn signal(&self, signal: i32, group: bool) {
        let pid = self.pid() as libc::pid_t;
        let target = if group { -pid } else { pid };
        // SAFETY: signalling our own child (or the group it leads), not yet reaped.
        let rc = unsafe { libc::kill(target, signal) };
        assert_eq!(rc, 0, "kill({target}, {signal})");
    }

    /// Wait for oslab to end, at most a minute.
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.0.try_wait().expect("wait for oslab") {
                return status;
            }
            assert!(Instant::now() < deadline, "oslab did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether oslab has ended (reaping it if so).
    pub fn ended(&mut self) -> bool {
        self.child.0.try_wait().expect("wait for oslab").is_some()
    }

    /// What oslab wrote on stderr (complete once it has ended).
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Wait until one of oslab's workers runs and return its pid (`None` if oslab ended
    /// first).
    pub fn first_worker(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(pid) = workers(&self.marker).first() {
                return Some(*pid);
            }
            if self.ended() {
                return None;
            }
            assert!(Instant::now() < deadline, "no worker started");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Every process that inherited the marker is gone (after two seconds' grace for the
    /// kernel to tear down what is dying).
    pub fn assert_no_process_left(&self) {
        let left = marked_processes_after_grace(MARKER_VAR, &self.marker);
        assert!(left.is_empty(), "processes outlived oslab: {left:?}");
    }
}

/// oslab ended as Ctrl-C must end it: exit code 130 and, on stderr, exactly one `oslab: `
/// line saying it was interrupted — or, when the signal came before oslab noted it (the
/// first instants of the process, or before a command starts writing), killed by SIGINT with
/// nothing to say. Returns whether oslab noted it.
pub fn assert_interrupted(status: ExitStatus, stderr: &str) -> bool {
    assert_stopped_by(libc::SIGINT, status, stderr)
}

/// [`assert_interrupted`] for any of the signals oslab notes (SIGINT, SIGTERM, SIGHUP).
pub fn assert_stopped_by(signal: i32, status: ExitStatus, stderr: &str) -> bool {
    use std::os::unix::process::ExitStatusExt;
    if status.signal() == Some(signal) {
        assert!(stderr.is_empty(), "killed at once, yet it said: {stderr}");
        return false;
    }
    assert_eq!(status.code(), Some(130), "exit status {status:?}: {stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("oslab: "))
        .collect();
    assert_eq!(lines.len(), 1, "one error line: {stderr}");
    let name = oslab::platform::interrupt::signal_name(signal);
    assert!(
        lines[0].contains(&format!("interrupted by {name}")),
        "{stderr}"
    );
    true
}

/// SQLite's own check of every page of `db`: "ok" for a whole database.
pub fn quick_check(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.query_row("PRAGMA quick_check", [], |row| row.get::<_, String>(0))
        .expect("PRAGMA quick_check")
}

/// The database is whole and oslab reads it: `show --list` works and SQLite's quick check
/// says ok. Returns the listing. A database that was never set up (oslab stopped before it
/// created the schema) reads as no database at all.
pub fn assert_db_intact(lab: &Lab) -> String {
    if !lab.db().exists() {
        return String::new();
    }
    let list = lab.oslab(&["show", "--list"]);
    if list.code == Some(2) && list.stderr.contains("no database") {
        return String::new();
    }
    list.assert_code(0);
    assert_eq!(quick_check(lab.db()), "ok");
    let journal = lab.db().with_extension("db-journal");
    assert!(
        !is_hot_journal(&journal),
        "a rollback journal with content was left behind after oslab read the database"
    );
    list.stdout
}

/// Whether `journal` exists with a journal header SQLite would roll back. A kill -9 between
/// SQLite creating the journal file and writing its header leaves an empty (or zeroed) file,
/// which SQLite ignores and reuses: the database is whole. One with a header, once oslab has
/// read the database again, means the rollback did not happen.
fn is_hot_journal(journal: &std::path::Path) -> bool {
    /// The first eight bytes of a rollback journal's header (sqlite.org/fileformat2.html).
    const MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];
    match std::fs::read(journal) {
        Ok(bytes) => bytes.len() >= MAGIC.len() && bytes[..MAGIC.len()] == MAGIC,
        Err(_) => false,
    }
}

/// No rollback journal beside the database: oslab did not die in the middle of a
/// transaction (SQLite would roll it back at the next open, but Ctrl-C must not come to that).
pub fn assert_no_journal(lab: &Lab) {
    let journal = lab.db().with_extension("db-journal");
    assert!(
        !journal.exists(),
        "oslab was stopped in the middle of a transaction"
    );
}

/// The ids of the runs a `show --list` lists, in increasing order.
pub fn listed_runs(list: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = list
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}

/// Every file in `dir` whose name starts with `prefix`.
pub fn named(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// A lab whose database holds one quick run of one process.
pub fn lab_with_a_run() -> Lab {
    let lab = Lab::new();
    lab.oslab(&["run", "syscall.function_call", "--quick", "--budget", "0.2"])
        .assert_code(0);
    lab
}

/// An export of a large run (`results` results of `samples` samples each, copied from a
/// quick real run, so that it is as plausible as a measured one), written into the lab's
/// directory: big enough that exporting or importing it takes a while.
pub fn big_export(lab: &Lab, results: usize, samples: usize) -> PathBuf {
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: Value = serde_json::from_str(&out.stdout).expect("an export");
    let result = doc["run"]["results"][0].clone();
    let measured = result["samples"].as_array().expect("samples").clone();
    let mut big = result;
    big["samples"] = Value::Array(measured.iter().cycle().take(samples).cloned().collect());
    doc["run"]["results"] = Value::Array(vec![big; results]);
    // Another run than the one it was made from: without that run's identity.
    doc["run"].as_object_mut().expect("a run").remove("uuid");
    let path = lab.dir().join("big.json");
    std::fs::write(&path, doc.to_string()).expect("write the big export");
    path
}

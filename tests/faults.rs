//! The fault drill, for real: oslab killed with SIGKILL mid-run, full disks and file-size
//! limits, a damaged database, impossible imports, absurd options. Each drill asserts what a
//! user must be able to count on: the database intact (or refused untouched), no partial
//! output file, nothing left behind, one line on stderr naming the fix, a documented exit
//! code — and no panic.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Lab, MARKER_VAR, lab_with_a_run, leftovers, named, unique_marker, workers};

/// `kill -9` of oslab while a worker measures in `--dir`: its work directory stays behind
/// (nothing can remove it then), and the next run removes it; the database keeps the run as
/// interrupted and stays readable.
#[test]
fn a_killed_oslab_leaves_nothing_the_next_run_keeps() {
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_marker("kill9");
    let dir_arg = dir.path().to_str().unwrap();
    let mut child = lab.command(&[
        "run",
        "synthetic.spin",
        "--param",
        "mode=hang",
        "fs.stat",
        "--quick",
        // Sampling goes on to the 40th batch, where the worker hangs (tests/common/drill.rs).
        "--precision",
        "0.01",
        "--dir",
        dir_arg,
        "--timeout",
        "60",
    ]);
    let _turn = common::measuring_turn();
    let mut child = child
        .env(MARKER_VAR, &marker)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start oslab");
    // Wait until the hanging worker runs, then kill oslab itself, not the worker.
    let deadline = Instant::now() + Duration::from_secs(30);
    while workers(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!workers(&marker).is_empty(), "a worker started");
    child.kill().expect("SIGKILL oslab");
    child.wait().expect("reap oslab");
    // Its worker dies with it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !workers(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        workers(&marker).is_empty(),
        "no worker outlives a killed oslab"
    );
    drop(_turn);

    // The database holds the interrupted run and reads fine.
    let show = lab.oslab(&["show", "--list"]);
    show.assert_code(0);
    assert!(show.stdout.contains("interrupted"), "{show}");

    // A left-behind work directory in --dir (the fs experiment did not start: plant one as
    // the killed oslab's would be named) goes with the next run.
    let planted = dir.path().join(format!(".oslab-{}-left", 1u32 << 30));
    std::fs::create_dir(&planted).unwrap();
    lab.oslab(&[
        "run", "fs.stat", "--quick", "--budget", "0.2", "--dir", dir_arg,
    ])
    .assert_code(0);
    assert!(!planted.exists(), "the dead oslab's directory was removed");
    assert_eq!(common::leftovers(dir.path()), Vec::<String>::new());
}

/// Output that cannot be written — a full disk, the file-size limit, a missing directory —
/// exits 2 with one line naming the fix, the same for stdout and `-o`, and leaves no file.
#[test]
fn output_failures_are_one_line_exit_2_and_leave_no_file() {
    let lab = lab_with_a_run();
    let out = lab.oslab(&["export", "1", "-o", "/dev/full"]);
    let line = out.assert_user_error(&["cannot write /dev/full", "disk is full"]);
    assert!(!line.is_empty());

    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let status = lab
        .command(&["export", "1"])
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run oslab");
    assert_eq!(status.status.code(), Some(2), "{status:?}");
    let err = String::from_utf8_lossy(&status.stderr);
    assert!(
        err.contains("cannot write stdout") && err.lines().count() == 1,
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("run.json");
    let script = format!(
        "ulimit -f 1; exec {} --db {} export 1 -o {}",
        env!("CARGO_BIN_EXE_oslab"),
        lab.db().display(),
        target.display()
    );
    let limited = Command::new("sh").args(["-c", &script]).output().unwrap();
    if common::unsupported_under_emulation("the file-size limit").is_some() {
        // qemu-user answers the start-up's read of /proc/self/maps from a temporary file it
        // writes: the limit cuts that, and SIGXFSZ kills the emulator before oslab runs.
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(limited.status.signal(), Some(libc::SIGXFSZ), "{limited:?}");
    } else {
        assert_eq!(limited.status.code(), Some(2), "{limited:?}");
        let err = String::from_utf8_lossy(&limited.stderr);
        assert!(err.contains("file-size limit"), "{err}");
    }
    assert!(!target.exists(), "no truncated file at the user's path");
    assert_eq!(named(dir.path(), ".oslab-out-"), Vec::<String>::new());

    // What -o writes has the mode a plain create gives (0666 less the umask), not a
    // temporary file's 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let written = dir.path().join("whole.json");
    lab.oslab(&["export", "1", "-o", written.to_str().unwrap()])
        .assert_code(0);
    let plain = dir.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    assert_eq!(mode(&written), mode(&plain));

    lab.oslab(&["report", "1", "-o", "/nonexistent-dir/r.html"])
        .assert_user_error(&["cannot write /nonexistent-dir/r.html", "does not exist"]);
}

/// A database with damaged pages is refused before anything is written to it.
#[test]
fn a_corrupt_database_is_refused_untouched() {
    let lab = lab_with_a_run();
    let mut bytes = std::fs::read(lab.db()).unwrap();
    let page = 4096;
    assert!(bytes.len() > 6 * page, "a database of several pages");
    for off in (2 * page + 100..6 * page).step_by(7) {
        bytes[off] = 0xAB;
    }
    std::fs::write(lab.db(), &bytes).unwrap();
    lab.oslab(&["run", "syscall.function_call", "--quick", "--budget", "0.2"])
        .assert_user_error(&["is corrupt", ".recover", "another --db"]);
    assert_eq!(
        std::fs::read(lab.db()).unwrap(),
        bytes,
        "nothing was written"
    );
}

/// An export edited into values no measurement gives is refused, one line per problem, and
/// the database is left as it was.
#[test]
fn an_impossible_import_is_refused_line_by_line() {
    let lab = lab_with_a_run();
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let result = &mut doc["run"]["results"][0];
    result["experiment"] = "syscall.teleport".into();
    result["samples"][0]["elapsed_ns"] = (-1.0).into();
    result["samples"][1]["ops"] = 0.into();
    result["samples"][2]["ns_per_op"] = 1.7e308.into();
    let file = lab.dir().join("edited.json");
    std::fs::write(&file, doc.to_string()).unwrap();

    let other = Lab::new();
    let refused = other.oslab(&["import", file.to_str().unwrap()]);
    refused.assert_code(2);
    for needle in [
        "no such experiment",
        "sample 1 took -1 ns",
        "sample 2 has 0 operations",
        "nothing was imported",
    ] {
        assert!(refused.stderr.contains(needle), "{needle}\n{refused}");
    }
    assert!(
        !other.db().exists(),
        "no database was created for a refused import"
    );

    doc["run"]["results"] = serde_json::json!([]);
    std::fs::write(&file, doc.to_string()).unwrap();
    other
        .oslab(&["import", file.to_str().unwrap()])
        .assert_user_error(&["the run has no results"]);
}

/// Times no clock gives (the year 292277026596, a run before 1970, finished before it
/// started) and times per operation that disagree with their own samples' elapsed time
/// (1.7e308 and 1e-300 ns alternating, elapsed_ns untouched) are refused, one line each.
#[test]
fn implausible_times_and_samples_are_refused() {
    let lab = lab_with_a_run();
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let file = lab.dir().join("edited.json");
    let other = Lab::new();
    let refused = |doc: &serde_json::Value, needles: &[&str]| {
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = other.oslab(&["import", file.to_str().unwrap()]);
        out.assert_code(2);
        for needle in needles.iter().chain(&["nothing was imported"]) {
            assert!(out.stderr.contains(needle), "{needle}\n{out}");
        }
        assert!(!other.db().exists(), "nothing was stored");
    };
    let started = doc["run"]["started_at"].as_f64().unwrap();
    for (at, needle) in [
        (
            1e308,
            "the run started at 1e308 s, more than a day after now",
        ),
        (-1e18, "the run started at -1e18 s, before 1970"),
    ] {
        let mut d = doc.clone();
        d["run"]["started_at"] = at.into();
        refused(&d, &[needle]);
    }
    let mut d = doc.clone();
    d["run"]["finished_at"] = (started - 100.0).into();
    refused(&d, &["the run finished at", "before it started"]);
    let mut d = doc.clone();
    let samples = d["run"]["results"][0]["samples"].as_array_mut().unwrap();
    assert!(samples.len() >= 2, "a quick run takes several samples");
    for (k, s) in samples.iter_mut().enumerate() {
        s["ns_per_op"] = if k % 2 == 0 { 1.7e308 } else { 1e-300 }.into();
    }
    refused(
        &d,
        &[
            "sample 1 has 1.7e308 ns per operation where its elapsed_ns, ops and calibration give",
            "sample 2 has 1e-300 ns per operation",
        ],
    );
}

/// Options no run can honour are refused in one line, before anything is measured or stored.
#[test]
fn absurd_options_are_one_line_errors() {
    let lab = Lab::new();
    for (args, needles) in [
        (vec!["--timeout=1e19"], vec!["--timeout", "a week"]),
        (vec!["--timeout=1e20"], vec!["--timeout", "a week"]),
        (vec!["--timeout=nan"], vec!["--timeout"]),
        (
            vec!["--timeout=1e-10"],
            vec!["--timeout 0.0000000001", "from 1"],
        ),
        (vec!["--timeout=0.5"], vec!["--timeout 0.5", "from 1"]),
        (vec!["--budget=1e300"], vec!["--budget", "3600"]),
        (vec!["--budget=1e-9"], vec!["--budget", "0.01"]),
        (vec!["--cpu", "0,0"], vec!["CPU 0 is named twice"]),
        (
            vec!["--cpu-turns", "0"],
            vec!["--cpu-turns 0", "two CPUs or more"],
        ),
        (
            vec!["--cpu-turns", "0,0"],
            vec!["--cpu-turns 0,0", "named twice"],
        ),
        (
            vec!["--cpu-turns", "0,999"],
            vec!["--cpu-turns 0,999", "CPU 999 is offline"],
        ),
        (
            vec!["--cpu-turns", "x"],
            vec!["--cpu-turns x", "not a CPU list"],
        ),
        (
            vec!["--cpu-turns", "0,1", "--cpu", "0"],
            vec!["--cpu-turns", "cannot be used with", "--cpu"],
        ),
        (vec!["--precision", "-1"], vec!["--precision=-1"]),
        (vec!["--repeat", "0"], vec!["--repeat", "1 to 1000"]),
    ] {
        let mut full = vec!["run", "syscall.function_call"];
        full.extend(args);
        lab.oslab(&full).assert_user_error(&needles);
    }
    assert!(!lab.db().exists(), "nothing was stored");
}

/// A tmpfs of `size` mounted on a temporary directory, unmounted when dropped.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    /// Mount one, or say why it cannot be done here (not root, no mount(8);
    /// `OSLAB_DRILL_NO_MOUNT=1` tries the fallback where mounting works).
    fn mount(size: &str) -> Result<Tmpfs, String> {
        if std::env::var_os("OSLAB_DRILL_NO_MOUNT").is_some() {
            return Err("OSLAB_DRILL_NO_MOUNT is set".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Tmpfs(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Fill what is left of it.
    fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.path().join("filler")).unwrap();
        let block = vec![0xA5u8; 4096];
        while filler.write_all(&block).is_ok() {}
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.path()).status();
    }
}

/// `oslab ARGS` under a file-size limit of `blocks` (sh's `ulimit -f`).
fn limited(lab: &Lab, db: &Path, blocks: u32, args: &str) -> common::Out {
    under_ulimit(lab, db, &format!("-f {blocks}"), args)
}

/// `oslab --db DB ARGS` in a shell that sets `ulimit LIMIT` first.
fn under_ulimit(lab: &Lab, db: &Path, limit: &str, args: &str) -> common::Out {
    let script = format!(
        "ulimit {limit}; exec {} --db {} {args}",
        env!("CARGO_BIN_EXE_oslab"),
        db.display()
    );
    let start = Instant::now();
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("XDG_DATA_HOME", lab.dir().join("xdg"))
        .output()
        .unwrap();
    common::Out {
        args: vec![script],
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: start.elapsed(),
    }
}

/// SQLite says "disk I/O error" for a database write refused by the file-size limit: the
/// line names the limit and its fix instead, and the database keeps what it held.
#[test]
fn a_file_size_limit_on_the_database_is_named() {
    let lab = lab_with_a_run();
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    doc["run"].as_object_mut().unwrap().remove("uuid");
    doc["run"]["tag"] = "another".into();
    let file = lab.dir().join("doc.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    // No room to grow: the import's pages go past the limit.
    let blocks = u32::try_from(std::fs::metadata(lab.db()).unwrap().len() / 512).unwrap();
    let import = format!("import {}", file.display());
    limited(&lab, lab.db(), blocks, &import).assert_user_error(&[
        "oslab.db",
        "file-size limit (ulimit -f)",
        "ulimit -f unlimited",
    ]);
    assert_eq!(common::quick_check(lab.db()), "ok");
    let list = lab.oslab(&["show", "--list"]);
    assert_eq!(common::listed_runs(&list.stdout), [1], "{list}");
}

/// A full file system — a 64 KiB tmpfs where mounting is allowed, else the file-size limit —
/// under a new database and under `export -o`: one line that says so, exit 2, and no file
/// left (not even an empty database). A database on a file system that fills up later keeps
/// what it held and reads fine.
#[test]
fn a_full_file_system_is_one_line_and_leaves_no_file() {
    let lab = lab_with_a_run();
    let run = "run syscall.function_call --quick --budget 0.2 --repeat 1";
    let fs = match Tmpfs::mount("64k") {
        Ok(fs) => fs,
        Err(why) => {
            // Not root (CI): the file-size limit fails the same writes.
            eprintln!("no tmpfs here ({why}): the file-size limit stands in for a full disk");
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("x.db");
            let _turn = common::measuring_turn();
            limited(&lab, &db, 0, run).assert_user_error(&["x.db", "another --db"]);
            assert_eq!(leftovers(dir.path()), Vec::<String>::new());
            let target = dir.path().join("out.json");
            let export = format!("export 1 -o {}", target.display());
            limited(&lab, lab.db(), 1, &export).assert_user_error(&["file-size limit"]);
            assert_eq!(leftovers(dir.path()), Vec::<String>::new());
            return;
        }
    };
    let db = fs.path().join("x.db");
    let args: Vec<&str> = run.split(' ').collect();
    lab.oslab_with(&db, &args, &[]).assert_user_error(&[
        "x.db",
        "the disk is full",
        "another --db",
    ]);
    assert_eq!(leftovers(fs.path()), Vec::<String>::new());
    // Full whatever the export's size (a run measured under qemu-user fits in 64 KiB).
    fs.fill();
    let target = fs.path().join("out.json");
    lab.oslab(&["export", "1", "-o", target.to_str().unwrap()])
        .assert_user_error(&["cannot write", "out.json", "the disk is full"]);
    assert_eq!(leftovers(fs.path()), vec!["filler".to_string()]);
    drop(fs);

    // Room for a database with a run, then none.
    let fs = Tmpfs::mount("512k").expect("a second tmpfs");
    let db_lab_db = fs.path().join("oslab.db");
    lab.oslab_with(&db_lab_db, &args, &[]).assert_code(0);
    fs.fill();
    lab.oslab_with(&db_lab_db, &args, &[])
        .assert_user_error(&["oslab.db", "the disk is full"]);
    let list = lab.oslab_with(&db_lab_db, &["show", "--list"], &[]);
    list.assert_code(0);
    assert_eq!(common::listed_runs(&list.stdout), [1], "{list}");
    assert_eq!(common::quick_check(&db_lab_db), "ok");
    let mut left = leftovers(fs.path());
    left.sort();
    assert_eq!(left, ["filler", "oslab.db"], "no journal, nothing else");
    std::fs::remove_file(fs.path().join("filler")).unwrap();

    // The disk fills while a worker measures: the result cannot be stored; the run stays as
    // interrupted, the worker goes, the database reads fine.
    let tmp = tempfile::tempdir().unwrap();
    let hang = [
        "run",
        "synthetic.spin",
        "--param",
        "mode=hang",
        "--quick",
        "--precision",
        "0.01",
        "--timeout",
        "1",
    ];
    let mut oslab = {
        let _turn = common::measuring_turn();
        let mut oslab = common::start_on(&lab, &db_lab_db, &hang, tmp.path(), false);
        assert!(oslab.first_worker().is_some(), "{}", oslab.stderr());
        fs.fill();
        let status = oslab.wait();
        assert_eq!(status.code(), Some(2), "{}", oslab.stderr());
        oslab
    };
    let stderr = oslab.stderr();
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("oslab: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("the disk is full"), "{stderr}");
    assert!(oslab.ended());
    oslab.assert_no_process_left();
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
    let list = lab.oslab_with(&db_lab_db, &["show", "--list"], &[]);
    list.assert_code(0);
    assert_eq!(common::listed_runs(&list.stdout), [1, 2], "{list}");
    assert!(list.stdout.contains("interrupted"), "{list}");
    assert_eq!(common::quick_check(&db_lab_db), "ok");
}

/// What a user-mode emulator takes of the address space itself, MiB: qemu-user maps a 128 MiB
/// translation buffer and the guest's binary and libraries into its own (under 160 MiB it
/// cannot even start: "allocate 134217728 bytes for jit buffer: Cannot allocate memory").
const EMULATOR_MB: u64 = 1024;

/// `oslab ARGS` under an address-space limit of `mb` MiB (sh's `ulimit -v`, prlimit's `--as`);
/// under emulation, `mb` more than the emulator's own [`EMULATOR_MB`] (a weaker bound there:
/// the native run holds oslab to `mb`).
fn under_as_limit(lab: &Lab, mb: u64, args: &str) -> common::Out {
    let mb = if common::emulation().is_some() {
        mb + EMULATOR_MB
    } else {
        mb
    };
    under_ulimit(lab, lab.db(), &format!("-v {}", mb * 1024), args)
}

/// An export of `results` copies of a real result (its samples repeated to about
/// `result_bytes` a result),
/// written straight to `path` a sample at a time, as `oslab export` orders a run's fields
/// (`results` last). Returns the file's size in bytes.
fn write_large_export(lab: &Lab, path: &Path, results: usize, result_bytes: usize) -> u64 {
    use std::io::Write;
    let out = lab.oslab(&["export", "1"]);
    out.assert_code(0);
    let mut doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let run = doc["run"].as_object_mut().unwrap();
    run.remove("uuid");
    let mut result = run.remove("results").unwrap()[0].take();
    let measured: Vec<String> = result["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    // As many samples as make `result_bytes`: a sample's size differs between machines (its
    // counters; under emulation most are unsupported and it is a third of the size).
    let average = measured.iter().map(|s| s.len() + 1).sum::<usize>() / measured.len().max(1);
    let samples = result_bytes.div_ceil(average.max(1));
    result["samples"] = "@samples@".into();
    let result = result.to_string();
    let (before, after) = result.split_once("\"@samples@\"").unwrap();
    let run = serde_json::Value::Object(run.clone()).to_string();
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(
        file,
        "{{\"format\":\"oslab-run\",\"format_version\":1,\"run\":{},\"results\":[",
        run.strip_suffix('}').unwrap()
    )
    .unwrap();
    for i in 0..results {
        if i > 0 {
            file.write_all(b",").unwrap();
        }
        file.write_all(before.as_bytes()).unwrap();
        file.write_all(b"[").unwrap();
        for (k, sample) in measured.iter().cycle().take(samples).enumerate() {
            if k > 0 {
                file.write_all(b",").unwrap();
            }
            file.write_all(sample.as_bytes()).unwrap();
        }
        file.write_all(b"]").unwrap();
        file.write_all(after.as_bytes()).unwrap();
    }
    file.write_all(b"]}}\n").unwrap();
    file.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// One result larger than any run gives (70 MB of samples) is refused in one line
/// before it is held in memory, under the same 160 MiB limit — not an abort.
#[test]
fn a_result_too_large_to_hold_is_refused_in_one_line() {
    let lab = lab_with_a_run();
    let file = lab.dir().join("huge.json");
    let size = write_large_export(&lab, &file, 1, 70 << 20);
    assert!(size > 64 << 20, "{size} bytes");
    let other = Lab::new();
    let out = under_as_limit(&other, 160, &format!("import {}", file.display()));
    out.assert_user_error(&["holds result 1 of more than 64 MB", "nothing was imported"]);
    assert!(!other.db().exists(), "nothing was stored");
}

/// A 48 MB export imported under a 160 MiB address-space limit: a document read whole (and
/// parsed into a tree) takes several times its size and aborts there ("memory allocation
/// failed", SIGABRT); read as a stream, one result at a time, it imports, and whole. The
/// run exported back under the same limit is written as it is read, a result at a time.
#[test]
fn a_large_import_streams_within_a_memory_limit() {
    let lab = lab_with_a_run();
    let file = lab.dir().join("large.json");
    let size = write_large_export(&lab, &file, 70, 700_000);
    assert!(size > 40_000_000, "{size} bytes");
    let other = Lab::new();
    let out = under_as_limit(&other, 160, &format!("import {}", file.display()));
    out.assert_code(0);
    assert!(out.stderr.contains("imported"), "{out}");
    let list = other.oslab(&["show", "--list"]);
    list.assert_code(0);
    assert!(
        list.stdout.contains(" 70 "),
        "all 70 results were stored\n{list}"
    );

    // Exported back under the same limit: written a result at a time as it is read.
    let back = other.dir().join("back.json");
    let out = under_as_limit(&other, 160, &format!("export 1 -o {}", back.display()));
    out.assert_code(0);
    let written = std::fs::metadata(&back).unwrap().len();
    assert!(
        written > size,
        "the pretty export is larger: {written} of {size}"
    );
}

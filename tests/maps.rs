//! `oslab maps [PID]` run for real: the map of a fresh child shows its heap, stack, vDSO and the
//! oslab binary; a given PID is mapped as it is; a missing, unreadable or kernel process is one
//! error line naming the fix. No figure is asserted beyond what the child itself did (it fills
//! a 64 KiB heap block) and sums that must add up. Under user-mode emulation the kernel maps
//! the emulator's process: its executable is the emulator, oslab's binary a plain file and the
//! block in an anonymous mapping, and oslab says so.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::os::unix::process::CommandExt;
use std::process::Command;

use common::{Lab, Out, marked_processes_after_grace, unique_marker, unsupported_under_emulation};
use serde_json::Value;

/// The oslab binary as the kernel names it in /proc (symlinks resolved).
fn oslab_path() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_oslab"))
        .expect("the oslab binary exists")
        .display()
        .to_string()
}

fn mappings(doc: &Value) -> &Vec<Value> {
    doc["mappings"]
        .as_array()
        .unwrap_or_else(|| panic!("`mappings` is an array: {doc:#}"))
}

fn of_kind<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    mappings(doc).iter().filter(|m| m["kind"] == kind).collect()
}

fn count(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is a count, found {v}"))
}

#[test]
fn a_fresh_child_shows_its_heap_stack_vdso_and_the_oslab_binary() {
    let lab = Lab::new();
    let out = lab.oslab(&["maps"]);
    out.assert_code(0);
    let text = &out.stdout;
    assert!(text.starts_with("Memory map of PID "), "{out}");
    assert!(text.contains("maps-child"), "the child is named\n{out}");
    let row = |needle: &str, label: &str| {
        text.lines()
            .find(|l| l.contains(needle) && l.contains(label))
            .unwrap_or_else(|| panic!("a row with {needle} labelled {label}\n{out}"))
            .to_string()
    };
    row("[heap]", "heap");
    row("[stack]", "stack");
    row("[vdso]", "vDSO");
    if unsupported_under_emulation("the child's own map").is_some() {
        assert!(text.contains("Under emulation ("), "oslab says so\n{out}");
        assert!(
            text.contains("lies in the anonymous mapping"),
            "the emulated brk heap is anonymous\n{out}"
        );
        row(&oslab_path(), "file");
    } else {
        assert!(
            text.contains("lies in the heap mapping"),
            "the child's malloc block is in [heap]\n{out}"
        );
        let text_row = row(&oslab_path(), "executable text");
        assert!(text_row.contains("r-xp"), "{text_row}");
    }
    assert!(text.contains("Summary per kind"), "{out}");
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap_or_else(|| panic!("a total row\n{out}"));
    let is_range = |word: &str| {
        word.split_once('-').is_some_and(|(a, b)| {
            [a, b]
                .iter()
                .all(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        })
    };
    let rows = text
        .lines()
        .filter(|l| l.split_whitespace().next().is_some_and(is_range))
        .count();
    assert!(
        total.split_whitespace().nth(1) == Some(rows.to_string().as_str()),
        "the total counts every mapping row ({rows}): {total}\n{out}"
    );
    assert!(text.contains("ASLR:"), "{out}");
    assert!(out.stderr.is_empty(), "nothing on stderr\n{out}");
}

#[test]
fn json_child_map_is_classified_sums_up_and_the_child_is_gone() {
    let lab = Lab::new();
    let marker = unique_marker("maps");
    let out = lab.oslab_with(
        lab.db(),
        &["maps", "--json"],
        &[("OSLAB_MAPS_TEST", &marker)],
    );
    out.assert_code(0);
    let doc = out.json();
    assert_eq!(doc["target"], "child", "{out}");
    assert!(count(&doc["pid"], "pid") > 0);
    assert_eq!(
        count(&doc["child"]["block_bytes"], "block_bytes"),
        64 * 1024
    );
    if unsupported_under_emulation("the child's own map").is_some() {
        assert_emulators_map(&doc, &oslab_path());
    } else {
        assert!(doc["emulation"].is_null(), "{out}");
        assert_eq!(
            doc["executable"].as_str(),
            Some(oslab_path().as_str()),
            "{out}"
        );
        assert_eq!(doc["child"]["block_kind"], "heap", "{out}");
        let heap = of_kind(&doc, "heap");
        assert_eq!(heap.len(), 1, "one [heap]: {heap:?}");
        assert!(
            count(&heap[0]["rss_kb"], "heap rss_kb") >= 64,
            "the 64 KiB the child filled are resident: {}",
            heap[0]
        );
        let exe = of_kind(&doc, "executable");
        assert!(
            exe.iter()
                .any(|m| m["part"] == "text" && m["perms"] == "r-xp" && m["path"] == oslab_path()),
            "the binary's text: {exe:?}"
        );
    }
    assert_eq!(of_kind(&doc, "heap").len(), 1, "{out}");
    assert_eq!(of_kind(&doc, "stack").len(), 1, "{out}");
    assert_eq!(of_kind(&doc, "vdso").len(), 1, "{out}");
    assert!(
        of_kind(&doc, "library")
            .iter()
            .any(|m| m["path"].as_str().is_some_and(|p| p.contains("libc.so"))),
        "oslab links libc dynamically\n{out}"
    );

    let maps = mappings(&doc);
    let mut previous_end = 0_u64;
    for m in maps {
        let hex = |field: &str| {
            let text = m[field].as_str().unwrap_or_else(|| panic!("{field}: {m}"));
            u64::from_str_radix(text.trim_start_matches("0x"), 16)
                .unwrap_or_else(|_| panic!("{field} is 0x-hex: {m}"))
        };
        let (start, end) = (hex("start"), hex("end"));
        assert!(
            start >= previous_end,
            "mappings ascend and do not overlap: {m}"
        );
        assert_eq!((end - start) / 1024, count(&m["size_kb"], "size_kb"), "{m}");
        assert!(
            count(&m["rss_kb"], "rss_kb") <= count(&m["size_kb"], "size_kb"),
            "{m}"
        );
        previous_end = end;
    }
    let summary = doc["summary"].as_array().expect("summary is an array");
    for field in ["count", "size_kb", "rss_kb", "anonymous_kb", "swap_kb"] {
        let sum: u64 = summary.iter().map(|s| count(&s[field], field)).sum();
        assert_eq!(
            sum,
            count(&doc["total"][field], field),
            "summary {field} adds up"
        );
    }
    assert_eq!(count(&doc["total"]["count"], "count"), maps.len() as u64);

    let aslr = &doc["aslr"];
    assert!(
        aslr["note"].as_str().is_some_and(|n| n.starts_with("ASLR")),
        "{aslr}"
    );
    let regions: Vec<&str> = aslr["comparison"]
        .as_array()
        .expect("a comparison of two children")
        .iter()
        .filter_map(|c| c["region"].as_str())
        .collect();
    assert_eq!(
        regions,
        ["executable", "heap", "stack", "vdso", "vsyscall"],
        "{aslr}"
    );
    if let Some(vsyscall) = aslr["comparison"].as_array().and_then(|c| {
        c.iter()
            .find(|c| c["region"] == "vsyscall" && !c["first"].is_null())
    }) {
        assert_eq!(
            vsyscall["moved"], false,
            "vsyscall is at a fixed address: {vsyscall}"
        );
    }

    let left = marked_processes_after_grace("OSLAB_MAPS_TEST", &marker);
    assert!(left.is_empty(), "the children were reaped: {left:?}");
}

#[test]
fn a_given_pid_is_mapped_as_it_is() {
    let lab = Lab::new();
    let pid = std::process::id().to_string();
    let out = lab.oslab(&["maps", &pid, "--json"]);
    out.assert_code(0);
    let doc = out.json();
    assert_eq!(doc["target"], "pid");
    assert_eq!(doc["pid"].as_u64(), Some(u64::from(std::process::id())));
    assert!(doc["child"].is_null(), "{out}");
    assert_eq!(doc["aslr"]["comparison"], Value::Array(Vec::new()), "{out}");
    let this_test = std::env::current_exe().expect("the test binary");
    if unsupported_under_emulation("this test's own map").is_some() {
        // This test binary runs under the emulator too: the kernel maps the emulator.
        assert!(doc["emulation_note"].is_string(), "{out}");
        assert_ne!(doc["executable"].as_str(), this_test.to_str(), "{out}");
        assert!(
            of_kind(&doc, "file")
                .iter()
                .any(|m| m["path"].as_str() == this_test.to_str()),
            "this test binary is mapped as a file\n{out}"
        );
    } else {
        assert_eq!(
            doc["executable"].as_str(),
            this_test.to_str(),
            "the executable is this test binary, not oslab\n{out}"
        );
    }
    assert!(
        of_kind(&doc, "executable")
            .iter()
            .any(|m| m["part"] == "text"),
        "{out}"
    );
}

/// Under emulation: oslab says the map is the emulator's, whose executable it is; `program`
/// is mapped as a plain file, and the child's block lies in an anonymous mapping, resident.
fn assert_emulators_map(doc: &Value, program: &str) {
    assert!(
        doc["emulation"]
            .as_str()
            .is_some_and(|e| e.contains("emulation")),
        "{doc:#}"
    );
    assert!(
        doc["emulation_note"]
            .as_str()
            .is_some_and(|n| n.contains("the emulator's process")),
        "{doc:#}"
    );
    assert_ne!(doc["executable"].as_str(), Some(program), "the emulator's");
    assert!(
        of_kind(doc, "file").iter().any(|m| m["path"] == program),
        "{program} is mapped as a file"
    );
    assert_eq!(doc["child"]["block_kind"], "anonymous", "{}", doc["child"]);
    let hex = |v: &Value| u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16);
    let block = hex(&doc["child"]["block_address"]).expect("block_address");
    let holding = mappings(doc)
        .iter()
        .find(|m| hex(&m["start"]).unwrap() <= block && block < hex(&m["end"]).unwrap())
        .expect("a mapping holds the block");
    assert!(
        count(&holding["rss_kb"], "rss_kb") >= 64,
        "the 64 KiB the child filled are resident: {holding}"
    );
}

#[test]
fn a_missing_process_is_a_user_error() {
    let lab = Lab::new();
    // Far above PID_MAX_LIMIT (4194304): no process can have it.
    lab.oslab(&["maps", "999999999"])
        .assert_user_error(&["no process 999999999", "ps -e"]);
}

#[test]
fn a_pid_that_is_not_a_number_is_a_usage_error() {
    let lab = Lab::new();
    let out = lab.oslab(&["maps", "init"]);
    out.assert_user_error(&["init", "oslab maps --help"]);
}

#[test]
fn a_kernel_thread_is_a_user_error() {
    let Some(pid) = kernel_thread() else {
        eprintln!("no kernel thread is visible here (a PID namespace); nothing to check");
        return;
    };
    let lab = Lab::new();
    lab.oslab(&["maps", &pid.to_string()])
        .assert_user_error(&["kernel thread", "user process"]);
}

#[test]
fn another_users_process_is_a_user_error() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: cannot start a process another user may not read; nothing to check");
        return;
    }
    // A process of root's that an unprivileged user may not trace.
    let mut target = Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("start sleep");
    // The checkout may be in a directory nobody may enter (root's home, a mktemp -d): run a
    // copy from a directory everybody may read.
    let (_dir, oslab) = copy_for_everyone(env!("CARGO_BIN_EXE_oslab"));
    let start = std::time::Instant::now();
    let output = Command::new(&oslab)
        .args(["maps", &target.id().to_string()])
        .env_remove("OSLAB_DB")
        .uid(65534)
        .gid(65534)
        .output();
    let _ = target.kill();
    let _ = target.wait();
    let output = output.expect("run oslab as nobody");
    let out = Out {
        args: vec![
            "maps".into(),
            target.id().to_string(),
            "(as uid 65534)".into(),
        ],
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: start.elapsed(),
    };
    out.assert_user_error(&["permission denied", "as root"]);
}

/// A copy of `binary` that every user may run, in a directory every user may enter; the
/// directory goes with the returned guard.
fn copy_for_everyone(binary: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("oslab-maps-test-")
        .tempdir_in("/tmp")
        .expect("temporary directory");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let copy = dir.path().join("oslab");
    std::fs::copy(binary, &copy).expect("copy oslab");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (dir, copy)
}

/// A kernel thread's PID (PF_KTHREAD in the flags, field 9 of /proc/PID/stat).
fn kernel_thread() -> Option<u32> {
    const PF_KTHREAD: u64 = 0x0020_0000;
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let after_comm = &stat[stat.rfind(')')? + 2..];
            let flags: u64 = after_comm.split(' ').nth(6)?.parse().ok()?;
            (flags & PF_KTHREAD != 0).then_some(pid)
        })
}

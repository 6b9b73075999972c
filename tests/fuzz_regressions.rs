//! The fuzz targets' inputs replayed on the stable toolchain: every seed
//! (`fuzz/corpus/<target>/`) and every input a fuzz run found and kept
//! (`fuzz/regressions/<target>/`) goes through the very function its libFuzzer target calls
//! (`fuzz/src/lib.rs`, included here), and none may panic. docs/fuzzing.md says how inputs
//! get here.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]
// The parsers replayed here read Linux's /proc and /sys text (the Linux backend's).
#![cfg(target_os = "linux")]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

#[path = "../fuzz/src/lib.rs"]
mod targets;

/// The files of `fuzz/<kind>/<target>/`, sorted; none when the directory does not exist.
fn files(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(target);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Feed every seed and regression input of `target` to `body`; fail naming each that panics.
fn replay(target: &str, body: fn(&[u8])) {
    let inputs: Vec<PathBuf> = ["corpus", "regressions"]
        .iter()
        .flat_map(|kind| files(kind, target))
        .collect();
    assert!(
        !files("corpus", target).is_empty(),
        "fuzz/corpus/{target}/ has no seeds"
    );
    let panicked: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("a fuzz input is readable");
            catch_unwind(AssertUnwindSafe(|| body(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        panicked.is_empty(),
        "{target} panics on {} of {} inputs: {}",
        panicked.len(),
        inputs.len(),
        panicked.join(", ")
    );
}

#[test]
fn import_json_inputs() {
    replay("import_json", targets::import_json);
}

#[test]
fn smaps_inputs() {
    replay("smaps", targets::smaps);
}

#[test]
fn cli_numbers_inputs() {
    replay("cli_numbers", targets::cli_numbers);
}

#[test]
fn proc_text_inputs() {
    replay("proc_text", targets::proc_text);
}

/// The seeds are worth something only while they are accepted: an export this oslab would
/// refuse, or smaps it cannot parse, would start the fuzzer from nothing.
#[test]
fn seeds_are_accepted() {
    for path in files("corpus", "import_json") {
        let data = std::fs::read(&path).expect("readable");
        if let Err(e) = oslab::cli::read_import(&data, &path.display().to_string()) {
            panic!("seed {} is refused: {e}", path.display());
        }
    }
    for path in files("corpus", "smaps") {
        let data = std::fs::read(&path).expect("readable");
        let regions = oslab::platform::maps::parse_smaps(&data)
            .unwrap_or_else(|e| panic!("seed {} does not parse: {e}", path.display()));
        assert!(!regions.is_empty(), "{}", path.display());
    }
}

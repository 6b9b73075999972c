//! The directories a worker works in — a private scratch directory in the temporary
//! directory, and for file experiments one in `--dir` — named after the oslab that made them
//! (`oslab-worker-<pid>-…`, `.oslab-<pid>-…`). oslab removes its own when a worker ends; one
//! that was killed (`kill -9`, a crash) cannot, so every new one first removes those whose
//! oslab is gone. The temporary files `-o` writes through (`.oslab-out-<pid>-…`) are named
//! and swept the same way.

use std::io;
use std::path::Path;

use tempfile::TempDir;

/// The scratch directories' prefix, in the temporary directory.
pub const SCRATCH_PREFIX: &str = "oslab-worker-";
/// The work directories' prefix, in `--dir`.
pub const WORK_PREFIX: &str = ".oslab-";
/// The prefix of the temporary files output is written to before it is renamed into place.
pub const OUTPUT_PREFIX: &str = ".oslab-out-";

/// A new directory `<prefix><this pid>-<random>` in `parent`, after removing those a killed
/// oslab left there.
pub fn create(parent: &Path, prefix: &str) -> io::Result<TempDir> {
    remove_orphans(parent, prefix);
    tempfile::Builder::new()
        .prefix(&own_prefix(prefix))
        .tempdir_in(parent)
}

/// The pid in a name `<prefix><pid>-<random>`.
fn owner(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let (pid, random) = rest.split_once('-')?;
    (!random.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// `<prefix><this pid>-`: the start of the name of a file or directory this oslab makes in
/// a place [`remove_orphans`] sweeps.
pub fn own_prefix(prefix: &str) -> String {
    format!("{prefix}{}-", std::process::id())
}

/// Remove every `<prefix><pid>-…` directory or file in `parent` whose oslab no longer runs.
/// Best effort: what cannot be read or removed is left for the next run.
pub fn remove_orphans(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| owner(n, prefix)) else {
            continue;
        };
        if crate::platform::process::is_alive(pid) {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => drop(std::fs::remove_dir_all(entry.path())),
            Ok(t) if t.is_file() => drop(std::fs::remove_file(entry.path())),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_owner() {
        assert_eq!(owner("oslab-worker-123-abC9", SCRATCH_PREFIX), Some(123));
        assert_eq!(owner(".oslab-77-x", WORK_PREFIX), Some(77));
        assert_eq!(owner(".oslab-77-", WORK_PREFIX), None);
        assert_eq!(owner("oslab-worker-abc", SCRATCH_PREFIX), None);
        assert_eq!(owner("other-1-x", SCRATCH_PREFIX), None);
    }

    #[test]
    fn a_dead_oslabs_directories_go_and_a_live_ones_stay() {
        let parent = tempfile::tempdir().unwrap();
        // pid_max is at most 2^22: no process has this pid.
        let dead = parent
            .path()
            .join(format!("{SCRATCH_PREFIX}{}-old", 1u32 << 30));
        std::fs::create_dir_all(dead.join("inside")).unwrap();
        let live = parent
            .path()
            .join(format!("{SCRATCH_PREFIX}{}-busy", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let unrelated = parent.path().join("oslab-workerish");
        std::fs::create_dir(&unrelated).unwrap();
        let dead_file = parent
            .path()
            .join(format!("{SCRATCH_PREFIX}{}-half.json", 1u32 << 30));
        std::fs::write(&dead_file, "{").unwrap();

        let new = create(parent.path(), SCRATCH_PREFIX).unwrap();
        assert!(!dead.exists(), "a killed oslab's directory is removed");
        assert!(!dead_file.exists(), "and its file");
        assert!(live.exists() && unrelated.exists());
        let name = new
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(owner(&name, SCRATCH_PREFIX), Some(std::process::id()));
    }
}

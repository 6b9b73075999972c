//! The directories a worker works in — a private scratch directory in the temporary
//! directory, and for file experiments one in `--dir` — named after the oslab that made them
//! (`oslab-worker-<pid>-…`, `.oslab-<pid>-…`). oslab removes its own when a worker ends; one
//! that was killed (`kill -9`, a crash) cannot, so every new one first removes those whose
//! oslab is gone.

use std::io;
use std::path::Path;

use tempfile::TempDir;

/// The scratch directories' prefix, in the temporary directory.
pub const SCRATCH_PREFIX: &str = "oslab-worker-";
/// The work directories' prefix, in `--dir`.
pub const WORK_PREFIX: &str = ".oslab-";

/// A new directory `<prefix><this pid>-<random>` in `parent`, after removing those a killed
/// oslab left there.
pub fn create(parent: &Path, prefix: &str) -> io::Result<TempDir> {
    remove_orphans(parent, prefix);
    tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(parent)
}

/// The pid in a name `<prefix><pid>-<random>`.
fn owner(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let (pid, random) = rest.split_once('-')?;
    (!random.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// Remove every `<prefix><pid>-…` directory in `parent` whose oslab no longer runs. Best
/// effort: what cannot be read or removed is left for the next run.
fn remove_orphans(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| owner(n, prefix)) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !crate::platform::process::is_alive(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
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

        let new = create(parent.path(), SCRATCH_PREFIX).unwrap();
        assert!(!dead.exists(), "a killed oslab's directory is removed");
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

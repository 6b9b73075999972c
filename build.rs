//! Records which source and which compiler built oslab, so every stored run can say so.
//!
//! Sets `OSLAB_GIT_COMMIT` (`git rev-parse --short=12 HEAD`, `-dirty` when tracked files of
//! the crate have uncommitted changes; unset outside a git checkout or without git) and
//! `OSLAB_RUSTC_VERSION` (`$RUSTC --version`). Never fails the build: anything that cannot be
//! found is simply not set, and the code reads both with `option_env!`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rerun-if-changed=build.rs");

    if let Some(commit) = git_commit(&manifest_dir) {
        println!("cargo:rustc-env=OSLAB_GIT_COMMIT={commit}");
    }
    if let Some(version) = rustc_version() {
        println!("cargo:rustc-env=OSLAB_RUSTC_VERSION={version}");
    }
}

/// Run a command and return its trimmed stdout, or `None` on any failure.
fn output(command: &mut Command) -> Option<String> {
    let out = command
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    // `--no-optional-locks`: `git status` must not rewrite the index, or touching it would
    // make cargo re-run this script on the next build.
    output(
        Command::new("git")
            .arg("--no-optional-locks")
            .args(args)
            .current_dir(dir),
    )
}

fn git_commit(dir: &Path) -> Option<String> {
    let commit = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    watch_git_state(dir);
    // Only tracked files of this crate count: untracked scratch files do not change the build.
    let dirty = git(
        dir,
        &["status", "--porcelain", "--untracked-files=no", "--", "."],
    )
    .is_some();
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
}

/// Re-run only when the commit or the working tree changes, not on every build: HEAD (a
/// checkout), the branch it points to (a commit), packed refs, the index (staging), and the
/// crate's own sources (an edit that makes the tree dirty; those rebuild the crate anyway).
fn watch_git_state(dir: &Path) {
    let mut watched: Vec<String> = vec!["HEAD".into(), "index".into(), "packed-refs".into()];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &name]) {
            let path = dir.join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    for source in ["Cargo.toml", "src"] {
        if dir.join(source).exists() {
            println!("cargo:rerun-if-changed={source}");
        }
    }
}

fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    output(Command::new(rustc).arg("--version"))
}

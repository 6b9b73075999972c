//! Records which source and which compiler built oslab, so every stored run can say so, and
//! builds UnixBench's C programs as UnixBench builds them (`unixbench_c`).
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
    unixbench_c(&manifest_dir);
}

/// UnixBench's C workloads (written for oslab, `src/experiment/unixbench/c/`), compiled with
/// UnixBench's flags (`-O3 -ffast-math`, its Makefile's `OPTON`): Dhrystone 2.1 (two
/// translation units, as UnixBench's `dhry_1.c` and `dhry_2.c`) and Whetstone into a static
/// library the crate links (cfg `oslab_unixbench_c`), and on Linux the execl, spawn and cpu
/// (Dhrystone and Whetstone) programs linked as dynamic executables, as UnixBench's are,
/// which the crate embeds (cfgs `oslab_execl_helper`, `oslab_spawn_helper`,
/// `oslab_cpu_helper`). Unix targets only, as the experiments. A C compiler that cannot
/// build them is a warning, not a failure: the experiments then say they are unsupported.
fn unixbench_c(manifest_dir: &Path) {
    println!("cargo:rustc-check-cfg=cfg(oslab_unixbench_c)");
    println!("cargo:rustc-check-cfg=cfg(oslab_execl_helper)");
    println!("cargo:rustc-check-cfg=cfg(oslab_spawn_helper)");
    println!("cargo:rustc-check-cfg=cfg(oslab_cpu_helper)");
    let dir = manifest_dir.join("src/experiment/unixbench/c");
    println!("cargo:rerun-if-changed={}", dir.display());
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_FAMILY") != "unix" {
        return;
    }
    let unixbench_flags = || {
        let mut build = cc::Build::new();
        build
            .opt_level(3)
            .flag("-ffast-math")
            .warnings(true)
            .extra_warnings(true);
        build
    };
    let library = unixbench_flags()
        .define("REG", "register")
        .files(["dhry_1.c", "dhry_2.c", "whets.c"].map(|f| dir.join(f)))
        .try_compile("oslab_unixbench");
    match library {
        Ok(()) => println!("cargo:rustc-cfg=oslab_unixbench_c"),
        Err(e) => println!("cargo:warning=Dhrystone and Whetstone (C) not built: {e}"),
    }
    if var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    // Each program is linked as a dynamic executable, as UnixBench's are: (program, cfg,
    // the sources beside `{program}.c`). `cpu` runs Dhrystone and Whetstone in a process of
    // their own, as dhry2reg and whetstone-double run.
    for (program, cfg, sources) in [
        ("execl", "oslab_execl_helper", &[][..]),
        ("spawn", "oslab_spawn_helper", &[][..]),
        (
            "cpu",
            "oslab_cpu_helper",
            &["dhry_1.c", "dhry_2.c", "whets.c"][..],
        ),
    ] {
        let out = PathBuf::from(var("OUT_DIR")).join(format!("oslab-{program}"));
        let linked = unixbench_flags()
            .define("REG", "register")
            .try_get_compiler()
            .map(|compiler| {
                compiler
                    .to_command()
                    .arg(dir.join(format!("{program}.c")))
                    .args(sources.iter().map(|f| dir.join(f)))
                    .arg("-o")
                    .arg(&out)
                    .arg("-lm")
                    .status()
            });
        match linked {
            Ok(Ok(status)) if status.success() => println!("cargo:rustc-cfg={cfg}"),
            Ok(Ok(status)) => println!("cargo:warning=the {program} program not linked: {status}"),
            Ok(Err(e)) => println!("cargo:warning=the {program} program not linked: {e}"),
            Err(e) => println!("cargo:warning=the {program} program not linked: {e}"),
        }
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

use super::exec::routines::ForkExec;
use super::*;
use crate::experiment::Routine;

fn check_image(image: &[u8], machine: u16, code: &[u8]) {
    let h = elf::parse(image).expect("parses");
    assert_eq!(h.kind, 2, "ET_EXEC");
    assert_eq!(h.machine, machine);
    assert!(
        image.len() < 200,
        "{} bytes: the smallest useful program",
        image.len()
    );
    let loads: Vec<_> = h
        .segments
        .iter()
        .filter(|s| s.kind == elf::PT_LOAD)
        .collect();
    assert_eq!(loads.len(), 1, "one PT_LOAD");
    let load = loads[0];
    assert_eq!(load.offset, 0);
    assert_eq!(load.vaddr, elf::BASE);
    assert_eq!(
        load.filesz,
        image.len() as u64,
        "the segment covers the file"
    );
    assert_eq!(load.memsz, load.filesz);
    assert_eq!(load.flags & 1, 1, "executable");
    assert_eq!(load.flags & 2, 0, "not writable");
    let end = load.vaddr + load.filesz;
    assert!(
        h.entry >= load.vaddr && h.entry + code.len() as u64 <= end,
        "entry {:#x} and its {} bytes of code lie inside [{:#x}, {end:#x})",
        h.entry,
        code.len(),
        load.vaddr
    );
    let at = (h.entry - load.vaddr + load.offset) as usize;
    assert_eq!(&image[at..], code, "the entry point is the code");
    let stack = h
        .segments
        .iter()
        .find(|s| s.kind == elf::PT_GNU_STACK)
        .expect("PT_GNU_STACK");
    assert_eq!(stack.flags & 1, 0, "non-executable stack");
    assert_eq!(elf::interpreter(image), Ok(false), "static: no PT_INTERP");
}

/// Linux's x86-64 helper: `xor edi, edi; mov eax, 231 (exit_group); syscall`.
const X86_64_EXIT0: &[u8] = &[0x31, 0xff, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05];

#[test]
fn exit0_images_are_well_formed() {
    check_image(
        &elf::exit0_image(elf::EM_X86_64, X86_64_EXIT0),
        elf::EM_X86_64,
        X86_64_EXIT0,
    );
    let aarch64 = [
        0x00, 0x00, 0x80, 0xd2, 0xc8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
    ];
    check_image(
        &elf::image(elf::EM_AARCH64, 0, &aarch64),
        elf::EM_AARCH64,
        &aarch64,
    );
    if let Some(program) = crate::platform::raw::EXIT0 {
        let image = elf::exit0_image_for_this_arch().expect("an image where EXIT0 is");
        assert_eq!(image[7], program.osabi, "EI_OSABI");
        assert!(image.ends_with(program.code));
    }
}

#[test]
fn elf_reader_refuses_what_it_cannot_read() {
    assert!(elf::parse(b"#!/bin/sh\n").is_err());
    let mut image = elf::exit0_image(elf::EM_X86_64, X86_64_EXIT0);
    image[4] = 1; // ELFCLASS32
    assert!(elf::parse(&image).is_err());
    let image = elf::exit0_image(elf::EM_X86_64, X86_64_EXIT0);
    assert!(elf::parse(&image[..100]).is_err(), "truncated headers");
}

#[test]
fn bin_true_is_seen_as_dynamic() {
    // Where /bin/true is a dynamically linked ELF64 (Debian, Fedora, Ubuntu…).
    if let Ok(bytes) = std::fs::read(DYNAMIC_TARGET)
        && let Ok(h) = elf::parse(&bytes)
    {
        let interp = h.segments.iter().any(|s| s.kind == elf::PT_INTERP);
        assert_eq!(elf::interpreter(&bytes), Ok(interp));
    }
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oslab-process-test-")
        .tempdir()
        .expect("temporary directory")
}

#[test]
fn static_helper_runs_exits_0_and_is_removed() {
    if elf::exit0_image_for_this_arch().is_none() {
        return;
    }
    let scratch = scratch();
    let program = static_program(&[scratch.path().to_path_buf()]).expect("helper runs here");
    let dir = program._helper.as_ref().unwrap().dir.clone();
    assert!(dir.starts_with(scratch.path()));
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(HELPER_DIR_PREFIX), "{name}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "private directory");
    // It runs, through posix_spawn (setup) and through fork+execve (the routine).
    program.spawn_and_reap().expect("exit status 0");
    let mut routine = ForkExec { program };
    routine.run(3).expect("fork+exec of the helper");
    drop(routine);
    assert!(!dir.exists(), "the helper's directory is removed on drop");
}

#[test]
fn unusable_directories_are_skipped_with_their_reasons() {
    if elf::exit0_image_for_this_arch().is_none() {
        return;
    }
    let scratch = scratch();
    let missing = scratch.path().join("does-not-exist");
    let program = static_program(&[missing.clone(), scratch.path().to_path_buf()])
        .expect("the second directory works");
    assert!(
        program
            ._helper
            .as_ref()
            .unwrap()
            .dir
            .starts_with(scratch.path())
    );
    drop(program);
    let Err(SetupError::Unsupported(reason)) = static_program(&[missing]) else {
        panic!("no usable directory is unsupported");
    };
    assert!(reason.contains("does-not-exist"), "{reason}");
    assert!(
        reason.contains("TMPDIR"),
        "the reason names the fix: {reason}"
    );
}

#[test]
fn every_routine_runs_and_its_children_exit_0() {
    let params = |target: &str| {
        Params::resolve(
            "process.x",
            &[TARGET_PARAM],
            &[("target".into(), target.into())],
        )
        .unwrap()
    };
    let ctx = Context::default();
    let mut routines: Vec<(&str, Box<dyn Routine>)> = vec![
        ("fork", (FORK.setup)(&params("static"), &ctx).unwrap()),
        ("thread", (THREAD.setup)(&params("static"), &ctx).unwrap()),
    ];
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        routines.push(("vfork", (VFORK.setup)(&params("static"), &ctx).unwrap()));
        routines.push((
            "fork_exec",
            (FORK_EXEC.setup)(&params("static"), &ctx).unwrap(),
        ));
        routines.push((
            "posix_spawn",
            (POSIX_SPAWN.setup)(&params("static"), &ctx).unwrap(),
        ));
    }
    if std::path::Path::new(DYNAMIC_TARGET).exists() {
        match (FORK_EXEC.setup)(&params("dynamic"), &ctx) {
            Ok(r) => routines.push(("fork_exec dynamic", r)),
            Err(SetupError::Unsupported(_)) => {}
            Err(SetupError::Failed(e)) => panic!("{e}"),
        }
    }
    // Each operation reaps its own child by pid and checks its exit status, so success
    // means every child ran and was reaped. (A `waitpid(-1)` here would steal the
    // children of tests running on other threads.)
    for (name, mut routine) in routines {
        routine.run(4).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn headline_figures_join_the_ladder_and_all_run_by_default() {
    let all = [&FORK, &VFORK, &FORK_EXEC, &POSIX_SPAWN, &THREAD];
    for e in all {
        assert!(e.default_suite, "{}", e.name);
        assert!(!e.subtract_loop_overhead, "{}", e.name);
        assert!(
            super::super::find(e.name).is_some(),
            "{} is registered",
            e.name
        );
        assert!(
            !(e.expectations)(&Params::default()).is_empty(),
            "{}",
            e.name
        );
    }
    let ladder: Vec<&str> = all.iter().filter(|e| e.ladder).map(|e| e.name).collect();
    assert_eq!(
        ladder,
        ["process.fork", "process.fork_exec", "process.thread"]
    );
}

#[test]
fn a_failing_child_is_an_error_that_says_why() {
    let code127 = 127 << 8;
    let e = exit_status(code127, "fork+exec").unwrap_err().to_string();
    assert!(e.contains("127") && e.contains("execve"), "{e}");
    assert!(exit_status(0, "fork").is_ok());
    let killed = libc::SIGKILL;
    assert!(
        exit_status(killed, "fork")
            .unwrap_err()
            .to_string()
            .contains("killed by SIGKILL")
    );
    // A missing program makes posix_spawn itself fail with the errno.
    let missing = Program::new(Path::new("/nonexistent/oslab-x"), "x", None).unwrap();
    let e = missing.spawn_and_reap().unwrap_err().to_string();
    if crate::platform::unsupported_under_emulation("posix_spawn's errno") {
        // qemu-user runs posix_spawn's vfork as a fork: the failed execve is exit 127.
        assert!(e.contains("127"), "{e}");
    } else {
        assert!(e.contains("No such file"), "{e}");
    }
    let mut fork_exec = ForkExec { program: missing };
    let e = fork_exec.run(1).unwrap_err().to_string();
    assert!(e.contains("127"), "{e}");
}

use super::*;
use crate::experiment::Routine;

#[test]
fn dhrystone_ends_with_weickers_values() {
    let mut d = dhrystone::Dhrystone::new();
    let runs = 1000;
    d.run(runs).unwrap();
    let (int_glob, bool_glob, ch_1, ch_2, arr_1_8, arr_2_8_7, int_comps) = d.globals();
    assert_eq!(int_glob, 5);
    assert!(bool_glob);
    assert_eq!((ch_1, ch_2), (b'A', b'B'));
    assert_eq!(arr_1_8, 7);
    assert_eq!(arr_2_8_7, runs as i64 + 10);
    assert_eq!(int_comps, [17, 18]);
}

#[test]
fn whetstone_passes_are_finite_and_repeat() {
    let mut w = whetstone::Whetstone::new();
    w.run(2).unwrap();
    let two = w.check;
    assert!(two.is_finite() && two != 0.0, "{two}");
    let mut again = whetstone::Whetstone::new();
    again.run(2).unwrap();
    assert_eq!(again.check, two);
}

#[test]
fn the_execl_counter_counts_every_exec() {
    assert_eq!(execl::counter(1), "00000000000000000000");
    assert_eq!(execl::counter(1000), "00000000000000000999");
    assert_eq!(execl::counter(0), "00000000000000000000");
}

/// Each variant this build has: the static x86-64 helper, and the dynamic C program where
/// build.rs compiled it.
#[test]
fn each_execl_program_execs_itself_and_exits_zero() {
    let variants: &[&str] = &[
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        "static",
        #[cfg(oslab_execl_helper)]
        "dynamic",
    ];
    for variant in variants {
        let params = Params::from_pairs(&[("variant", variant)]);
        let mut routine = (EXECL.setup)(&params, &Context::default()).unwrap();
        routine.run(1).unwrap();
        routine.run(25).unwrap();
    }
}

/// The C build (the one UnixBench's figure is compared with) computes what Weicker's program
/// prints at its end, as the Rust port does.
#[cfg(oslab_unixbench_c)]
#[test]
fn dhrystone_in_c_ends_with_weickers_values() {
    let params = Params::from_pairs(&[("language", "c"), ("runner", "worker")]);
    let mut d = (DHRYSTONE.setup)(&params, &Context::default()).unwrap();
    // The C globals are this process's: this is the only test that runs the C Dhrystone.
    d.run(1000).unwrap();
    let (int_glob, bool_glob, ch_1, ch_2, arr_1_8, arr_2_8_7) = native::dhrystone_globals();
    assert_eq!(int_glob, 5);
    assert!(bool_glob);
    assert_eq!((ch_1, ch_2), (b'A', b'B'));
    assert_eq!(arr_1_8, 7);
    assert_eq!(arr_2_8_7, 1000 + 10);
}

#[cfg(oslab_unixbench_c)]
#[test]
fn whetstone_in_c_computes_longbottoms_results() {
    let params = Params::from_pairs(&[("language", "c"), ("runner", "worker")]);
    let mut w = (WHETSTONE.setup)(&params, &Context::default()).unwrap();
    w.run(3).unwrap();
    let check = native::whetstone_check();
    // The sum of the eight sections' results (N5, N6 and N8 as Longbottom publishes them);
    // it grows from 16.0 after one pass towards 22.3 as e1 carries over.
    assert!(
        check.is_finite() && (15.0..23.0).contains(&check),
        "{check}"
    );
}

#[test]
fn the_sort_input_has_sort_srcs_shape() {
    let text = shell::sort_input();
    assert_eq!(text.lines().count(), shell::SORT_LINES);
    assert_eq!(text.len(), shell::SORT_BYTES);
    let with_the = text
        .lines()
        .filter(|l| l.split(' ').any(|w| w == "the"))
        .count();
    assert_eq!(with_the, shell::LINES_WITH_THE);
    assert_eq!(text.matches("the").count(), shell::LINES_WITH_THE);
    assert!((6000..11000).contains(&text.len()), "{}", text.len());
    assert_eq!(text, shell::sort_input());
}

#[test]
fn file_copy_claims_a_read_and_a_write_per_loop_and_the_rewinds() {
    let p = Params::from_pairs(&[("bufsize", "1024"), ("maxblocks", "2000")]);
    assert!((file_copy::calls_per_loop(&p) - 2.0015).abs() < 1e-9);
    // fstime's -m is KiB of file: every test of the index copies 2,000 buffers.
    for (bufsize, maxblocks) in [("1024", "2000"), ("256", "500"), ("4096", "8000")] {
        let p = Params::from_pairs(&[("bufsize", bufsize), ("maxblocks", maxblocks)]);
        assert_eq!(file_copy::buffers(&p), 2000, "{bufsize} × {maxblocks}");
    }
    let p = Params::from_pairs(&[("bufsize", "1000"), ("maxblocks", "3")]);
    assert_eq!(
        file_copy::buffers(&p),
        3,
        "rounded down as fstime's integer division"
    );
}

#[test]
fn a_file_copy_source_smaller_than_its_buffer_is_refused_before_the_run() {
    let p = Params::from_pairs(&[("bufsize", "4096"), ("maxblocks", "2")]);
    let why = (FILE_COPY.preflight.unwrap())(&p, &Context::default()).unwrap_err();
    assert!(
        matches!(
            why,
            crate::experiment::refusal::Refusal::Exceeds {
                param: "bufsize",
                limit: "maxblocks",
                ..
            }
        ),
        "{why}"
    );
    let p = Params::from_pairs(&[("bufsize", "2048"), ("maxblocks", "2")]);
    assert!((FILE_COPY.preflight.unwrap())(&p, &Context::default()).is_ok());
}

/// A pass starts as fstime does: new files (other inodes), the source written whole and the
/// target empty, both at their start; the copy then runs from there.
#[test]
fn a_file_copy_pass_starts_with_new_files_as_fstime_does() {
    use std::os::unix::fs::MetadataExt;
    let dir = std::env::temp_dir().join(format!("oslab-fstime-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ctx = Context {
        work_dir: Some(dir.clone()),
        ..Context::default()
    };
    let params = Params::from_pairs(&[("bufsize", "256"), ("maxblocks", "4")]);
    let mut routine = (FILE_COPY.setup)(&params, &ctx).unwrap();
    routine.run(20).unwrap();
    let inode = |name: &str| std::fs::metadata(dir.join(name)).unwrap().ino();
    let before = (inode("dummy0"), inode("dummy1"));
    // A pass of 0.03 s: fstime's 15 s of start scaled by 0.03 / 30 (15 ms).
    routine.before_pass(0.03).unwrap();
    assert_ne!((inode("dummy0"), inode("dummy1")), before, "new files");
    let len = |name: &str| std::fs::metadata(dir.join(name)).unwrap().len();
    assert_eq!((len("dummy0"), len("dummy1")), (4096, 0), "maxblocks KiB");
    routine.run(5).unwrap();
    assert_eq!(
        len("dummy1"),
        5 * 256,
        "the copy starts at both files' start"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_kind_runs_a_few_loops() {
    let dir = std::env::temp_dir().join(format!("oslab-unixbench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ctx = Context {
        work_dir: Some(dir.clone()),
        ..Context::default()
    };
    for (info, pairs) in [
        (&SYSCALL, &[][..]),
        (&PIPE, &[][..]),
        (&SPAWN, &[][..]),
        (&SPAWN, &[("forker", "worker")][..]),
        // The defaults: in C, in the cpu program where it was linked (Linux).
        (&DHRYSTONE, &[][..]),
        (&WHETSTONE, &[][..]),
        (&FILE_COPY, &[("bufsize", "256"), ("maxblocks", "4")][..]),
        (&SHELL, &[("concurrency", "2")][..]),
    ] {
        let params = Params::resolve(
            info.name,
            info.params,
            &pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let mut routine = match (info.setup)(&params, &ctx) {
            Ok(routine) => routine,
            // A system without a shell (the FreeBSD test guest has no /bin/sh): the script's
            // refusal names what it needs.
            Err(SetupError::Unsupported(why))
                if info.name == SHELL.name && !std::path::Path::new("/bin/sh").exists() =>
            {
                assert!(why.contains("/bin/sh"), "{why}");
                continue;
            }
            Err(e) => panic!("{}: {e:?}", info.name),
        };
        routine
            .run(9)
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

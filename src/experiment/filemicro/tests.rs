use super::*;
use crate::experiment::selection::{expand_suite, find_suite};

#[test]
fn every_personality_is_registered_and_in_the_suite() {
    let suite = find_suite("filemicro").expect("the filemicro suite");
    for info in EXPERIMENTS {
        assert!(
            crate::experiment::find(info.name).is_some(),
            "{}",
            info.name
        );
        assert!(
            info.work_dir && !info.default_suite && !info.ladder,
            "{}",
            info.name
        );
        assert!(
            suite.configs.iter().any(|c| c.experiment == info.name),
            "{} is in the suite",
            info.name
        );
    }
    assert_eq!(suite.configs.len(), EXPERIMENTS.len());
}

#[test]
fn defaults_are_filebenchs() {
    let p = |name: &str| {
        let info = crate::experiment::find(name).unwrap();
        Params::resolve(name, info.params, &[]).unwrap()
    };
    assert_eq!(p("filemicro.createfiles").u64("nfiles"), 20000);
    assert_eq!(p("filemicro.createfiles").u64("filesize"), 1024);
    assert_eq!(p("filemicro.delete").u64("filesize"), 16 << 10);
    assert_eq!(p("filemicro.rread").u64("filesize"), 1 << 30);
    assert_eq!(p("filemicro.rread").u64("iosize"), 2048);
    assert_eq!(p("filemicro.seqread").u64("iosize"), 1 << 20);
    assert_eq!(p("filemicro.seqwriterand").u64("count"), 128 << 10);
    assert_eq!(p("filemicro.writefsync").u64("writeiters"), 1024);
    assert_eq!(p("filemicro.writefsync").u64("fsynccount"), 128);
    assert_eq!(p("filemicro.rwritefsync").u64("iters"), 16384);
    assert_eq!(p("filemicro.statfile").u64("nfiles"), 10000);
    assert_eq!(p("filemicro.openfiles").u64("nfiles"), 50000);
    assert_eq!(p("filemicro.createrand").u64("bytes"), 1 << 30);
}

#[test]
fn plans_bound_the_files() {
    let info = crate::experiment::find("filemicro.writefsync").unwrap();
    let p = Params::resolve(info.name, info.params, &[]).unwrap();
    let plan = plan_of(info.name, &p);
    assert_eq!(plan.limit, 1 << 30);
    assert_eq!(plan.fsync_every, Some(1024));
    let info = crate::experiment::find("filemicro.seqwrite").unwrap();
    let p = Params::resolve(info.name, info.params, &[]).unwrap();
    assert_eq!(plan_of(info.name, &p).limit, 1 << 30);
}

/// The quick suite stays within a small disk budget: every file or fileset under 64 MiB.
#[test]
fn quick_suite_is_small() {
    let planned = expand_suite(
        find_suite("filemicro").unwrap(),
        &[],
        crate::experiment::selection::Timing {
            quick: true,
            passes: None,
        },
        false,
    )
    .unwrap();
    assert_eq!(planned.len(), EXPERIMENTS.len());
    for run in &planned {
        let p = &run.params;
        let name = run.info.name;
        let appends = [
            "filemicro.create",
            "filemicro.seqwrite",
            "filemicro.seqwriterand",
            "filemicro.seqwriterandvargam",
            "filemicro.seqwriterandvartab",
            "filemicro.writefsync",
            "filemicro.createrand",
        ];
        let bytes = if appends.contains(&name) {
            plan_of(name, p).room()
        } else if p.get("nfiles").is_some() {
            p.u64("nfiles") * in_pages(p.u64("filesize"))
        } else {
            p.u64("filesize")
        };
        assert!(bytes <= 64 << 20, "{}: {bytes}", run.info.name);
    }
}

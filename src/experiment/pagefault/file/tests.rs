use super::routines::*;
use super::*;
use crate::experiment::{Context, Fact, Routine, SetupError};
use crate::platform::mount::mount_of;
use std::path::Path;

fn routine(dir: &Path, pairs: &[(&str, &str)]) -> Result<Box<dyn Routine>, SetupError> {
    let given: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let params = Params::resolve(FILE.name, PARAMS, &given).unwrap();
    let ctx = Context {
        work_dir: Some(dir.to_path_buf()),
        ..Context::default()
    };
    setup(&params, &ctx)
}

fn fact(facts: &[Fact], name: &str) -> f64 {
    facts.iter().find(|f| f.name == name).unwrap().value
}

/// A directory on the file system the crate is built on (not /tmp, which may be tmpfs), or
/// the temporary directory where the tests run elsewhere (the FreeBSD guest: a read-only
/// root and a tmpfs /tmp).
fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR"))
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

#[test]
fn a_private_write_faults_once_per_page_and_the_others_at_most_once() {
    if !crate::experiment::enabled_here(&FILE) {
        return;
    }
    let dir = disk_dir();
    let pages = 256u64;
    for (map, access, one_per_page) in [
        ("shared", "read", false),
        ("private", "read", false),
        ("shared", "write", false),
        ("private", "write", true),
    ] {
        let mut r = routine(
            dir.path(),
            &[("size", "1M"), ("map", map), ("access", access)],
        )
        .unwrap_or_else(|_| panic!("setup"));
        for _ in 0..3 {
            r.prepare(pages).unwrap();
            r.run(pages).unwrap();
        }
        let facts = r.facts();
        let per_page = fact(&facts, "faults_per_page");
        // The kernel may fault a page again that it moved after its first fault (compaction
        // or migration leaves a migration entry): a CI run saw 770 faults for 768 page
        // writes. The experiment's own bounds allow 1% for that; so does this test.
        if one_per_page {
            assert!(
                (1.0..=1.01).contains(&per_page),
                "{map} {access}: {per_page}"
            );
        } else {
            assert!(
                per_page > 0.0 && per_page <= 1.01,
                "{map} {access}: {per_page}"
            );
        }
        // The experiment's own bound (cache_expectations): a page of the file may be
        // reclaimed between passes on a busy machine (a CI run under qemu-user found a share of
        // 0.9974 cached at the starts of a shared write's three passes: 766 of 768 pages).
        let cached = fact(&facts, "cached_share_at_start");
        assert!(cached >= 0.99, "{map} {access}: {cached}");
        assert!(fact(&facts, "ns_per_fault") > 0.0);
    }
}

#[test]
fn cold_drops_the_file_on_disk_and_is_unsupported_in_memory() {
    if !crate::experiment::enabled_here(&FILE) {
        return;
    }
    let dir = disk_dir();
    let on_disk = !mount_of(dir.path()).unwrap().memory_backed();
    let mut r = match routine(dir.path(), &[("size", "1M"), ("cache", "cold")]) {
        Ok(r) => r,
        Err(SetupError::Unsupported(reason))
            if crate::platform::fscache::cold_cache_unsupported().is_some() =>
        {
            assert_eq!(
                Some(reason),
                crate::platform::fscache::cold_cache_unsupported()
            );
            return;
        }
        Err(SetupError::Unsupported(reason)) if !on_disk => {
            assert!(reason.contains("memory-backed"), "{reason}");
            return;
        }
        Err(e) => panic!("{e:?}"),
    };
    r.prepare(256).unwrap();
    r.run(256).unwrap();
    assert_eq!(fact(&r.facts(), "cached_share_at_start"), 0.0);

    let shm = Path::new("/dev/shm");
    if shm.is_dir() && mount_of(shm).is_ok_and(|m| m.memory_backed()) {
        let dir = tempfile::tempdir_in(shm).unwrap();
        let err = routine(dir.path(), &[("size", "1M"), ("cache", "cold")]);
        assert!(matches!(err, Err(SetupError::Unsupported(_))));
    }
}

#[test]
fn a_pass_needs_a_fresh_mapping_of_the_whole_file() {
    if !crate::experiment::enabled_here(&FILE) {
        return;
    }
    let dir = disk_dir();
    let mut r = routine(dir.path(), &[("size", "1M")]).unwrap_or_else(|_| panic!("setup"));
    assert!(r.run(256).is_err(), "no mapping yet");
    assert!(r.prepare(100).is_err(), "a pass is the whole file");
    r.prepare(256).unwrap();
    r.run(256).unwrap();
    assert!(r.run(256).is_err(), "the mapping was already touched");
}

#[test]
fn expectations_follow_the_variant() {
    let resolve = |pairs: &[(&str, &str)]| {
        let given: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        expectations(&Params::resolve(FILE.name, PARAMS, &given).unwrap())
    };
    let has = |list: &[Expectation], metric: Metric, bound: Bound| {
        list.iter().any(|e| e.metric == metric && e.bound == bound)
    };
    let warm = resolve(&[]);
    assert!(has(
        &warm,
        Metric::TypicalRusage("inblock"),
        Bound::Below(0.01)
    ));
    assert!(has(
        &warm,
        Metric::TypicalRusage("majflt"),
        Bound::Below(0.0001)
    ));
    assert!(has(&warm, Metric::Rusage("oublock"), Bound::Below(0.01)));
    let cold = resolve(&[("cache", "cold"), ("size", "1M")]);
    assert!(has(
        &cold,
        Metric::Rusage("majflt"),
        Bound::AtLeast(0.999 / 256.0)
    ));
    let private_write = resolve(&[("map", "private"), ("access", "write")]);
    assert!(has(
        &private_write,
        Metric::Faults,
        Bound::Near {
            value: 1.0,
            tolerance: 0.01
        }
    ));
    let shared_write = resolve(&[("access", "write")]);
    assert!(has(
        &shared_write,
        Metric::Fact("oublock_per_page"),
        Bound::Near {
            value: 8.0,
            tolerance: 0.4
        }
    ));
    assert!(
        shared_write
            .iter()
            .all(|e| e.metric != Metric::Rusage("oublock")),
        "tmpfs charges no blocks: the fact says when they count"
    );
}

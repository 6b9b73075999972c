use super::*;

fn params(given: &[(&str, &str)]) -> Params {
    let given: Vec<(String, String)> = given
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Params::resolve(ACCESS.name, PARAMS, &given).unwrap()
}

/// Minor faults of this thread (tests run on parallel threads of one process).
fn minflt_now() -> i64 {
    crate::platform::rusage::this_thread()
        .expect("mmap.* runs where threads keep their own usage")
        .minflt
}

#[test]
fn a_pass_is_whole_blocks() {
    let p = params(&[("size", "1M")]);
    assert_eq!(pass_ops(&p), 32 * 512 * 16);
    // Rounded down to whole 32 KiB blocks.
    let p = params(&[("size", "1048600")]);
    assert_eq!(blocks(&p), 32);
    assert_eq!(per_page() * (page_size() / 64 * 16) as f64, 1.0);
}

#[test]
fn each_pass_faults_every_page_of_a_fresh_mapping_once() {
    if !crate::experiment::enabled_here(&ACCESS) {
        return;
    }
    // Under an emulator its own faults share the thread's count (the code it translates, its
    // page tables): CI's aarch64 run under qemu-user saw 4 more for 256 pages once, and 535
    // once. There the test checks that every page faulted, not that none faulted twice.
    let emulated = crate::platform::unsupported_under_emulation("one fault per page");
    for pattern in ["seq", "random"] {
        let p = params(&[("size", "1M"), ("pattern", pattern)]);
        let mut r = (ACCESS.setup)(&p, &Context::default()).unwrap_or_else(|_| panic!("setup"));
        let ops = pass_ops(&p);
        for _ in 0..2 {
            r.prepare(ops).unwrap();
            let before = minflt_now();
            r.run(ops).unwrap();
            let faults = minflt_now() - before;
            // One per page of the mapping, plus a few of the process's own (a new stack page,
            // seen once in a full `cargo test`). A second fault per page would be twice as
            // many.
            let pages = (1 << 20) / page_size();
            let most = if emulated {
                usize::MAX
            } else {
                pages + pages / 16
            };
            assert!(
                (pages..=most).contains(&(faults as usize)),
                "{pattern}: {faults} faults for {pages} pages"
            );
        }
        assert!(r.run(ops + 1).is_err(), "a sample is exactly one pass");
        let facts = r.facts();
        let rss = facts
            .iter()
            .find(|f| f.name == "resident_kb")
            .unwrap()
            .value;
        assert_eq!(rss, 1024.0, "every page resident after the walk");
    }
}

#[test]
fn random_order_holds_every_block_once() {
    if !crate::experiment::enabled_here(&ACCESS) {
        return;
    }
    let p = params(&[("size", "1M"), ("pattern", "random")]);
    let mut r = Access {
        backing: Backing::AnonPrivate,
        populate: false,
        memset_msync: false,
        random: true,
        len: 1 << 20,
        file: None,
        map: None,
        order: (0..blocks(&p) as u32).collect(),
        pass: 0,
        evictor: None,
        costs: PassCosts::default(),
    };
    r.prepare(pass_ops(&p)).unwrap();
    let first = r.order.clone();
    r.prepare(pass_ops(&p)).unwrap();
    assert_ne!(first, r.order, "each pass has its own order");
    let mut sorted = r.order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..32).collect::<Vec<u32>>());
}

#[test]
fn populated_private_mapping_walks_without_faults() {
    let p = params(&[("size", "1M"), ("populate", "true")]);
    let mut r = match (ACCESS.setup)(&p, &Context::default()) {
        Ok(r) => r,
        Err(SetupError::Unsupported(_)) => return,
        Err(SetupError::Failed(e)) => panic!("{e}"),
    };
    let ops = pass_ops(&p);
    r.prepare(ops).unwrap();
    let before = minflt_now();
    r.run(ops).unwrap();
    let faults = minflt_now() - before;
    if crate::platform::unsupported_under_emulation("MAP_POPULATE") {
        // qemu-user ignores MAP_POPULATE: the walk faults the pages in itself.
        assert!(
            faults > 0,
            "under emulation the populated pages still fault"
        );
        return;
    }
    assert!(faults < 3, "populated pages do not fault");
}

#[test]
fn a_file_backing_leaves_no_name_behind() {
    if !crate::experiment::enabled_here(&ACCESS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = Context {
        work_dir: Some(dir.path().to_path_buf()),
        ..Context::default()
    };
    let p = params(&[("size", "1M"), ("backing", "file_shared")]);
    let mut r = (ACCESS.setup)(&p, &ctx).unwrap_or_else(|_| panic!("setup"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let ops = pass_ops(&p);
    r.prepare(ops).unwrap();
    r.run(ops).unwrap();
    r.prepare(ops).unwrap();
    r.run(ops).unwrap();
    let facts = r.facts();
    let share = facts
        .iter()
        .find(|f| f.name == "page_cache_share")
        .unwrap()
        .value;
    assert_eq!(share, 1.0, "the walked file stays cached between passes");
}

#[test]
fn the_data_cache_is_found_when_sysfs_describes_it() {
    if let Some((size, line)) = largest_data_cache(0) {
        assert!(size >= 4096, "{size}");
        assert!(line.is_power_of_two(), "{line}");
    }
}

#[test]
fn expectations_follow_the_configuration() {
    let one = per_page();
    let fresh = expectations(&params(&[]));
    assert_eq!(
        fresh[0].bound,
        Bound::Near {
            value: one,
            tolerance: 0.01 * one
        }
    );
    let synced = expectations(&params(&[
        ("backing", "file_shared"),
        ("prepare", "memset_msync"),
    ]));
    assert!(
        synced.iter().any(|e| e.metric == Metric::Rusage("oublock")),
        "the walk after msync is charged the whole file"
    );
    let populated = expectations(&params(&[("populate", "true")]));
    assert_eq!(populated[0].bound, Bound::Below(0.01 * one));
}

use super::*;
use proptest::prelude::*;

/// A Rust PIE program's smaps as Linux 6.18 prints it, shortened to the fields that matter
/// plus ones that must be skipped.
const SAMPLE: &str = "\
55d0c0a00000-55d0c0a40000 r--p 00000000 fe:00 1234                       /opt/bin/prog
Size:                256 kB
Rss:                 200 kB
Anonymous:             0 kB
Swap:                  0 kB
THPeligible:           0
VmFlags: rd mr mw me
55d0c0a40000-55d0c0b00000 r-xp 00040000 fe:00 1234                       /opt/bin/prog
Rss:                 700 kB
55d0c0b00000-55d0c0b10000 r--p 00100000 fe:00 1234                       /opt/bin/prog
Rss:                  64 kB
Anonymous:            64 kB
55d0c0b10000-55d0c0b11000 rw-p 0010f000 fe:00 1234                       /opt/bin/prog
Rss:                   4 kB
Anonymous:             4 kB
55d0c0b11000-55d0c0b13000 rw-p 00000000 00:00 0 
Rss:                   8 kB
Anonymous:             8 kB
55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]
Rss:                  72 kB
Anonymous:            72 kB
Swap:                  4 kB
7f6b25b4c000-7f6b25b4f000 rw-p 00000000 00:00 0 
Rss:                  12 kB
Anonymous:            12 kB
7f6b25b4f000-7f6b25b75000 r--p 00000000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25b75000-7f6b25ccb000 r-xp 00026000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25ccb000-7f6b25d1e000 r--p 0017c000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25d1e000-7f6b25d22000 r--p 001cf000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25d22000-7f6b25d24000 rw-p 001d3000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25d24000-7f6b25d31000 rw-p 00000000 00:00 0 
7f6b25d31000-7f6b25d32000 r--p 00000000 fe:00 316543                     /usr/lib/locale/C.utf8/LC_TELEPHONE
7f6b25d32000-7f6b25d33000 rw-p 00000000 00:00 0 
7f6b25d33000-7f6b25d3a000 r--s 00000000 fe:00 325745                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache
7f6b25d3a000-7f6b25d3b000 rw-p 00000000 00:00 0                          [anon:glibc.malloc]
7f6b25d3d000-7f6b25d41000 r--p 00000000 00:00 0                          [vvar]
7f6b25d41000-7f6b25d43000 r--p 00000000 00:00 0                          [vvar_vclock]
7f6b25d43000-7f6b25d45000 r-xp 00000000 00:00 0                          [vdso]
7f6b25d45000-7f6b25d46000 r--p 00000000 fe:00 325843                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7f6b25d46000-7f6b25d47000 ---p 00001000 fe:00 325843                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7f6b25e00000-7f6b25e01000 rw-p 00000000 00:00 0                          [uprobes]
7ffd4bd5f000-7ffd4bd80000 rw-p 00000000 00:00 0                          [stack]
Rss:                  16 kB
Anonymous:            16 kB
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

fn sample() -> Vec<Mapping> {
    let regions = parse_smaps(SAMPLE.as_bytes()).expect("the sample parses");
    classify(regions, Some("/opt/bin/prog"))
}

#[test]
fn parses_the_figures_and_skips_other_fields() {
    let regions = parse_smaps(SAMPLE.as_bytes()).unwrap();
    assert_eq!(regions.len(), 25);
    let first = &regions[0];
    assert_eq!(
        (first.start, first.end),
        (0x55d0_c0a0_0000, 0x55d0_c0a4_0000)
    );
    assert_eq!(first.perms, "r--p");
    assert_eq!(first.offset, 0);
    assert_eq!(first.dev, "fe:00");
    assert_eq!(first.inode, 1234);
    assert_eq!(first.path.as_deref(), Some("/opt/bin/prog"));
    assert_eq!(
        (first.rss_kb, first.anonymous_kb, first.swap_kb),
        (200, 0, 0)
    );
    assert_eq!(regions[1].offset, 0x40000);
    // lld: the data segment shares the RELRO segment's last file page.
    assert_eq!(regions[3].offset, 0x10f000);
    assert_eq!(regions[4].path, None, "a trailing space is no path");
    assert_eq!((regions[5].rss_kb, regions[5].swap_kb), (72, 4));
}

#[test]
fn classifies_every_kind() {
    let got: Vec<(String, String)> = sample()
        .iter()
        .map(|m| (format!("{:x}", m.region.start), m.label()))
        .collect();
    let want = [
        ("55d0c0a00000", "executable rodata"),
        ("55d0c0a40000", "executable text"),
        ("55d0c0b00000", "executable relro"),
        ("55d0c0b10000", "executable data"),
        ("55d0c0b11000", "executable bss"),
        ("55d0c1000000", "heap"),
        ("7f6b25b4c000", "anonymous"),
        ("7f6b25b4f000", "library rodata"),
        ("7f6b25b75000", "library text"),
        // Touches the next r-- mapping, but that one is not writable: rodata.
        ("7f6b25ccb000", "library rodata"),
        ("7f6b25d1e000", "library relro"),
        ("7f6b25d22000", "library data"),
        ("7f6b25d24000", "library bss"),
        ("7f6b25d31000", "file"),
        // After a read-only file mapping: not a bss.
        ("7f6b25d32000", "anonymous"),
        ("7f6b25d33000", "file"),
        ("7f6b25d3a000", "anonymous"),
        ("7f6b25d3d000", "vvar"),
        ("7f6b25d41000", "vvar"),
        ("7f6b25d43000", "vDSO"),
        ("7f6b25d45000", "library rodata"),
        ("7f6b25d46000", "library reserved"),
        ("7f6b25e00000", "other"),
        ("7ffd4bd5f000", "stack"),
        ("ffffffffff600000", "vsyscall"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, l)| (a.to_string(), l.to_string()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn without_the_executable_its_files_are_plain_files() {
    let regions = parse_smaps(SAMPLE.as_bytes()).unwrap();
    let mappings = classify(regions, None);
    assert_eq!(mappings[0].kind, Kind::File);
    assert_eq!(mappings[4].kind, Kind::Anonymous, "no object, no bss");
    assert_eq!(mappings[7].kind, Kind::Library);
}

#[test]
fn summary_adds_up() {
    let mappings = sample();
    let (rows, all) = summarize(&mappings);
    assert_eq!(all.count, mappings.len());
    assert_eq!(rows.iter().map(|r| r.2.count).sum::<usize>(), all.count);
    assert_eq!(
        rows.iter().map(|r| r.2.size_bytes).sum::<u64>(),
        mappings.iter().map(|m| m.region.size_bytes()).sum::<u64>()
    );
    let executable: Vec<_> = rows.iter().filter(|r| r.0 == Kind::Executable).collect();
    assert_eq!(
        executable.iter().map(|r| r.1).collect::<Vec<_>>(),
        [
            Some(Part::Text),
            Some(Part::Rodata),
            Some(Part::Relro),
            Some(Part::Data),
            Some(Part::Bss)
        ]
    );
    let (rodata, relro) = (executable[1].2, executable[2].2);
    assert_eq!(
        (rodata.count, rodata.rss_kb, rodata.anonymous_kb),
        (1, 200, 0)
    );
    assert_eq!((relro.count, relro.rss_kb, relro.anonymous_kb), (1, 64, 64));
    assert_eq!(all.swap_kb, 4);
    assert!(rows.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
}

#[test]
fn bases_for_aslr() {
    let snapshot = Snapshot {
        pid: 1,
        command: "prog".into(),
        exe: Some("/opt/bin/prog".into()),
        no_randomize: Some(false),
        mappings: sample(),
    };
    assert_eq!(
        snapshot.base(AslrRegion::Executable),
        Some(0x55d0_c0a0_0000)
    );
    assert_eq!(snapshot.base(AslrRegion::Heap), Some(0x55d0_c100_0000));
    assert_eq!(snapshot.base(AslrRegion::Stack), Some(0x7ffd_4bd8_0000));
    assert_eq!(snapshot.base(AslrRegion::Vdso), Some(0x7f6b_25d4_3000));
    assert_eq!(snapshot.base(AslrRegion::Vsyscall), Some(VSYSCALL_ADDRESS));
    assert_eq!(
        snapshot.containing(0x55d0_c100_0010).map(|m| m.kind),
        Some(Kind::Heap)
    );
    assert!(snapshot.containing(0x10).is_none());
}

#[test]
fn shared_objects_by_name() {
    assert!(is_shared_object("/usr/lib/libc.so.6"));
    assert!(is_shared_object("/usr/lib/libfoo.so"));
    assert!(is_shared_object("/tmp/libbar.so.1.2 (deleted)"));
    assert!(!is_shared_object("/usr/lib/locale/locale-archive"));
    assert!(!is_shared_object("/tmp/something.sock"));
    assert!(!is_shared_object("/srv/so.data"));
}

#[test]
fn odd_paths_survive() {
    let text = b"1000-2000 rw-s 00000000 00:05 77    /SYSV\n\
                     3000-4000 r--p 00000000 fe:00 9       /tmp/caf\xe9 with  spaces \n";
    let regions = parse_smaps(text).unwrap();
    assert_eq!(regions[0].path.as_deref(), Some("/SYSV"));
    assert_eq!(
        regions[1].path.as_deref(),
        Some("/tmp/caf\u{fffd} with  spaces ")
    );
}

#[test]
fn rejects_what_is_not_smaps() {
    let bad: [&[u8]; 7] = [
        b"Rss: 4 kB\n",
        b"1000-2000 rw-p 0 00:00\n",
        b"1000 rw-p 00000000 00:00 0\n",
        b"2000-1000 rw-p 00000000 00:00 0\n",
        b"1000-2000 rw-p 00000000 0000 0\n",
        b"1000-2000 rw-p 00000000 00:00 0\nRss: many kB\n",
        b"1000-2000 rwxps 00000000 00:00 0\n",
    ];
    for text in bad {
        assert!(
            parse_smaps(text).is_err(),
            "{:?} is rejected",
            String::from_utf8_lossy(text)
        );
    }
    let err = parse_smaps(b"1000-2000 rw-p 00000000 00:00 0\nRss: x kB\n").unwrap_err();
    assert_eq!(err.line, 2);
}

#[test]
fn reads_this_process() {
    let snapshot = read(std::process::id()).expect("this process's map is readable");
    let exe = std::env::current_exe().unwrap();
    assert_eq!(snapshot.exe.as_deref(), exe.to_str());
    let kinds: Vec<Kind> = snapshot.mappings.iter().map(|m| m.kind).collect();
    for kind in [Kind::Executable, Kind::Stack, Kind::Vdso] {
        assert!(kinds.contains(&kind), "{kind:?} in {kinds:?}");
    }
    let local = 0_u8;
    let on_stack = snapshot
        .containing(std::ptr::from_ref(&local) as u64)
        .map(|m| m.kind);
    // Test threads run on thread stacks (anonymous mappings), not the main stack.
    assert!(matches!(on_stack, Some(Kind::Anonymous | Kind::Stack)));
}

#[test]
fn a_missing_process_is_a_user_error() {
    let err = read(u32::MAX).unwrap_err();
    let user = err.downcast_ref::<UserError>().expect("a user error");
    assert!(user.to_string().contains("no process"), "{user}");
}

fn region_strategy() -> impl Strategy<Value = Region> {
    let path = prop_oneof![
        Just(None),
        Just(Some("[heap]".to_string())),
        Just(Some("[vdso]".to_string())),
        // Any path the kernel can print: no newline (escaped as \012), not starting with
        // a space (indistinguishable from the padding).
        "/[^\n]{0,40}".prop_map(Some),
    ];
    (
        (0_u64..1 << 47, 0_u64..1 << 30),
        "[r-][w-][x-][ps]",
        0_u64..1 << 40,
        (0_u32..4096, 0_u32..1 << 20),
        0_u64..u64::MAX,
        path,
        (0_u64..1 << 30, 0_u64..1 << 30, 0_u64..1 << 30),
    )
        .prop_map(
            |((start, len), perms, offset, (major, minor), inode, path, (rss, anon, swap))| {
                Region {
                    start,
                    end: start + len,
                    perms,
                    offset,
                    dev: format!("{major:02x}:{minor:02x}"),
                    inode,
                    path,
                    rss_kb: rss,
                    anonymous_kb: anon,
                    swap_kb: swap,
                    anon_huge_pages_kb: anon / 2048 * 2048,
                }
            },
        )
}

/// smaps as the kernel writes it (fs/proc/task_mmu.c, show_map_vma and
/// show_smap_vma_flags): padded path column, a fixed set of fields, THPeligible and VmFlags.
fn render(regions: &[Region]) -> String {
    let mut text = String::new();
    for r in regions {
        let head = format!(
            "{:08x}-{:08x} {} {:08x} {} {} ",
            r.start, r.end, r.perms, r.offset, r.dev, r.inode
        );
        text.push_str(&head);
        if let Some(path) = &r.path {
            text.push_str(&" ".repeat(73_usize.saturating_sub(head.len())));
            text.push_str(path);
        }
        text.push('\n');
        let kb = |name: &str, v: u64| format!("{:<16}{v:>8} kB\n", format!("{name}:"));
        text.push_str(&kb("Size", (r.end - r.start) / 1024));
        text.push_str(&kb("Rss", r.rss_kb));
        text.push_str(&kb("Pss", r.rss_kb / 2));
        text.push_str(&kb("Anonymous", r.anonymous_kb));
        text.push_str(&kb("AnonHugePages", r.anon_huge_pages_kb));
        text.push_str(&kb("Swap", r.swap_kb));
        text.push_str(&kb("SwapPss", r.swap_kb));
        text.push_str("THPeligible:    1\nVmFlags: rd wr mr mw me ac sd \n");
    }
    text
}

/// Found by the fuzz target smaps: garbled figures summed past u64 (overlapping ranges of
/// nearly 2^64 bytes), and a kB figure whose bytes pass u64 was shown times 1024.
#[test]
fn garbled_figures_neither_overflow_nor_pass() {
    let huge = "0-ffffffffffffff00 r--p 00000000 00:00 0 \n";
    let regions = parse_smaps(format!("{huge}{huge}").as_bytes()).unwrap();
    let (_, all) = crate::model::maps::summarize(&classify(regions, None));
    assert_eq!(all.size_bytes, u64::MAX);
    let too_big = format!("{huge}Rss: {} kB\n", u64::MAX / 1024 + 1);
    let err = parse_smaps(too_big.as_bytes()).unwrap_err();
    assert!(err.what.contains("not a number of kB"), "{err}");
    let fits = format!("{huge}Rss: {} kB\n", u64::MAX / 1024);
    assert!(parse_smaps(fits.as_bytes()).is_ok());
}

proptest! {
    #[test]
    fn parse_inverts_the_kernel_format(regions in prop::collection::vec(region_strategy(), 0..20)) {
        let parsed = parse_smaps(render(&regions).as_bytes()).unwrap();
        prop_assert_eq!(parsed, regions);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_smaps(&bytes);
    }

    #[test]
    fn classification_keeps_every_region(regions in prop::collection::vec(region_strategy(), 0..20)) {
        let mappings = classify(regions.clone(), Some("/x"));
        prop_assert_eq!(mappings.len(), regions.len());
        for (m, r) in mappings.iter().zip(&regions) {
            prop_assert_eq!(&m.region, r);
            prop_assert_eq!(m.part.is_some(), matches!(m.kind, Kind::Executable | Kind::Library));
        }
    }
}

//! `oslab maps`: the annotated memory map as a table, a summary per kind and a note on ASLR,
//! or as one JSON document (docs/maps.md). Addresses are hex strings in JSON: above 2^53 (the
//! vsyscall page is at 0xffffffffff600000) a JSON number loses digits in most readers.

use serde_json::{Value, json};

use super::env_table::format_bytes;
use super::format::{Align, Table, wrap};
use crate::model::maps::{
    self, AslrRegion, CHILD_BLOCK_BYTES, Mapping, Report, Totals, VSYSCALL_ADDRESS,
};

/// Width the prose (the target's description, the ASLR note) is wrapped to.
const WIDTH: usize = 100;

/// The text of `oslab maps`: who the target is, one row per mapping in address order (the
/// columns of the kernel's own maps listing first, so a reader can hold the two side by
/// side), the summary per kind, and the ASLR note.
pub fn render(report: &Report) -> String {
    let snapshot = &report.snapshot;
    let mut out = format!("Memory map of PID {}: {}\n", snapshot.pid, snapshot.command);
    if let Some(text) = child_description(report) {
        out.push_str(&wrap(&text, WIDTH, "  ", "  "));
        out.push('\n');
    }
    out.push_str(&format!(
        "  executable {}\n\n",
        snapshot
            .exe
            .as_deref()
            .unwrap_or("unknown (the process's executable is unreadable)")
    ));
    if let Some(text) = emulation_note(report) {
        out.push_str(&wrap(&text, WIDTH, "  ", "  "));
        out.push_str("\n\n");
    }

    let mut table = Table::new(&[
        ("address", Align::Left),
        ("size", Align::Right),
        ("perm", Align::Left),
        ("offset", Align::Right),
        ("dev", Align::Left),
        ("inode", Align::Right),
        ("RSS", Align::Right),
        ("anon", Align::Right),
        ("swap", Align::Right),
        ("what", Align::Left),
        ("path", Align::Left),
    ]);
    for m in &snapshot.mappings {
        let r = &m.region;
        table.row(vec![
            format!("{:x}-{:x}", r.start, r.end),
            bytes(r.size_bytes()),
            r.perms.clone(),
            format!("{:08x}", r.offset),
            r.dev.clone(),
            r.inode.to_string(),
            kb(r.rss_kb),
            kb(r.anonymous_kb),
            kb(r.swap_kb),
            m.label(),
            r.path.clone().unwrap_or_default(),
        ]);
    }
    out.push_str(&table.render(2));

    out.push_str("\nSummary per kind\n\n");
    let mut summary = Table::new(&[
        ("kind", Align::Left),
        ("mappings", Align::Right),
        ("size", Align::Right),
        ("RSS", Align::Right),
        ("anonymous", Align::Right),
        ("swap", Align::Right),
    ]);
    let (rows, all) = maps::summarize(&snapshot.mappings);
    let mut row = |name: String, t: &Totals| {
        summary.row(vec![
            name,
            t.count.to_string(),
            bytes(t.size_bytes),
            kb(t.rss_kb),
            kb(t.anonymous_kb),
            kb(t.swap_kb),
        ])
    };
    for (kind, part, totals) in &rows {
        row(maps::label(*kind, *part), totals);
    }
    row("total".into(), &all);
    out.push_str(&summary.render(2));

    out.push('\n');
    out.push_str(&wrap(&aslr_note(report), WIDTH, "", "  "));
    out.push('\n');
    out
}

/// The JSON document of `oslab maps --json`, described in docs/maps.md.
pub fn document(report: &Report) -> Value {
    let snapshot = &report.snapshot;
    let (rows, all) = maps::summarize(&snapshot.mappings);
    let totals = |t: &Totals| {
        json!({
            "count": t.count,
            "size_kb": t.size_bytes / 1024,
            "rss_kb": t.rss_kb,
            "anonymous_kb": t.anonymous_kb,
            "swap_kb": t.swap_kb,
        })
    };
    let summary: Vec<Value> = rows
        .iter()
        .map(|(kind, part, t)| {
            let mut row = totals(t);
            row["kind"] = json!(kind.as_str());
            row["part"] = json!(part.map(|p| p.as_str()));
            row["label"] = json!(maps::label(*kind, *part));
            row
        })
        .collect();
    let child = report.child_block.map(|address| {
        json!({
            "description": child_description(report),
            "block_address": hex(address),
            "block_bytes": CHILD_BLOCK_BYTES,
            "block_kind": snapshot.containing(address).map(|m| m.kind.as_str()),
        })
    });
    let comparison: Vec<Value> = report
        .aslr
        .comparison
        .iter()
        .map(|c| {
            json!({
                "region": c.region.kind().as_str(),
                "first": c.first.map(hex),
                "second": c.second.map(hex),
                "moved": c.first.zip(c.second).map(|(a, b)| a != b),
            })
        })
        .collect();
    json!({
        "pid": snapshot.pid,
        "command": snapshot.command,
        "executable": snapshot.exe,
        "emulation": report.emulation,
        "emulation_note": emulation_note(report),
        "target": if report.child_block.is_some() { "child" } else { "pid" },
        "child": child,
        "mappings": snapshot.mappings.iter().map(mapping_document).collect::<Vec<_>>(),
        "summary": summary,
        "total": totals(&all),
        "aslr": {
            "randomize_va_space": report.aslr.randomize_va_space,
            "no_randomize": snapshot.no_randomize,
            "comparison": comparison,
            "note": aslr_note(report),
        },
    })
}

fn mapping_document(m: &Mapping) -> Value {
    let r = &m.region;
    json!({
        "start": hex(r.start),
        "end": hex(r.end),
        "size_kb": r.size_bytes() / 1024,
        "perms": r.perms,
        "offset": hex(r.offset),
        "dev": r.dev,
        "inode": r.inode,
        "path": r.path,
        "kind": m.kind.as_str(),
        "part": m.part.map(|p| p.as_str()),
        "label": m.label(),
        "rss_kb": r.rss_kb,
        "anonymous_kb": r.anonymous_kb,
        "swap_kb": r.swap_kb,
    })
}

/// What user-mode emulation does to the map: the kernel maps the emulator's process.
fn emulation_note(report: &Report) -> Option<String> {
    let emulator = report.emulation.as_deref()?;
    Some(format!(
        "Under emulation ({emulator}), the kernel maps the emulator's process: a program it runs \
         has the emulator as its executable, its own binary is mapped as a plain file, and its \
         brk heap is an anonymous mapping of the emulator's; [heap], [stack] and the vDSO are \
         the emulator's."
    ))
}

/// What the fresh child is and where its heap block landed.
fn child_description(report: &Report) -> Option<String> {
    let block = report.child_block?;
    let place = match report.snapshot.containing(block) {
        Some(m) => format!("lies in the {} mapping", m.label()),
        None => "lies outside every mapping read".into(),
    };
    Some(format!(
        "A fresh child of oslab: this binary re-executed as the hidden `oslab maps-child`, \
         dynamically linked like most programs. It filled a {} block from malloc, which glibc \
         serves from the brk heap below its 128 KiB mmap threshold; the block at {} {place}. \
         It waits on a pipe while its map is read, then exits.",
        format_bytes(CHILD_BLOCK_BYTES as u64),
        hex(block)
    ))
}

/// One paragraph on ASLR: what the sysctl says, whether the target opted out, and what moved
/// between two fresh children (or, for a given PID, where the vsyscall page sits).
pub fn aslr_note(report: &Report) -> String {
    let aslr = &report.aslr;
    let snapshot = &report.snapshot;
    let mut note = match aslr.randomize_va_space {
        Some(0) => "ASLR: off (kernel.randomize_va_space = 0): every run gets the same \
                    addresses."
            .to_string(),
        Some(1) => "ASLR: kernel.randomize_va_space = 1: the stack, the mmap area (libraries), \
                    the vDSO and a PIE executable move on every run; the heap is not randomized \
                    on its own (it starts right after the executable)."
            .to_string(),
        Some(2) => "ASLR: kernel.randomize_va_space = 2: the stack, the mmap area (libraries), \
                    the vDSO, a PIE executable and the heap start move on every run."
            .to_string(),
        Some(n) => format!("ASLR: kernel.randomize_va_space = {n} (a value oslab does not know)."),
        None => "ASLR: kernel.randomize_va_space is unreadable.".to_string(),
    };
    if snapshot.no_randomize == Some(true) {
        note.push_str(&format!(
            " PID {} runs with ADDR_NO_RANDOMIZE (setarch -R, a debugger), so its addresses do \
             not move.",
            snapshot.pid
        ));
    }
    let compared: Vec<_> = aslr
        .comparison
        .iter()
        .filter_map(|c| Some((c.region, c.first?, c.second?)))
        .collect();
    if !compared.is_empty() {
        let names = |moved: bool| {
            let list: Vec<String> = compared
                .iter()
                .filter(|(_, a, b)| (a != b) == moved)
                .map(|(region, _, _)| match region {
                    AslrRegion::Vsyscall => "vsyscall page".to_string(),
                    other => maps::label(other.kind(), None),
                })
                .collect();
            join_words(&list)
        };
        let (moved, same) = (names(true), names(false));
        note.push_str(" A second fresh child had ");
        match (moved.is_empty(), same.is_empty()) {
            (false, false) => note.push_str(&format!(
                "other bases for the {moved}, and the same for the {same}."
            )),
            (false, true) => note.push_str(&format!("other bases for the {moved}.")),
            (true, _) => note.push_str(&format!("the same bases for the {same}.")),
        }
    }
    match snapshot.base(AslrRegion::Vsyscall) {
        Some(VSYSCALL_ADDRESS) => note.push_str(&format!(
            " The vsyscall page is at the fixed address {} in every process: it predates the \
             vDSO and is kept for old binaries, so ASLR cannot move it.",
            hex(VSYSCALL_ADDRESS)
        )),
        Some(other) => note.push_str(&format!(" The vsyscall page is at {}.", hex(other))),
        None => note.push_str(" This process has no vsyscall page (vsyscall=none, or not x86-64)."),
    }
    note
}

/// `a`, `a and b`, `a, b and c`.
fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn hex(address: u64) -> String {
    format!("0x{address:x}")
}

fn bytes(n: u64) -> String {
    if n == 0 { "0".into() } else { format_bytes(n) }
}

fn kb(n: u64) -> String {
    bytes(n.saturating_mul(1024))
}

// The fixtures are Linux smaps regions, classified by the Linux backend's rules.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::model::maps::{Aslr, BaseComparison, Region, Snapshot};
    use crate::platform::maps::classify;

    fn region(start: u64, end: u64, perms: &str, path: Option<&str>, rss_kb: u64) -> Region {
        Region {
            start,
            end,
            perms: perms.into(),
            offset: 0,
            dev: "00:00".into(),
            inode: 0,
            path: path.map(Into::into),
            rss_kb,
            anonymous_kb: rss_kb,
            swap_kb: 0,
            anon_huge_pages_kb: 0,
        }
    }

    fn report(comparison: Vec<BaseComparison>, no_randomize: bool) -> Report {
        let regions = vec![
            region(0x5000_0000, 0x5000_1000, "r-xp", Some("/bin/prog"), 4),
            region(0x5100_0000, 0x5102_1000, "rw-p", Some("[heap]"), 68),
            region(0x7ff0_0000, 0x7ff2_1000, "rw-p", Some("[stack]"), 12),
            region(0x7f00_0000, 0x7f00_2000, "r-xp", Some("[vdso]"), 8),
            region(
                VSYSCALL_ADDRESS,
                VSYSCALL_ADDRESS + 0x1000,
                "--xp",
                Some("[vsyscall]"),
                0,
            ),
        ];
        Report {
            snapshot: Snapshot {
                pid: 42,
                command: "prog".into(),
                exe: Some("/bin/prog".into()),
                no_randomize: Some(no_randomize),
                mappings: classify(regions, Some("/bin/prog")),
            },
            child_block: Some(0x5100_0010),
            aslr: Aslr {
                randomize_va_space: Some(2),
                comparison,
            },
            emulation: None,
        }
    }

    fn compare(region: AslrRegion, first: u64, second: u64) -> BaseComparison {
        BaseComparison {
            region,
            first: Some(first),
            second: Some(second),
        }
    }

    #[test]
    fn note_names_what_moved_and_what_did_not() {
        let r = report(
            vec![
                compare(AslrRegion::Executable, 1, 2),
                compare(AslrRegion::Heap, 3, 4),
                compare(AslrRegion::Vsyscall, VSYSCALL_ADDRESS, VSYSCALL_ADDRESS),
            ],
            false,
        );
        let note = aslr_note(&r);
        assert!(note.contains("randomize_va_space = 2"), "{note}");
        assert!(
            note.contains(
                "other bases for the executable and heap, and the same for the vsyscall page."
            ),
            "{note}"
        );
        assert!(!note.contains("ADDR_NO_RANDOMIZE"), "{note}");
        let pinned = aslr_note(&report(Vec::new(), true));
        assert!(
            pinned.contains("PID 42 runs with ADDR_NO_RANDOMIZE"),
            "{pinned}"
        );
        assert!(!pinned.contains("second fresh child"), "{pinned}");
        assert!(
            pinned.contains("fixed address 0xffffffffff600000"),
            "{pinned}"
        );
    }

    #[test]
    fn text_has_the_table_summary_and_note() {
        let text = render(&report(Vec::new(), false));
        assert!(text.starts_with("Memory map of PID 42: prog\n"), "{text}");
        assert!(
            text.contains("the block at 0x51000010 lies in the heap mapping"),
            "{text}"
        );
        assert!(text.contains("executable /bin/prog"), "{text}");
        let row = text
            .lines()
            .find(|l| l.contains("[heap]"))
            .expect("a heap row");
        assert!(row.contains("51000000-51021000"), "{row}");
        assert!(row.contains("132 KiB") && row.contains("68 KiB"), "{row}");
        let total = text
            .lines()
            .find(|l| l.trim_start().starts_with("total"))
            .expect("a total row");
        assert!(total.contains(" 5 "), "{total}");
        assert!(text.contains("ASLR:"), "{text}");
        assert!(!text.contains("Under emulation"), "{text}");
    }

    #[test]
    fn under_emulation_the_map_says_it_is_the_emulators() {
        let mut emulated = report(Vec::new(), false);
        emulated.emulation = Some("qemu-aarch64".into());
        let text = render(&emulated);
        assert!(
            text.contains("Under emulation (qemu-aarch64), the kernel"),
            "{text}"
        );
        let doc = document(&emulated);
        assert_eq!(doc["emulation"], "qemu-aarch64");
        assert!(
            doc["emulation_note"]
                .as_str()
                .unwrap()
                .contains("emulator's process")
        );
        assert!(document(&report(Vec::new(), false))["emulation"].is_null());
    }

    #[test]
    fn json_sums_and_hex_addresses() {
        let doc = document(&report(vec![compare(AslrRegion::Stack, 5, 5)], false));
        assert_eq!(doc["pid"], 42);
        assert_eq!(doc["target"], "child");
        assert_eq!(doc["child"]["block_kind"], "heap");
        let mappings = doc["mappings"].as_array().unwrap();
        assert_eq!(mappings.len(), 5);
        assert_eq!(mappings[4]["start"], "0xffffffffff600000");
        assert_eq!(mappings[0]["label"], "executable text");
        let summed: u64 = doc["summary"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["rss_kb"].as_u64().unwrap())
            .sum();
        assert_eq!(summed, 92);
        assert_eq!(doc["total"]["rss_kb"], 92);
        assert_eq!(doc["aslr"]["comparison"][0]["moved"], false);
        assert_eq!(doc["aslr"]["comparison"][0]["region"], "stack");
    }

    #[test]
    fn words_join_like_prose() {
        let w = |v: &[&str]| join_words(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(w(&[]), "");
        assert_eq!(w(&["a"]), "a");
        assert_eq!(w(&["a", "b"]), "a and b");
        assert_eq!(w(&["a", "b", "c"]), "a, b and c");
    }
}

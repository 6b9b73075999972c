//! The bodies of the fuzz targets, one function per target over the raw input bytes.
//!
//! The libFuzzer binaries in `fuzz_targets/` call these, and so does the main crate's
//! `tests/fuzz_regressions.rs` (it includes this file by path), which replays every seed and
//! every input a fuzz run found on the stable toolchain: both run exactly the same code.
//! Each function must return for any input; a panic, an abort, a hang or unbounded memory is
//! the bug the fuzzer reports. Only the library's public API is used.

use oslab::model::maps::{Aslr, AslrRegion, BaseComparison, Report, Snapshot};

/// `oslab import`'s whole check of a file ([`oslab::cli::read_import`]: UTF-8, the export
/// document, every value plausible); a run it accepts must then be shown, reported and
/// exported like a measured one, and its export must be accepted again.
pub fn import_json(data: &[u8]) {
    let Ok(run) = oslab::cli::read_import(data, "input.json") else {
        return;
    };
    let _ = oslab::report::ladder::render(&run);
    let _ = oslab::report::json::run_document(&run);
    let _ = oslab::report::export::csv(&run);
    let _ = oslab::report::html::render(std::slice::from_ref(&run));
    let _ = oslab::report::env_table::render(&run.environment);
    let again = oslab::report::export::json_document(&run).to_string();
    if let Err(e) = oslab::cli::read_import(again.as_bytes(), "re-exported.json") {
        panic!("an accepted import does not survive export and import: {e}");
    }
}

/// `/proc/PID/smaps` (or `maps`) text as `oslab maps` takes it: parsed, classified against
/// the executable named by the first mapped path, and shown as text and JSON.
pub fn smaps(data: &[u8]) {
    use oslab::platform::maps;
    let Ok(regions) = maps::parse_smaps(data) else {
        return;
    };
    let exe = regions.iter().find_map(|r| r.path.clone());
    let mappings = maps::classify(regions, exe.as_deref());
    let snapshot = Snapshot {
        pid: 1,
        command: "fuzz".into(),
        mappings,
        exe,
        no_randomize: Some(false),
    };
    let comparison = AslrRegion::ALL
        .iter()
        .map(|&region| BaseComparison {
            region,
            first: snapshot.base(region),
            second: snapshot.base(region).map(|b| b.wrapping_add(4096)),
        })
        .collect();
    let child_block = snapshot.mappings.first().map(|m| m.region.start);
    let report = Report {
        snapshot,
        child_block,
        aslr: Aslr {
            randomize_va_space: Some(2),
            comparison,
        },
        emulation: None,
    };
    let _ = oslab::report::maps::render(&report);
    let _ = oslab::report::maps::document(&report);
    let _ = oslab::report::maps::aslr_note(&report);
}

/// A command line, one argument per line after `oslab` (the first line is the command:
/// `run`, `compare`, …), parsed by clap and its numbers, CPU lists, parameters and names
/// checked as the command would before it does anything ([`oslab::cli::check_command_line`]).
/// The number parsers are also fed each argument on its own.
pub fn cli_numbers(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let args: Vec<&str> = text.split('\n').collect();
    for arg in &args {
        if let Some(n) = oslab::experiment::params::parse_size(arg) {
            assert_eq!(
                oslab::experiment::params::parse_size(&oslab::experiment::params::format_size(n)),
                Some(n),
                "a size does not read back as written"
            );
        }
        if let Some(cpus) = oslab::platform::cpu::parse_list(arg) {
            let written = oslab::platform::cpu::format_list(&cpus);
            assert!(
                oslab::platform::cpu::parse_list(&written).is_some(),
                "the CPU list {written} does not read back"
            );
        }
        let _ = oslab::experiment::params::parse_assignment(arg);
    }
    let argv = std::iter::once("oslab").chain(args.iter().copied());
    let _ = oslab::cli::check_command_line(argv);
}

/// Text of any file under /proc, /sys or a cgroup that oslab reads, through every parser of
/// such text ([`oslab::platform::parsers::parse_all`]).
pub fn proc_text(data: &[u8]) {
    let _ = oslab::platform::parsers::parse_all(&String::from_utf8_lossy(data));
}

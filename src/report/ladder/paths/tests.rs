use super::super::tests::result;
use super::*;

fn run_of(results: &[ExperimentResult]) -> super::super::Ladder {
    super::super::tests::ladder_of_results(results)
}

#[test]
fn inline_and_libc_join_their_called_rung() {
    let results = vec![
        result("syscall.function_call", &[], &[1.0, 1.0, 1.0]),
        result(
            "syscall.stat",
            &[("entry", "call"), ("path", "/etc/passwd")],
            &[990.0, 1000.0, 1010.0],
        ),
        result(
            "syscall.stat",
            &[("entry", "inline"), ("path", "/etc/passwd")],
            &[650.0, 660.0, 670.0],
        ),
        result(
            "syscall.stat",
            &[("entry", "libc"), ("path", "/etc/passwd")],
            &[995.0, 1005.0],
        ),
        result("syscall.getppid", &[("entry", "call")], &[166.0, 166.0]),
        result("syscall.getppid", &[("entry", "inline")], &[117.0, 117.0]),
        result("syscall.getppid_libc", &[], &[170.0, 170.0]),
    ];
    let ladder = run_of(&results);
    let labels: Vec<&str> = ladder.rungs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        ["syscall.function_call", "syscall.getppid", "syscall.stat"],
        "one rung per operation, named without its path"
    );
    let stat = &ladder.rungs[2];
    assert_eq!(stat.median, 1000.0, "the headline is the called path");
    assert_eq!(stat.paths.inline, Some(660.0));
    assert_eq!(stat.paths.libc, Some(1000.0));
    let gap = stat.paths.gap.as_ref().unwrap();
    assert_eq!(gap.ns, 340.0);
    assert!((gap.share - 340.0 / 660.0).abs() < 1e-9);
    let (lo, hi) = gap.ci.unwrap();
    assert!(lo <= 340.0 && 340.0 <= hi, "{lo} – {hi}");
    assert_eq!(gap.text(), "+340 ns +52%");
    let getppid = &ladder.rungs[1];
    assert_eq!(
        getppid.paths.libc,
        Some(170.0),
        "the older libc name joins its rung"
    );
    assert_eq!(ladder.rungs[0].paths, Paths::default());
    assert!(ladder.has_gap() && ladder.has_libc());
}

// Of the POSIX experiments, which Windows builds leave out.
#[cfg(unix)]
#[test]
fn a_path_without_its_called_rung_stands_alone() {
    let results = vec![
        result(
            "syscall.read",
            &[("entry", "inline"), ("size", "1")],
            &[200.0],
        ),
        result(
            "syscall.read",
            &[("entry", "call"), ("size", "64")],
            &[300.0],
        ),
        // An older run's result, measured before the path was a parameter.
        result("syscall.getpid", &[], &[100.0]),
    ];
    let ladder = run_of(&results);
    assert_eq!(
        ladder.rungs.len(),
        3,
        "nothing joins a rung of other parameters"
    );
    assert!(ladder.rungs.iter().all(|r| r.paths == Paths::default()));
    assert!(!ladder.has_gap());
    let labels: Vec<&str> = ladder.rungs.iter().map(|r| r.label.as_str()).collect();
    assert!(labels.contains(&"syscall.read entry=inline"), "{labels:?}");
}

#[test]
fn a_negative_gap_reads_as_one() {
    let gap = Gap {
        ns: -5.0,
        share: -0.05,
        ci: None,
        paired: false,
    };
    assert_eq!(gap.text(), "−5.00 ns −5.0%");
}

#[test]
fn a_paired_gap_gives_its_interval_as_shares() {
    let gap = Gap {
        ns: 4.0,
        share: 0.04,
        ci: Some((2.0, 6.3)),
        paired: true,
    };
    assert_eq!(gap.text_with(100.0), "+4.00 ns +4.0% (+2.0…+6.3%)");
}

#[test]
fn the_footer_names_the_mitigations() {
    let env = Environment {
        vulnerabilities: BTreeMap::from([
            ("spec_rstack_overflow".into(), "Mitigation: Safe RET".into()),
            ("meltdown".into(), "Not affected".into()),
            ("spectre_v2".into(), "Mitigation: Retpolines".into()),
        ]),
        ..Default::default()
    };
    let found = mitigations(&env);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["spec_rstack_overflow", "spectre_v2"]);
    let text = footer(true, &found);
    assert!(
        text.contains("spec_rstack_overflow: Mitigation: Safe RET"),
        "{text}"
    );
    assert!(text.contains("docs/syscall-path.md"));
    assert!(!text.contains("meltdown"));
    assert_eq!(footer(false, &found), "");
    assert!(footer(true, &[]).contains("no return-stack mitigation state"));
}

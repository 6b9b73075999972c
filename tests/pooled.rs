//! One truth per figure: a `--repeat 3` run whose worker processes differ by a known amount
//! (synthetic.spin's `spread`: process k spins k × spread ns more) shows the same pooled
//! median in every view — the HTML results table, cost ladder, time chart, side-by-side
//! chart and comparison, the terminal `show` and `compare`, the JSON document, the CSV and
//! JSON exports — and each process's own median only as such (dots on the bars, labelled).
//! No timing value is asserted: only that the views agree, and ratios with wide margins.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use common::Lab;
use oslab::report::format::time_ns;
use serde_json::Value;

const PARAMS: [&str; 6] = [
    "synthetic.spin",
    "--param",
    "ns=1000",
    "--param",
    "spread=4000",
    "--quick",
];

/// The one configuration of a run document.
fn configuration(doc: &Value) -> &Value {
    let all = doc["configurations"].as_array().expect("configurations");
    assert_eq!(all.len(), 1, "{doc:#}");
    &all[0]
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// A configuration's process medians.
fn process_medians(config: &Value) -> Vec<f64> {
    config["process_medians"]
        .as_array()
        .expect("process_medians")
        .iter()
        .map(f)
        .collect()
}

/// The part of `page` from `start` to the next `end` after it.
fn part<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("{start} in the page"));
    let rest = &page[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

#[test]
fn every_view_shows_the_pooled_figure() {
    let lab = Lab::new();
    let mut args = PARAMS.to_vec();
    args.extend(["--tag", "r1"]);
    lab.run_json(&args, 0);
    let mut args = PARAMS.to_vec();
    args.extend(["--repeat", "3", "--tag", "r2"]);
    let doc = lab.run_json(&args, 0);
    common::check_run_contract(&doc);

    // The JSON document: three processes kept apart, numbered, and one configuration.
    let c = configuration(&doc);
    assert_eq!(c["processes"], 3);
    let pooled = f(&c["median"]);
    let each = process_medians(c);
    assert_eq!(each.len(), 3);
    // 1, 5 and 9 µs per operation: process k costs more than process k-1 (wide margins:
    // natively 5× and 1.8×; the FreeBSD guest under TCG (CI) adds about 1.4–2.3 µs of its
    // own to every op, which left 2, 4 and 6 µs only 1.24× and 1.51× apart).
    assert!(
        each[1] / each[0] > 1.3 && each[2] / each[1] > 1.2,
        "{each:?}"
    );
    let results = common::results(&doc);
    for (k, r) in results.iter().enumerate() {
        assert_eq!(r["process"], k + 1);
        assert_eq!(r["processes"], 3);
        assert_eq!(f(&r["median"]), each[k], "a process's median is its own");
    }
    let shown = time_ns(pooled);
    // The pooled median falls in the middle process; the first (which a view picking one
    // process would show) and the last are far from it.
    for m in [each[0], each[2]] {
        assert_ne!(time_ns(m), shown, "no process stands in for the pool");
    }
    assert_eq!(
        f(&configuration(&lab.oslab(&["show", "r2", "--json"]).json())["median"]),
        pooled,
        "show --json gives the same document"
    );

    html_views(&lab, &shown, &each);
    terminal_views(&lab, pooled, &shown, &each, c);
    exports(&lab, pooled, &each);
}

/// The report of r1 and r2: the results table, the ladder, the time chart, the comparison and
/// the side-by-side chart all carry the pooled median; the process medians are dots.
fn html_views(lab: &Lab, shown: &str, each: &[f64]) {
    let file = lab.dir().join("r.html");
    lab.oslab(&["report", "r1", "r2", "-o", file.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(&file).unwrap();

    let table = part(&page, "<table class=\"results\">", "</table>");
    let row = part(table, "(run 2)</td>", "</tr>");
    assert!(row.contains(&format!("<td>{shown} / spin</td>")), "{row}");
    let medians: Vec<String> = each.iter().map(|m| time_ns(*m)).collect();
    assert!(
        row.contains(&format!(
            "from 3 processes (medians {})",
            medians.join(", ")
        )),
        "the processes are named as such: {row}"
    );

    let ladder = part(&page, "data-chart=\"ladder-run2\"", "</svg>");
    assert!(ladder.contains(&format!(">{shown}</text>")), "{ladder}");
    assert_eq!(ladder.matches("class=\"process\"").count(), 3);

    let time = part(&page, "data-chart=\"synthetic-time\"", "</svg>");
    assert!(time.contains(&format!(">{shown}</text>")), "{time}");

    let cmp = part(&page, "data-table=\"comparison-1-2\"", "</table>");
    let row = part(cmp, "<td>synthetic.spin", "</tr>");
    assert!(row.contains(&format!("<td>{shown}</td>")), "B: {row}");

    let side = part(&page, "data-chart=\"compare-grouped\"", "</svg>");
    assert!(
        side.contains(&format!(">{shown} · run 2 · 3 processes ")),
        "{side}"
    );
    assert_eq!(side.matches("class=\"process\"").count(), 3, "{side}");
    // Processes at 1, 5 and 9 µs, each precise: the summary's levels table names the spread
    // between them as what makes the interval wide, and more than 2× apart (9× natively, over
    // 3× under an emulator's added cost), the configuration unstable with its processes'
    // medians.
    let summary = part(&page, "<section id=\"summary\">", "</section>");
    let levels = part(summary, "data-table=\"levels-run2\"", "</table>");
    let row = part(levels, "<td>synthetic.spin spread=4000</td>", "</tr>");
    assert!(row.contains("<td>between processes</td>"), "{row}");
    assert!(
        row.contains("<td><strong>±"),
        "the widest level stands out: {row}"
    );
    assert!(
        row.contains(&format!("unstable: medians {}", medians.join(" / "))),
        "{row}"
    );
    for (k, m) in each.iter().enumerate() {
        assert!(
            side.contains(&format!("process {} of 3, median {}", k + 1, time_ns(*m))),
            "process {k} is a labelled dot: {side}"
        );
    }
}

/// `show` and `compare`, as text and JSON; `config` is the run document's configuration.
fn terminal_views(lab: &Lab, pooled: f64, shown: &str, each: &[f64], config: &Value) {
    let show = lab.oslab(&["show", "r2"]);
    show.assert_code(0);
    let rung = show
        .stdout
        .lines()
        .find(|l| l.contains("synthetic.spin") && l.contains(" spin "))
        .unwrap_or_else(|| panic!("the ladder row\n{show}"));
    assert!(rung.contains(shown), "{rung}");
    let per_process = show
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Per worker process"))
        .find(|l| l.contains("synthetic.spin"))
        .unwrap_or_else(|| panic!("the per-process table\n{show}"));
    assert!(per_process.contains(shown));
    // The notes say the processes differ where the run found them to differ more than each
    // was measured (natively always: ±1–3% within against ±75% between). Under a loaded
    // emulator (the aarch64 lane of CI, beside the FreeBSD guest) a process's own interval can
    // be as wide as the spread: then the notes stay silent, as the document says.
    let (within, between) = (
        f(&config["within_process"]),
        f(&config["between_processes"]),
    );
    let sensitive = config["layout_sensitive"] == true;
    assert_eq!(sensitive, between > within && between >= 0.01, "{config:#}");
    assert_eq!(
        show.stdout.contains("spread=4000 layout-sensitive: ±"),
        sensitive,
        "the notes say the processes differ as the document does\n{show}"
    );
    if !sensitive {
        eprintln!(
            "pooled: not layout-sensitive here: ±{:.1}% within a process against ±{:.1}% \
             between ({each:?})",
            within * 100.0,
            between * 100.0
        );
    }
    for m in each {
        assert!(per_process.contains(&time_ns(*m)), "{per_process}");
    }

    let cmp = lab.oslab(&["compare", "r1", "r2", "--json"]);
    cmp.assert_code(0);
    let doc = cmp.json();
    let pair = &doc["results"][0];
    assert_eq!(pair["processes"], serde_json::json!([1, 3]));
    assert_eq!(f(&pair["b"]), pooled, "compare's B is the pooled median");
    let text = lab.oslab(&["compare", "r1", "r2"]);
    let row = text
        .stdout
        .lines()
        .find(|l| l.starts_with("synthetic.spin"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(shown), "{row}");
}

/// The CSV rows of the configuration pool to the same median; the JSON export, imported
/// elsewhere, gives the same document.
fn exports(lab: &Lab, pooled: f64, each: &[f64]) {
    let csv = lab.oslab(&["export", "r2", "--format", "csv"]);
    csv.assert_code(0);
    let mut lines = csv.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (process, ns) = (col("process"), col("ns_per_op"));
    let mut all = Vec::new();
    let mut by_process = vec![Vec::new(); 3];
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let v: f64 = cells[ns].parse().unwrap();
        let k: usize = cells[process].parse().unwrap();
        all.push(v);
        by_process[k - 1].push(v);
    }
    let csv_median = median(&mut all);
    assert!(
        ((csv_median - pooled) / pooled).abs() < 1e-12,
        "{csv_median} vs {pooled}"
    );
    for (k, rows) in by_process.iter_mut().enumerate() {
        let m = median(rows);
        assert!(((m - each[k]) / each[k]).abs() < 1e-12, "process {k}");
    }

    let export = lab.oslab(&["export", "r2", "--format", "json"]);
    export.assert_code(0);
    let other = Lab::new();
    let file = other.dir().join("r2.json");
    std::fs::write(&file, &export.stdout).unwrap();
    other
        .oslab(&["import", file.to_str().unwrap()])
        .assert_code(0);
    let doc = other.oslab(&["show", "--json"]).json();
    let c = configuration(&doc);
    assert_eq!(f(&c["median"]), pooled, "lossless: the same pooled figure");
    assert_eq!(c["process_medians"].as_array().unwrap().len(), 3);
}

/// A process at a level of its own (synthetic.spin's `apart`: the second process spins half
/// as long again) among six: the JSON names it, `show` and the report mark it and say what
/// the figures do with it, `compare` names it on each side, and the interval below the median
/// is the other five's, not Student's t over all six (which would reach a fifth below it). Margins are wide: natively the others agree
/// within 1%, and under the FreeBSD guest's TCG a spin of 20 µs carries 1–2 µs of its own.
#[test]
fn a_process_apart_is_named_and_rests_outside_the_spread() {
    let lab = Lab::new();
    let args = [
        "synthetic.spin",
        "--param",
        "ns=20000",
        "--param",
        "apart=10000",
        "--repeat",
        "6",
        "--quick",
        "--tag",
        "apart",
    ];
    let before: Vec<&str> = args[..9].iter().copied().chain(["before"]).collect();
    let first = process_medians(configuration(&lab.run_json(&before, 0)));
    let doc = lab.run_json(&args, 0);
    let c = configuration(&doc);
    let each = process_medians(c);
    assert_eq!(each.len(), 6, "{c:#}");
    assert_eq!(c["apart_process"]["position"], 1, "{c:#}");
    assert_eq!(f(&c["apart_process"]["median"]), each[1]);
    let median = f(&c["median"]);
    assert!(each[1] / median > 1.3, "{each:?}");
    assert!(f(&c["ci_low"]) > median * 0.9, "{c:#}");

    let show = lab.oslab(&["show", "apart"]);
    show.assert_code(0);
    let text = show.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(&format!("{} (apart)", time_ns(each[1]))),
        "the per-process table marks it\n{show}"
    );
    assert!(
        text.contains(&format!(
            "a process apart: process 2 of 6 at {}",
            time_ns(each[1])
        )) && text.contains("the interval's spread between processes is the other 5's"),
        "a note names it\n{show}"
    );
    // compare names it beside the ratio, on each side.
    let cmp = lab.oslab(&["compare", "before", "apart"]);
    cmp.assert_code(0);
    let text = cmp.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    let (a, b) = (time_ns(first[1]), time_ns(each[1]));
    assert!(
        text.contains("A process apart")
            && text.contains(&format!("ns=20000 pages=0 spread=0 in A ({a})"))
            && text.contains(&format!("ns=20000 pages=0 spread=0 in B ({b})")),
        "{cmp}"
    );
    let doc = lab.oslab(&["compare", "before", "apart", "--json"]).json();
    assert_eq!(
        doc["results"][0]["apart_process_medians"],
        serde_json::json!([first[1], each[1]]),
        "{doc:#}"
    );
    let file = lab.dir().join("apart.html");
    lab.oslab(&["report", "apart", "-o", file.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(&file).expect("the report");
    assert!(
        page.contains(&format!("{} (apart)", time_ns(each[1]))) && page.contains("a process apart"),
        "the report marks it in the results and names it in the levels table"
    );
}

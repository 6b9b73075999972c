//! `oslab report`: the HTML page on synthetic runs built in-process (stored with
//! `Store::begin_run`) and on one real quick run; plus, where Chromium is installed (or may be
//! installed: `OSLAB_TEST_CHROMIUM=1` as root), that a real browser loads it without console
//! errors, builds the charts and the tables, and renders a screenshot. Without Chromium the
//! browser checks are skipped with a note, except under `CI=true`, where they fail
//! (`.ci/install-chromium` installs it). No test asserts a measured timing value.

// The experiments and process drills here are Unix's; tests/windows.rs runs on Windows.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{Lab, spread, synthetic_result, synthetic_run};
use oslab::model::{CounterStatus, ExperimentResult, Run, Status};
use oslab::report::html;
use oslab::store::Store;

const PMU_REASON: &str = "no hardware PMU is exposed here (ENOENT)";

/// The shared synthetic result, with system time and an RSS in every sample and the
/// hardware counters unsupported, as on a VM.
fn result(experiment: &str, params: &[(&str, &str)], values: &[f64]) -> ExperimentResult {
    let mut r = synthetic_result(experiment, params, values);
    for s in &mut r.samples {
        s.rusage.stime_us = 1;
        s.rusage.maxrss_kb = 4096;
    }
    r.counters = [
        "L1-dcache-load-misses",
        "L1-dcache-loads",
        "dTLB-load-misses",
        "dTLB-loads",
    ]
    .iter()
    .map(|n| CounterStatus {
        name: n.to_string(),
        supported: false,
        reason: Some(PMU_REASON.into()),
    })
    .collect();
    r
}

fn run(id: i64, tag: &str, kernel: &str, scale: f64) -> Run {
    let mut suspect = result("process.fork", &[], &spread(50_000.0 * scale, 0.02, 40));
    suspect.status = Status::Suspect;
    suspect.reason = Some("minflt per op 0.5, expected at least 1 <script>".into());
    let mut unsupported = result("ctxswitch.futex", &[], &[]);
    unsupported.status = Status::Unsupported;
    unsupported.reason = Some("needs two CPUs".into());
    let mut results = vec![
        result("syscall.function_call", &[], &spread(1.1, 0.01, 40)),
        result("syscall.getppid", &[], &spread(100.0 * scale, 0.01, 400)),
        result("ctxswitch.pipe", &[], &spread(5000.0 * scale, 0.01, 40)),
        result("ctxswitch.pipe_noswitch", &[], &spread(1300.0, 0.01, 40)),
        suspect,
        unsupported,
    ];
    // A sweep: one experiment at four values of one numeric parameter.
    for (kb, cost) in [
        ("0", 5000.0),
        ("16", 5400.0),
        ("64", 6500.0),
        ("256", 9000.0),
    ] {
        results.push(result(
            "ctxswitch.pipe",
            &[("working_set_kb", kb)],
            &spread(cost * scale, 0.01, 30),
        ));
    }
    results.push(reclaimed(scale));
    synthetic_run(id, tag, kernel, results)
}

/// A walk beside a memory load whose reclaim tracepoints counted `scale` × 8000 pages stolen
/// per pass (the Reclaim section).
fn reclaimed(scale: f64) -> ExperimentResult {
    let mut r = result("mmap.access", &[], &spread(4.0 * scale, 0.02, 8));
    r.label = Some("anonymous, headroom -25%".into());
    for (name, per_pass) in [("vmscan.scanned", 60_000.0), ("vmscan.reclaimed", 8000.0)] {
        r.counters.push(CounterStatus {
            name: name.into(),
            supported: true,
            reason: None,
        });
        for s in &mut r.samples {
            let v = per_pass * scale;
            s.counters.insert(
                name.into(),
                oslab::model::CounterValue {
                    value: Some(v),
                    raw: v as u64,
                    enabled_ns: 0,
                    running_ns: 0,
                },
            );
        }
    }
    r
}

/// Every element opened is closed in order (void elements aside): well-formed enough for a
/// browser to build the tree we meant.
fn check_balanced(html: &str) {
    // SVG elements are written either self-closed (`<line/>`) or with a closing tag.
    const VOID: [&str; 2] = ["meta", "br"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let end = rest.find('>').expect("every tag is closed with >");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        let self_closing = tag.ends_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(!name.is_empty(), "a tag has a name: <{tag}>");
        if tag.starts_with('/') {
            let open = stack.pop();
            assert_eq!(
                open.as_deref(),
                Some(name.as_str()),
                "</{name}> closes its element"
            );
        } else if !self_closing && !VOID.contains(&name.as_str()) {
            stack.push(name.clone());
        }
        if name == "style" && !tag.starts_with('/') {
            let close = rest.find("</style>").expect("style is closed");
            rest = &rest[close..];
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
}

fn check_page(html: &str) {
    check_balanced(html);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page references nothing outside itself"
    );
    assert!(!html.contains("<script src") && !html.contains("<link"));
}

#[test]
fn synthetic_runs_render_every_chart() {
    let page = html::render(&[run(1, "base", "6.1.0", 1.0)]);
    check_page(&page);
    for family in ["syscall", "ctxswitch", "process"] {
        assert!(
            page.contains(&format!("data-family=\"{family}\"")),
            "{family}"
        );
        for metric in html::metric_ids() {
            assert!(
                page.contains(&format!(
                    "data-metric=\"{metric}\" data-family=\"{family}\""
                )),
                "{family} has a {metric} figure"
            );
        }
        assert!(
            page.contains(&format!("id=\"{family}-time\"")),
            "{family}: time chart"
        );
        assert!(page.contains(&format!("id=\"{family}-distribution\"")));
        for pmu in ["l1d_miss_rate", "dtlb_miss_rate"] {
            assert!(
                page.contains(&format!("data-unsupported=\"{family}-{pmu}\"")),
                "{family}: {pmu} says unsupported"
            );
        }
    }
    // The two PMU rates unsupported for one reason: one line naming both counters once.
    assert!(
        page.contains("unsupported here: L1-dcache-load-misses, dTLB-load-misses: no hardware PMU")
    );
    assert!(page.contains("id=\"ladder-run1\""), "the ladder");
    assert!(
        page.contains("ctxswitch.pipe − pipe_noswitch, ÷ 2"),
        "the derived per-switch rung"
    );
    assert!(page.contains("× call"), "multiples of a function call");
    assert!(
        page.contains("data-chart=\"ctxswitch-sweep-ctxswitch.pipe-working_set_kb1\""),
        "the sweep is a curve"
    );
    assert!(page.contains(
        "class=\"warning\">suspect: minflt per op 0.5, expected at least 1 &lt;script&gt;"
    ));
    assert!(page.contains("unsupported: needs two CPUs"));
    assert!(
        page.contains("Test CPU") && page.contains("6.1.0"),
        "environment table"
    );
    assert!(page.contains("show 150 of them"), "subsampling is said");
    assert!(
        !page.contains("id=\"comparison\""),
        "one run: no comparison"
    );
}

#[test]
fn metrics_with_nothing_to_draw_are_lines_and_ticks_are_round() {
    let page = html::render(&[run(1, "base", "6.1.0", 1.0)]);
    // No major faults anywhere: one line in the family's list, no chart card.
    assert!(page.contains("<ul class=\"metric-lines\">"));
    assert!(page.contains(
        "<li class=\"metric-line\" data-metric=\"majflt\" data-family=\"syscall\">\
         <b>Major page faults per operation</b>: 0 for every result</li>"
    ));
    assert!(!page.contains("<figure class=\"metric\" data-metric=\"majflt\""));
    // The PMU rates, unsupported for one reason: one line for both, each still marked.
    assert!(page.contains(
        "<li class=\"metric-line unsupported folded\"><span data-metric=\"l1d_miss_rate\" \
         data-family=\"syscall\" data-unsupported=\"syscall-l1d_miss_rate\">"
    ));
    assert_eq!(
        page.matches("no hardware PMU is exposed here (ENOENT)</li>")
            .count(),
        // syscall, process, ctxswitch and mmap: one line each.
        4
    );
    assert!(!page.contains("<figure class=\"metric\" data-metric=\"l1d_miss_rate\""));
    // Measured metrics keep their chart.
    assert!(page.contains("<figure class=\"metric\" data-metric=\"stime\""));
    // maxrss (4 MiB everywhere) on powers of two, never 1.95 MiB.
    assert!(page.contains(">2 MiB</text>") && page.contains(">4 MiB</text>"));
    assert!(!page.contains("1.95 MiB"));
    // The sweep's working sets (KiB) on powers of two.
    assert!(page.contains(">256 KiB</text>"));
}

#[test]
fn two_runs_are_compared() {
    let page = html::render(&[run(1, "base", "6.1.0", 1.0), run(2, "new", "6.8.0", 2.0)]);
    check_page(&page);
    assert!(page.contains("id=\"comparison\""));
    assert!(page.contains("data-table=\"comparison-1-2\""));
    assert!(page.contains("<tr class=\"slower\"><td>process.fork</td>"));
    assert!(page.contains("kernel_release"), "the environment diff");
    assert!(page.contains("id=\"compare-grouped\""));
    assert!(page.contains("class=\"differs\""));
    // The answer first, the machine last.
    let at = |what: &str| page.find(what).unwrap_or_else(|| panic!("{what}"));
    assert!(at("id=\"summary\"") < at("id=\"comparison\""));
    assert!(at("id=\"comparison\"") < at("id=\"ladder-run1\""));
    assert!(at("id=\"family-syscall\"") < at("id=\"environment\""));
    assert!(
        page.contains("<span class=\"verdict slower\">"),
        "verdict counts"
    );
    // Rows alike on both fold into one line; the differing kernel stays on top.
    assert!(page.contains("<summary>same on both: "));
    assert!(at("<tr class=\"differs\"><th>kernel</th>") < at("<summary>same on both: "));
}

#[test]
fn cli_writes_the_page_and_refuses_a_bad_run() {
    let lab = Lab::new();
    let mut store = Store::open(lab.db()).expect("create the database");
    store.begin_run(&run(1, "base", "6.1.0", 1.0)).unwrap();
    store.begin_run(&run(2, "new", "6.8.0", 2.0)).unwrap();
    drop(store);
    let out_file = lab.dir().join("r.html");
    let out = lab.oslab(&["report", "base", "2", "-o", out_file.to_str().unwrap()]);
    out.assert_code(0);
    assert!(out.stdout.is_empty());
    let page = std::fs::read_to_string(&out_file).unwrap();
    check_page(&page);
    assert!(page.contains("data-table=\"comparison-1-2\""));

    lab.oslab(&["report", "99", "-o", out_file.to_str().unwrap()])
        .assert_user_error(&["99"]);
    lab.oslab(&["report", "nosuchtag", "-o", out_file.to_str().unwrap()])
        .assert_user_error(&["nosuchtag"]);
}

#[test]
fn real_quick_run() {
    let lab = Lab::new();
    let out = lab.oslab(&[
        "run",
        "syscall.getppid",
        "ctxswitch.pipe",
        "--quick",
        "--budget",
        "0.2",
    ]);
    assert!(matches!(out.code, Some(0 | 4)), "{out}");
    let file = lab.dir().join("real.html");
    lab.oslab(&["report", "-o", file.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(&file).unwrap();
    check_page(&page);
    for family in ["syscall", "ctxswitch"] {
        for metric in html::metric_ids() {
            assert!(page.contains(&format!(
                "data-metric=\"{metric}\" data-family=\"{family}\""
            )));
        }
    }
    // getppid was measured on the called and the inline path: one rung, both in its table.
    assert!(page.contains("data-table=\"paths\""), "the path table");
    assert!(page.contains("<tr data-rung=\"syscall.getppid\">"));
    // Where the environment says the PMU counters do not work, the page says so.
    let env = lab.oslab(&["env", "--json"]);
    let doc = env.json();
    if let Some(state) = doc["environment"]["vulnerabilities"]["spec_rstack_overflow"].as_str() {
        assert!(
            page.contains(state),
            "the mitigation beside the gap: {state}"
        );
    }
    if doc["environment"]["counters"]["L1-dcache-load-misses"]["supported"] == false {
        assert!(page.contains("data-unsupported=\"syscall-l1d_miss_rate\""));
        assert!(page.contains("unsupported here"));
    }
    // What the host did: the run's line, its timeline, linked from the contents.
    assert!(page.contains("<a href=\"#host\">Host</a>"));
    assert!(page.contains("id=\"host-0\""), "the host's timeline");
    chromium_check(&file, &["<section id=\"host\">"]);
}

#[test]
fn chromium_loads_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("synthetic.html");
    std::fs::write(
        &file,
        html::render(&[run(1, "base", "6.1.0", 1.0), run(2, "new", "6.8.0", 2.0)]),
    )
    .unwrap();
    chromium_check(&file, &["<section id=\"reclaim\">"]);
}

/// The Chromium binary, installing Debian's package when allowed (`OSLAB_TEST_CHROMIUM=1`,
/// root, apt works); `None` with the reason printed otherwise, or, under `CI=true`, a
/// failure: CI must run the browser checks.
fn chromium() -> Option<&'static str> {
    let found = find_chromium();
    if found.is_none() && std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true and chromium is not installed: run .ci/install-chromium first");
    }
    found
}

fn find_chromium() -> Option<&'static str> {
    let found = |name: &str| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    for name in ["chromium", "chromium-browser"] {
        if found(name) {
            return Some(if name == "chromium" {
                "chromium"
            } else {
                "chromium-browser"
            });
        }
    }
    if std::env::var("OSLAB_TEST_CHROMIUM").as_deref() != Ok("1") {
        eprintln!("skipped: chromium is not installed (OSLAB_TEST_CHROMIUM=1 installs it as root)");
        return None;
    }
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: chromium is not installed and installing it needs root");
        return None;
    }
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let installed = apt(&["install", "-y", "chromium"])
        || (apt(&["update"]) && apt(&["install", "-y", "chromium"]));
    if !installed {
        eprintln!("skipped: apt-get install chromium failed (no network?)");
        return None;
    }
    found("chromium").then_some("chromium")
}

/// Load `file` in headless Chromium: its DOM once no console message was printed, and a
/// function taking a screenshot into the given path (`None`: no Chromium, said on stderr).
#[allow(clippy::type_complexity)]
fn chromium_dom(file: &Path) -> Option<(String, Box<dyn Fn(&Path) -> std::process::Output>)> {
    let browser = chromium()?;
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", file.display());
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2400",
    ];
    let user_data = format!("--user-data-dir={}", profile.path().join("p").display());
    let run = move |extra: &str| {
        let _keep = &profile;
        Command::new(browser)
            .args(base)
            .arg(&user_data)
            .arg(extra)
            .arg(&url)
            .output()
            .expect("start chromium")
    };
    let dom = run("--dump-dom");
    let stderr = String::from_utf8_lossy(&dom.stderr);
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let text = String::from_utf8_lossy(&dom.stdout).into_owned();
    let shoot = move |shot: &Path| run(&format!("--screenshot={}", shot.display()));
    Some((text, Box::new(shoot)))
}

/// Load `file` in Chromium: no console message, the charts and tables in the DOM, with
/// `parts` besides, and a screenshot.
fn chromium_check(file: &Path, parts: &[&str]) {
    let Some((dom_text, shoot)) = chromium_dom(file) else {
        return;
    };
    assert!(
        dom_text.contains("data-chart=\"ladder-run1\""),
        "the DOM has the charts"
    );
    let svgs = dom_text.matches("<svg class=\"chart\"").count();
    assert!(svgs >= 3, "the DOM has the svg charts: {svgs}");
    for part in [
        "<p class=\"lead\">",
        "id=\"summary\"",
        "data-table=\"environment\"",
        "<table class=\"results\">",
        "</html>",
    ]
    .iter()
    .chain(parts)
    {
        assert!(dom_text.contains(part), "the DOM has {part}");
    }
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let shot_out = shoot(&shot);
    assert!(shot_out.status.success(), "screenshot: {:?}", shot_out);
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a rendered page"
    );
    if let Ok(keep) = std::env::var("OSLAB_TEST_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// The fleet view's page (`report --store URL --by KEY`) in Chromium: the section, a strip per
/// configuration, the flagged machine.
#[test]
fn chromium_loads_the_fleet_page() {
    use oslab::analysis::fleet::{Point, view};
    let points: Vec<Point> = (0..6)
        .map(|i| Point {
            config: "syscall.getppid".into(),
            name: "syscall.getppid".into(),
            unit: "ns/call".into(),
            machine: format!("m{i}"),
            host: format!("host-{i}"),
            group: if i == 5 { "6.8.0" } else { "6.1.0" }.into(),
            run_id: i,
            value: if i == 5 { 180.0 } else { 100.0 + i as f64 },
        })
        .collect();
    let configs = view(&points);
    let page = oslab::report::fleet::html(&oslab::report::fleet::Fleet {
        store: "postgres://lab:***@db:5432/oslab",
        by: "kernel",
        runs: 6,
        machines: 6,
        configs: &configs,
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.html");
    std::fs::write(&file, page).unwrap();
    let Some((dom, shoot)) = chromium_dom(&file) else {
        return;
    };
    for part in [
        "<section id=\"fleet\">",
        "data-chart=\"fleet\"",
        "data-outlier=\"m5\"",
        "</html>",
    ] {
        assert!(dom.contains(part), "the DOM has {part}");
    }
    let shot = dir.path().join("fleet.png");
    assert!(shoot(&shot).status.success());
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
}

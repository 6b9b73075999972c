//! `oslab compare`: two stored runs, per experiment, with the verdict and the environment diff.

use super::*;

/// `--noise`: a percentage from 0 to 50, as a fraction.
pub(super) fn parse_noise(text: &str) -> Result<f64, UserError> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=50.0).contains(&p) => Ok(p / 100.0),
        _ => Err(UserError::BadOption(format!(
            "--noise {text}: give a percentage between 0 and 50, e.g. --noise 2"
        ))),
    }
}

/// The runs one side of `compare` names: one, or several separated by commas.
fn run_refs(text: &str) -> Result<Vec<&str>, UserError> {
    let refs: Vec<&str> = text.split(',').map(str::trim).collect();
    if refs.iter().any(|r| r.is_empty()) {
        return Err(UserError::BadOption(format!(
            "compare {text}: a run is missing between commas; name runs by id, UUID or tag, \
             e.g. 1,3,5"
        )));
    }
    Ok(refs)
}

/// The run of a set measured to the loosest precision: the noise band widens to it.
fn loosest(runs: &[Run]) -> &Run {
    let precision = |r: &&Run| r.settings.precision;
    let loosest = runs
        .iter()
        .max_by(|x, y| precision(x).total_cmp(&precision(y)));
    loosest.unwrap_or(&runs[0])
}

/// `oslab compare A1,A2,… B1,B2,…`: two sets of runs, each run's median one observation.
fn compare_sets(
    source: &mut Source,
    args: &CompareArgs,
    a: &[&str],
    b: &[&str],
) -> Result<ExitCode> {
    use crate::analysis::compare::{Metric, compare_run_sets, default_noise};
    if a.len() < 2 || b.len() < 2 {
        return Err(UserError::BadOption(format!(
            "compare {} {}: give two or more runs on each side to compare sets of runs, or one \
             run on each",
            args.a, args.b
        ))
        .into());
    }
    if Metric::parse(&args.metric) != Metric::Time {
        return Err(UserError::BadOption(format!(
            "--metric {}: sets of runs are compared by time only; give one run on each side \
             for another metric",
            args.metric
        ))
        .into());
    }
    if args.profile.is_some() {
        return Err(UserError::BadOption(
            "--profile draws the flame graphs of two runs: give one run on each side".into(),
        )
        .into());
    }
    let resolve = |source: &mut Source, refs: &[&str]| -> Result<Vec<Run>> {
        refs.iter().map(|r| source.resolve(Some(r))).collect()
    };
    let (runs_a, runs_b) = (resolve(source, a)?, resolve(source, b)?);
    for (text, runs) in [(&args.a, &runs_a), (&args.b, &runs_b)] {
        let mut ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(UserError::BadOption(format!(
                "compare {text}: run {} is named twice; each run is one observation, name it once",
                w[0]
            ))
            .into());
        }
    }
    let (noise, noise_reason) = match args.noise.as_deref().map(parse_noise).transpose()? {
        Some(n) => (n, None),
        // The band widens to the loosest precision any run of either side was measured to.
        None => default_noise(loosest(&runs_a), loosest(&runs_b)),
    };
    let mut cmp = compare_run_sets(&runs_a, &runs_b, noise, crate::experiment::DECLARED);
    cmp.noise_reason = noise_reason;
    let text = if args.json {
        pretty(&report::compare::document(&cmp))?
    } else {
        report::compare::render(&cmp)
    };
    print_comparison(&text, &cmp, args)
}

/// The JSON document as printed: pretty, one line feed after it.
fn pretty(doc: &serde_json::Value) -> Result<String> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(s)
}

/// Print a comparison's text and exit 1 where `--fail-on-regression` finds a row slower.
fn print_comparison(
    text: &str,
    cmp: &crate::analysis::compare::RunComparison,
    args: &CompareArgs,
) -> Result<ExitCode> {
    write_stdout(text)?;
    if args.fail_on_regression && cmp.any_slower() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn compare(mut source: Source, args: CompareArgs) -> Result<ExitCode> {
    use crate::analysis::compare::{Metric, compare_runs, default_noise};
    let (refs_a, refs_b) = (run_refs(&args.a)?, run_refs(&args.b)?);
    if refs_a.len() > 1 || refs_b.len() > 1 {
        return compare_sets(&mut source, &args, &refs_a, &refs_b);
    }
    let noise = args.noise.as_deref().map(parse_noise).transpose()?;
    let a = source.resolve(Some(&args.a))?;
    let b = source.resolve(Some(&args.b))?;
    let metric = Metric::parse(&args.metric);
    if let Metric::Counter(name) = &metric {
        let known: std::collections::BTreeSet<&str> = [&a, &b]
            .iter()
            .flat_map(|r| &r.results)
            .flat_map(|r| r.counters.iter().map(|c| c.name.as_str()))
            .collect();
        if !known.contains(name.as_str()) {
            return Err(UserError::BadOption(format!(
                "--metric {name}: not time, a getrusage field ({}) or a counter of these runs{}",
                crate::model::Rusage::FIELDS.join(", "),
                if known.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", known.into_iter().collect::<Vec<_>>().join(", "))
                }
            ))
            .into());
        }
    }
    let (noise, noise_reason) = match noise {
        Some(n) => (n, None),
        None => default_noise(&a, &b),
    };
    // Before the comparison: runs with nothing profiled in common are one line, alone.
    let diffs = match &args.profile {
        Some(dir) => Some(super::profile::Differential::of(&a, &b, dir)?),
        None => None,
    };
    let mut cmp = compare_runs(&a, &b, &metric, noise, crate::experiment::DECLARED);
    cmp.noise_reason = noise_reason;
    let text = if args.json {
        let mut doc = report::compare::document(&cmp);
        if let (Some(d), Some(map)) = (&diffs, doc.as_object_mut()) {
            map.insert("profiles".into(), serde_json::Value::from(d.rows.clone()));
        }
        // Only what both runs measured (scaling curves, reclaim counters): the document is
        // otherwise unchanged.
        report::compare_parts::add_to(&mut doc, &a, &b, noise);
        pretty(&doc)?
    } else {
        let mut s = report::compare::render(&cmp);
        s.push_str(&report::compare_parts::text(&a, &b, noise));
        if let Some(d) = &diffs {
            s.push_str("\nWhere the time moved (differential flame graphs)\n");
            s.push_str(&d.text);
        }
        s
    };
    print_comparison(&text, &cmp, &args)
}

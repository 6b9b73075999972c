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

pub(super) fn compare(mut source: Source, args: CompareArgs) -> Result<ExitCode> {
    use crate::analysis::compare::{Metric, compare_runs, default_noise};
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
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        let mut s = report::compare::render(&cmp);
        s.push_str(&report::compare_parts::text(&a, &b, noise));
        if let Some(d) = &diffs {
            s.push_str("\nWhere the time moved (differential flame graphs)\n");
            s.push_str(&d.text);
        }
        s
    };
    write_stdout(&text)?;
    if args.fail_on_regression && cmp.any_slower() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

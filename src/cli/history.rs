//! `oslab history`: one configuration's pooled median across the stored runs.

use super::*;
use crate::report::history::{self as hist, Key};

pub(super) fn history(mut source: Source, args: &HistoryArgs) -> Result<ExitCode> {
    let given: Vec<(String, String)> = args
        .params
        .iter()
        .map(|p| parse_assignment(p))
        .collect::<Result<_, _>>()?;
    let mut summaries = source.list()?;
    summaries.sort_by_key(|s| s.id);
    let mut runs: Vec<Run> = Vec::with_capacity(summaries.len());
    for s in &summaries {
        runs.push(source.load(s.id)?);
    }
    let key = one_configuration(&runs, args, &given)?;
    if !args.all_machines {
        // The host that measured the configuration last, and its runs alone.
        let has = |r: &Run| {
            r.results
                .iter()
                .any(|x| hist::measures(x, &args.experiment, &key))
        };
        let host = runs
            .iter()
            .rev()
            .find(|r| has(r))
            .map(|r| r.environment.hostname.clone());
        runs.retain(|r| Some(&r.environment.hostname) == host.as_ref());
    }
    let h = hist::history(&runs, &args.experiment, &key);
    if args.json {
        write_stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&hist::document(&h))?
        ))?;
    } else {
        write_stdout(&hist::render(&h))?;
    }
    if let Some(file) = &args.html {
        write_file(file, &crate::report::html::history::page(&h))?;
        crate::say!("wrote the history to {}", file.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The one configuration the arguments name among the stored runs', or a one-line error that
/// says how to name one.
fn one_configuration(runs: &[Run], args: &HistoryArgs, given: &[(String, String)]) -> Result<Key> {
    let mut keys = hist::configurations(runs, &args.experiment, given, args.label.as_deref());
    // Among several, the one named exactly (no other parameter, no label unless given) is it:
    // `-p bufsize=4096 -p maxblocks=8000` beside the suite's configuration with more.
    let exact: Vec<Key> = keys
        .iter()
        .filter(|k| k.0.len() == given.len() && (args.label.is_some() || k.1.is_none()))
        .cloned()
        .collect();
    if keys.len() > 1 && exact.len() == 1 {
        keys = exact;
    }
    match keys.as_slice() {
        [key] => Ok(key.clone()),
        [] => {
            let stored = hist::configurations(runs, &args.experiment, &[], None);
            let filtered = !given.is_empty() || args.label.is_some();
            Err(UserError::BadOption(if filtered && !stored.is_empty() {
                format!(
                    "no stored run measured {} with those parameters; the stored runs measured \
                     it in {} configuration(s) ({}): name one with --param NAME=VALUE (and \
                     --label for a suite's)",
                    args.experiment,
                    stored.len(),
                    listed(&stored)
                )
            } else {
                format!(
                    "no stored run measured {}; `oslab show --list` lists the runs, `oslab list` \
                     the experiments",
                    args.experiment
                )
            })
            .into())
        }
        many => Err(UserError::BadOption(format!(
            "the stored runs measured {} in {} configurations ({}): name one with --param \
             NAME=VALUE (and --label for a suite's)",
            args.experiment,
            many.len(),
            listed(many)
        ))
        .into()),
    }
}

/// Up to six configurations, each as its parameters (and label), and how many more.
fn listed(keys: &[Key]) -> String {
    const SHOWN: usize = 6;
    let named = |key: &Key| {
        let mut text: Vec<String> = key.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if let Some(label) = &key.1 {
            text.push(format!("(label {label})"));
        }
        if text.is_empty() {
            "no parameters".to_string()
        } else {
            text.join(" ")
        }
    };
    let mut listed: Vec<String> = keys.iter().take(SHOWN).map(named).collect();
    if keys.len() > SHOWN {
        listed.push(format!("{} more", keys.len() - SHOWN));
    }
    listed.join("; ")
}

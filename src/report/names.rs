//! How a result is named in every table and chart: the experiment, then the parameters that
//! differ from its defaults (or its suite label).

use crate::experiment;
use crate::model::copies;
use crate::model::{ExperimentResult, Status};

/// The experiment name with the suite's name for its configuration, or with any parameter
/// that differs from its default or that the experiment sweeps (`thp=off` and `thp=on`
/// both say which they are).
pub fn label(r: &ExperimentResult) -> String {
    label_of(&r.experiment, &r.params, r.label.as_deref())
}

/// [`label`] from its parts, for a run not measured yet (the progress line).
pub fn label_of(
    experiment: &str,
    params: &std::collections::BTreeMap<String, String>,
    suite_label: Option<&str>,
) -> String {
    format!(
        "{}{}",
        named(experiment, params, suite_label),
        copies_of(params)
    )
}

/// The experiment with its suite configuration, or with the parameters that differ from
/// their defaults (and the swept ones).
fn named(
    experiment: &str,
    params: &std::collections::BTreeMap<String, String>,
    suite_label: Option<&str>,
) -> String {
    if let Some(config) = suite_label {
        return format!("{experiment} ({config})");
    }
    let Some(info) = experiment::find(experiment) else {
        return experiment.to_string();
    };
    let changed: Vec<String> = params
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), copies::COPIES | copies::COPY_MODE))
        .filter(|(k, v)| {
            info.param(k).is_none_or(|p| p.default != v.as_str())
                || info.sweep.iter().any(|(swept, _)| swept == k)
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if changed.is_empty() {
        experiment.to_string()
    } else {
        format!("{experiment} {}", changed.join(" "))
    }
}

/// ` ×4 threads` for a configuration measured by copies (`--copies`), else nothing.
fn copies_of(params: &std::collections::BTreeMap<String, String>) -> String {
    if !copies::Copies::recorded(params) {
        return String::new();
    }
    let c = copies::Copies::of(params);
    format!(" ×{} {}", c.count, c.mode.name())
}

/// A result's status as the tables show it: a failed result that kept samples (interrupted,
/// crashed, timed out) is `failed (partial)`, so its median is not read as a measurement.
pub fn status_text(r: &ExperimentResult) -> String {
    if is_partial(r) {
        "failed (partial)".to_string()
    } else {
        r.status.as_str().to_string()
    }
}

/// A failed result that kept samples (interrupted, crashed, timed out): its figures are of a
/// partial measurement, and every view says so.
pub fn is_partial(r: &ExperimentResult) -> bool {
    r.status == Status::Failed && !r.samples.is_empty()
}

/// `experiment (label) k=v …`: how a configuration is named in the tables.
pub(crate) fn config_name(
    experiment: &str,
    label: Option<&str>,
    params: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut name = experiment.to_string();
    if let Some(label) = label {
        name.push_str(&format!(" ({label})"));
    }
    for (k, v) in params {
        name.push_str(&format!(" {k}={v}"));
    }
    name
}

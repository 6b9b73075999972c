//! One section per family: the results table, the metric charts, the distribution, the
//! sweeps and the other figures.

use std::fmt::Write as _;

use super::distribution::distribution;
use super::facts::facts_and_loads;
use super::metrics::{METRICS, metric_chart};
use super::sweeps::sweeps;
use super::{Item, families, family_of};
use crate::experiment;
use crate::model::{ExperimentResult, Run, Status};
use crate::report::charts::esc;
use crate::report::format::{time_ns, time_range_ns};
use crate::report::ladder::label;

pub(super) fn sections(runs: &[Run], items: &[Vec<Item>]) -> String {
    let multi = runs.len() > 1;
    let mut s = String::new();
    for family in families(runs) {
        let members: Vec<&Item> = items
            .iter()
            .flatten()
            .filter(|i| family_of(&i.result.experiment) == family)
            .collect();
        // Variants in registry order, then run order; one row per run within a variant.
        let mut ordered = members.clone();
        ordered.sort_by_key(|i| {
            (
                experiment::REGISTRY
                    .iter()
                    .position(|e| e.name == i.result.experiment)
                    .unwrap_or(usize::MAX),
                label(i.result),
                i.run_index,
            )
        });
        let name = |i: &Item| {
            if multi {
                format!("{} (run {})", label(i.result), i.run_id)
            } else {
                label(i.result)
            }
        };
        let _ = write!(
            s,
            "<section class=\"family\" id=\"family-{f}\" data-family=\"{f}\">\n<h2>{f}</h2>\n",
            f = esc(&family)
        );
        s.push_str(&results_table(&ordered, &name));
        s.push_str("<div class=\"grid\">\n");
        for m in METRICS {
            s.push_str(&metric_chart(&family, m, &ordered, &name));
        }
        s.push_str("</div>\n");
        s.push_str(&distribution(&family, &ordered, &name));
        s.push_str(&sweeps(&family, &ordered, multi));
        s.push_str(&facts_and_loads(&ordered, &name));
        s.push_str("</section>\n");
    }
    s
}

pub(super) fn results_table(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = String::from(
        "<table class=\"results\"><thead><tr><th>experiment</th><th>median</th><th>95% CI</th>\
         <th>samples</th><th>status</th><th>warnings</th></tr></thead><tbody>\n",
    );
    for i in items {
        let r = i.result;
        let median = i.figures.stats.as_ref().map(|st| st.median);
        let mut warnings: Vec<String> = Vec::new();
        if r.status != Status::Ok {
            warnings.push(format!(
                "{}: {}",
                r.status.as_str(),
                r.reason.as_deref().unwrap_or("no reason recorded")
            ));
        }
        for c in r.validation.iter().filter(|c| !c.ok) {
            warnings.push(format!("check failed: {} — {}", c.check, c.detail));
        }
        let _ = writeln!(
            s,
            "<tr class=\"{}\" data-result=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td><span class=\"status {}\">{}</span></td><td>{}</td></tr>",
            r.status.as_str(),
            esc(&label(r)),
            esc(&name(i)),
            median.map_or("–".into(), |m| format!("{} / {}", time_ns(m), esc(op(r)))),
            match (median, i.figures.ci) {
                (Some(m), Some((lo, hi))) => time_range_ns(lo, hi, m),
                _ => "–".into(),
            },
            r.samples.len(),
            r.status.as_str(),
            r.status.as_str(),
            warnings
                .iter()
                .map(|w| format!("<div class=\"warning\">{}</div>", esc(w)))
                .collect::<String>()
        );
    }
    s.push_str("</tbody></table>\n");
    s
}

pub(super) fn op(r: &ExperimentResult) -> &str {
    r.unit.strip_prefix("ns/").unwrap_or(&r.unit)
}

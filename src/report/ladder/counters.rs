//! What the counters saw per operation, one row per result.

use crate::analysis::result::ResultFigures;
use crate::model::ExperimentResult;
use crate::report::format::{Align, Table, per_op, wrap};

use super::label;

/// Columns worth showing: counters some result could read, in a fixed order.
const COUNTER_COLUMNS: &[(&str, &str)] = &[
    ("syscalls", "syscalls"),
    ("tasks", "tasks"),
    ("cycles", "cycles"),
    ("instructions", "instr"),
    ("L1-dcache-load-misses", "L1D ld miss"),
    ("dTLB-load-misses", "dTLB ld miss"),
];

pub(super) fn counter_table(measured: &[&(&ExperimentResult, ResultFigures)]) -> String {
    if measured.is_empty() {
        return String::new();
    }
    let columns: Vec<&(&str, &str)> = COUNTER_COLUMNS
        .iter()
        .filter(|(name, _)| {
            measured
                .iter()
                .any(|(_, f)| f.counters.get(*name).is_some_and(|c| c.per_op.is_some()))
        })
        .collect();
    let mut header = vec![("experiment", Align::Left)];
    header.extend(columns.iter().map(|(_, h)| (*h, Align::Right)));
    let with_partner = measured.iter().any(|(_, f)| f.partner.is_some());
    let with_children = measured.iter().any(|(_, f)| f.children.is_some());
    header.extend([("faults", Align::Right), ("switches v+i", Align::Right)]);
    if with_partner {
        header.push(("partner v+i", Align::Right));
    }
    if with_children {
        header.push(("child faults", Align::Right));
    }
    header.extend([("sys %", Align::Right), ("preempted", Align::Right)]);
    let mut table = Table::new(&header);
    for (r, f) in measured {
        table.row(counter_row(r, f, &columns, with_partner, with_children));
    }
    let caption = "What the counters saw, per operation. Faults and switches come from getrusage \
                   over the timed samples (a partner process's from the proc file system, \
                   reaped children's from RUSAGE_CHILDREN; on Windows from the process's \
                   records, where switches are one total over its threads); switches are \
                   voluntary+involuntary; sys % is the system share of CPU time; preempted counts samples with an involuntary switch (part \
                   of the operation in a same-CPU ping-pong, contamination elsewhere); syscalls \
                   and tasks were counted in untimed batches after the samples (by one process \
                   of each configuration: the last of those it started with), because the tracepoints slow every system \
                   call.";
    format!("\n{}\n\n{}", wrap(caption, 96, "", ""), table.render(2))
}

/// One experiment's row of the counter table: the `columns` it shows, then faults, switches,
/// the partner's switches and the children's faults where the table has them, sys % and the
/// preempted samples.
fn counter_row(
    r: &ExperimentResult,
    f: &ResultFigures,
    columns: &[&(&str, &str)],
    with_partner: bool,
    with_children: bool,
) -> Vec<String> {
    let mut row = vec![label(r)];
    for (name, _) in columns {
        row.push(
            f.counters
                .get(*name)
                .and_then(|c| c.per_op)
                .map_or("–".into(), per_op),
        );
    }
    let rate = |field: &str| f.rusage.get(field).copied().unwrap_or(0.0);
    row.push(per_op(rate("minflt") + rate("majflt")));
    row.push(format!(
        "{}+{}",
        per_op(rate("nvcsw")),
        per_op(rate("nivcsw"))
    ));
    let other = |figures: &Option<std::collections::BTreeMap<String, f64>>, fields: &[&str]| {
        figures.as_ref().map_or("–".to_string(), |m| {
            per_op(
                fields
                    .iter()
                    .map(|k| m.get(*k).copied().unwrap_or(0.0))
                    .sum(),
            )
        })
    };
    if with_partner {
        row.push(match &f.partner {
            Some(_) => format!(
                "{}+{}",
                other(&f.partner, &["nvcsw"]),
                other(&f.partner, &["nivcsw"])
            ),
            None => "–".into(),
        });
    }
    if with_children {
        row.push(other(&f.children, &["minflt", "majflt"]));
    }
    let (u, s) = (rate("utime_us"), rate("stime_us"));
    row.push(if u + s > 0.0 {
        format!("{:.0}", 100.0 * s / (u + s))
    } else {
        "–".into()
    });
    row.push(format!(
        "{}/{}",
        f.contamination.samples_preempted,
        r.samples.len()
    ));
    row
}

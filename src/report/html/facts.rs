//! The figures measured besides the timed operation, and what background loads recorded.

use std::fmt::Write as _;

use super::Item;
use crate::report::charts::esc;
use crate::report::format::sig3;

/// The figures measured besides the timed operation (`Routine::facts`) and what each
/// background load recorded, as tables under the family's charts.
pub(super) fn facts_and_loads(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = facts_table(items, name);
    s.push_str(&loads(items, name));
    s
}

/// The figures besides the timed operation: one row per experiment, one column per figure.
fn facts_table(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = String::new();
    let with_facts: Vec<&&Item> = items
        .iter()
        .filter(|i| !i.result.facts.is_empty())
        .collect();
    if !with_facts.is_empty() {
        // One row per experiment, one column per figure (in order of first appearance);
        // a cell's tooltip is how that experiment measured it, and the legend below says it
        // once per figure.
        let mut columns: Vec<(&str, &str, &str)> = Vec::new();
        for f in with_facts.iter().flat_map(|i| &i.result.facts) {
            if !columns.iter().any(|(n, _, _)| *n == f.name) {
                columns.push((&f.name, &f.unit, &f.note));
            }
        }
        s.push_str(
            "<h3>Other figures</h3>\n<div class=\"wide\"><table class=\"facts\"><thead><tr>\
             <th>experiment</th>",
        );
        for (fact, unit, _) in &columns {
            let _ = write!(
                s,
                "<th>{}<br><span class=\"note\">{}</span></th>",
                esc(fact),
                esc(unit)
            );
        }
        s.push_str("</tr></thead><tbody>\n");
        for i in &with_facts {
            let _ = write!(s, "<tr><td>{}</td>", esc(&name(i)));
            for (fact, _, _) in &columns {
                match i.result.facts.iter().find(|f| f.name == *fact) {
                    Some(f) if f.value.is_finite() => {
                        let _ = write!(
                            s,
                            "<td title=\"{}\">{}</td>",
                            esc(&f.note),
                            esc(&sig3(f.value))
                        );
                    }
                    Some(f) => {
                        let _ = write!(s, "<td title=\"{}\">–</td>", esc(&f.note));
                    }
                    None => s.push_str("<td></td>"),
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table></div>\n<dl class=\"facts\">\n");
        for (fact, _, note) in &columns {
            let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", esc(fact), esc(note));
        }
        s.push_str("</dl>\n");
    }
    s
}

/// What each background load recorded, folded.
fn loads(items: &[&Item], name: &dyn Fn(&Item) -> String) -> String {
    let mut s = String::new();
    for i in items {
        let Some(load) = &i.result.load else {
            continue;
        };
        let _ = writeln!(
            s,
            "<details class=\"load\"><summary>{} ran beside load <code>{}</code>{}</summary>\
             <table class=\"env\"><tbody>",
            esc(&name(i)),
            esc(&load.kind),
            match i.processes.len() {
                n if n > 1 => format!(" (what it recorded beside the first of its {n} processes)"),
                _ => String::new(),
            }
        );
        for (k, v) in &load.details {
            let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        s.push_str("</tbody></table></details>\n");
    }
    s
}

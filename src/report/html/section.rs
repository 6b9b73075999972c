//! A section of the report page as a value ([`Section`]): its entries in the table of
//! contents and its HTML, both drawn from the same [`Page`]. [`SECTIONS`] lists them in page
//! order, the answer first (summary, comparison, ladder, families) and the machine last, so
//! adding a section is its file and one line there; a section with nothing to show returns
//! no HTML, and the table of contents leaves it out by that alone.

use super::{Item, comparison, cost_ladder, environment, families, family, host, profiles};
use super::{reclaim, scaling, summary};
use crate::analysis::compare::RunComparison;
use crate::model::Run;
use crate::report::pool::Pooled;

/// What every section draws from: the runs shown (the first is the baseline), their
/// configurations pooled, the results with their figures, and the comparisons of the first
/// run with each other.
pub(super) struct Page<'a> {
    pub runs: &'a [Run],
    pub pooled: &'a [Vec<Pooled>],
    pub items: &'a [Vec<Item<'a>>],
    pub cmps: &'a [RunComparison],
}

impl Page<'_> {
    /// Whether more than one run is shown.
    pub fn multi(&self) -> bool {
        self.runs.len() > 1
    }
}

/// One section of the page.
pub(super) struct Section {
    /// Its entries in the table of contents: (anchor, title). Shown only when its HTML is
    /// not empty.
    pub links: fn(&Page) -> Vec<(String, String)>,
    /// Its HTML: empty when it has nothing to show.
    pub html: fn(&Page) -> String,
}

/// The page's sections, in order.
pub(super) const SECTIONS: &[Section] = &[
    Section {
        links: |_| one("summary", "Summary"),
        html: |p| summary::section(p.runs, p.pooled, p.cmps),
    },
    Section {
        links: |_| one("comparison", "Comparison"),
        html: |p| {
            if p.multi() {
                comparison::section(p.runs, p.pooled, p.cmps)
            } else {
                String::new()
            }
        },
    },
    Section {
        links: |_| one("ladder", "Cost ladder"),
        html: |p| {
            // With several runs each has its own ladder: the link goes to the first.
            let mut s = if p.multi() {
                String::from("<div id=\"ladder\"></div>\n")
            } else {
                String::new()
            };
            for run in p.runs {
                s.push_str(&cost_ladder::section(run, p.multi()));
            }
            s
        },
    },
    Section {
        links: |p| {
            families(p.runs)
                .into_iter()
                .map(|f| (format!("family-{f}"), f))
                .collect()
        },
        html: |p| family::sections(p.runs, p.items),
    },
    Section {
        links: |_| one("scaling", "Scaling"),
        html: |p| scaling::section(p.runs),
    },
    Section {
        links: |_| one("reclaim", "Reclaim"),
        html: |p| reclaim::section(p.runs, p.pooled),
    },
    Section {
        links: |_| one("profiles", "Where the time goes"),
        html: |p| profiles::section(p.runs),
    },
    Section {
        links: |_| one("host", "Host"),
        html: |p| host::section(p.runs, p.pooled),
    },
    Section {
        links: |_| one("environment", "Environment"),
        html: |p| environment::section(p.runs),
    },
];

fn one(anchor: &str, title: &str) -> Vec<(String, String)> {
    vec![(anchor.to_string(), title.to_string())]
}

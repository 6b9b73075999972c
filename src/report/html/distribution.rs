//! The distribution of a family's samples: a strip plot over quartile boxes.

use super::{Item, MAX_DOTS};
use crate::analysis::percentile;
use crate::report::charts::{self, Scale, Strip, esc};
use crate::report::format::time_ns;

pub(super) fn distribution(
    family: &str,
    items: &[&Item],
    name: &dyn Fn(&Item) -> String,
) -> String {
    let mut rows = Vec::new();
    let mut thinned = false;
    for i in items.iter().filter(|i| !i.result.samples.is_empty()) {
        let values: Vec<f64> = i.result.samples.iter().map(|s| s.ns_per_op).collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let n = values.len();
        let shown: Vec<f64> = if n > MAX_DOTS {
            thinned = true;
            (0..MAX_DOTS).map(|k| values[k * n / MAX_DOTS]).collect()
        } else {
            values
        };
        let (q1, median, q3) = (
            percentile(&sorted, 25.0),
            percentile(&sorted, 50.0),
            percentile(&sorted, 75.0),
        );
        let o = &i.figures.outliers;
        rows.push(Strip {
            label: name(i),
            title: format!(
                "{}: {} samples{}, quartiles {} / {} / {}, {} outliers (Tukey)",
                name(i),
                n,
                if n > MAX_DOTS {
                    format!(" ({MAX_DOTS} drawn)")
                } else {
                    String::new()
                },
                time_ns(q1),
                time_ns(median),
                time_ns(q3),
                o.total()
            ),
            shown,
            q1,
            median,
            q3,
        });
    }
    if rows.is_empty() {
        return String::new();
    }
    let scale = Scale::suited(rows.iter().flat_map(|r| r.shown.iter().copied()));
    let mut s = format!(
        "<figure class=\"distribution\" data-metric=\"distribution\" data-family=\"{}\">\
         <figcaption>Distribution of samples: time per operation of every sample{} — box: \
         quartiles, line: median{}</figcaption>",
        esc(family),
        if scale == Scale::Log {
            ", log scale"
        } else {
            ""
        },
        if thinned {
            format!(
                "; results with more than {MAX_DOTS} samples show {MAX_DOTS} of them, evenly \
                 spaced in run order (the box uses all)"
            )
        } else {
            String::new()
        }
    );
    s.push_str(&charts::strips(
        &format!("{family}-distribution"),
        &format!("{family}: distribution of samples"),
        &rows,
        scale,
        &time_ns,
    ));
    s.push_str("</figure>\n");
    s
}

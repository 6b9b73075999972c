//! What `oslab compare` says of the host's kernel canary (`analysis::host`): a line when the
//! two runs' canaries lie apart, and a mark and a note on each change that the canary of the
//! configuration's own samples made as well. A host that makes entering the kernel dearer for
//! a while moves every figure that enters the kernel; a change that moved with it is the
//! host's until reruns say otherwise.

use super::format::{time_ns, wrap};
use super::names::config_name;
use crate::analysis::compare::{Pair, RunComparison, Verdict};
use crate::analysis::host::{KernelCanaries, SlowRun};

/// Whether the two sides ran on one kernel (and one system).
fn same_kernel(cmp: &RunComparison) -> bool {
    !cmp.environment_diff
        .iter()
        .any(|d| d.field == "kernel_release" || d.field == "os")
}

/// Whose doing a move of the canary is.
fn whose(cmp: &RunComparison) -> &'static str {
    if same_kernel(cmp) {
        "on the same kernel, that is the host's doing (a hypervisor or another tenant)"
    } else {
        "between two kernels, that is the host's doing or the kernels' own entry paths"
    }
}

/// One line when the runs' kernel canaries (a call into the kernel that does no work, timed
/// after every sample) lie 10% apart or more: every figure that enters the kernel may have
/// moved as much without the experiment changing.
pub(super) fn kernel_canary_line(cmp: &RunComparison) -> String {
    let Some(k) = cmp.kernel_canaries.filter(|k| k.differ()) else {
        return String::new();
    };
    let line = format!(
        "The kernel canary differs: a call into the kernel that does no work took {} in A and \
         {} in B (B/A {:.3}); {}, and every figure that enters the kernel may have moved as \
         much for that reason alone",
        time_ns(k.a_ns),
        time_ns(k.b_ns),
        k.ratio(),
        whose(cmp)
    );
    wrap(&line, 96, "", "  ") + "\n"
}

/// The configuration's kernel canaries, when its verdict is a change (faster or slower) and
/// its own samples' canaries moved 10% or more the same way.
pub(super) fn moved_with_host(pair: &Pair) -> Option<KernelCanaries> {
    let c = pair.comparison.as_ref()?;
    let changed = matches!(c.verdict, Verdict::Faster | Verdict::Slower);
    pair.kernel_canaries
        .filter(|k| changed && k.moved_with(c.ratio))
}

/// Whether the row of `pair` is marked `†`: its change moved with its kernel canary, or a side
/// took it wholly in a slow kernel phase of its host.
pub(super) fn marked(pair: &Pair) -> bool {
    moved_with_host(pair).is_some() || pair.slow_run.0.is_some() || pair.slow_run.1.is_some()
}

/// A note for each row marked `†`, wrapped for the terminal.
pub(super) fn notes(cmp: &RunComparison) -> String {
    let mut out = String::new();
    for note in cmp.pairs.iter().flat_map(|pair| pair_notes(cmp, pair)) {
        out.push_str(&wrap(&note, 96, "", "  "));
        out.push('\n');
    }
    out
}

/// What the `†` on the row of `pair` says, a sentence or two each (none when unmarked): the
/// text's notes, and the HTML's title of the mark.
pub(super) fn pair_notes(cmp: &RunComparison, pair: &Pair) -> Vec<String> {
    let name = config_name(&pair.experiment, pair.label.as_deref(), &pair.params);
    let mut notes: Vec<String> = slow_run_note(&name, pair).into_iter().collect();
    if let Some(k) = moved_with_host(pair) {
        let steady = pair
            .comparison
            .as_ref()
            .and_then(|c| k.steady_ratio(c.ratio))
            .map(|r| {
                format!(
                    "; without the samples either run took in a slow kernel phase its B/A would \
                     be {r:.3}"
                )
            })
            .unwrap_or_default();
        notes.push(format!(
            "† {name}: its kernel canary moved the same way, a call into the kernel that does \
             no work taking {} in A's samples and {} in B's (B/A {:.3}){steady}; {}: rerun both \
             before reading the change as the system's (docs/measurement.md §5).",
            time_ns(k.a_ns),
            time_ns(k.b_ns),
            k.ratio(),
            whose(cmp)
        ));
    }
    notes
}

/// The note on a configuration a side took wholly in a slow kernel phase of its host
/// ([`Pair::slow_run`]), whatever its verdict: nothing inside that run could tell, and its
/// figure is likely slower for the host alone.
fn slow_run_note(name: &str, pair: &Pair) -> Option<String> {
    let told = |side: &str, slow: Option<SlowRun>| {
        slow.map(|s| {
            format!(
                "{:.2}× as long in {side} as in its machine's earlier runs measured alike ({} \
                 against {})",
                s.ratio(),
                time_ns(s.now_ns),
                time_ns(s.earlier_ns),
            )
        })
    };
    let (who, whose, rerun) = match pair.slow_run {
        (None, None) => return None,
        (Some(_), Some(_)) => ("A and B", "Their figures are", "both"),
        (Some(_), None) => ("A", "Its figure is", "A"),
        (None, Some(_)) => ("B", "Its figure is", "B"),
    };
    let took: Vec<String> = [told("A", pair.slow_run.0), told("B", pair.slow_run.1)]
        .into_iter()
        .flatten()
        .collect();
    Some(format!(
        "† {name}: {who} measured it in a slow kernel phase of the host from first sample to \
         last, as `run` said: a call into the kernel that does no work took {}. {whose} likely \
         slower for the host alone, whatever the verdict: rerun {rerun} before reading it.",
        took.join(" and ")
    ))
}

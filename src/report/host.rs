//! What the host did during a run, as `show` and the report say it: one line for the whole
//! run (stolen time, the canaries) and a table of the configurations it touched
//! (`analysis::host`).

use crate::analysis::host::{
    HostFigures, KERNEL_SLOW, KernelPhase, NOTABLE_SHIFT, SLOW_CANARY, SlowRun,
};
use crate::report::format::{Align, Table, steal_text, time_ns};
use crate::report::names::label;
use crate::report::pool::Pooled;

/// Each configuration's host figures, in the run's order; those without any left out.
pub fn of_run(pooled: &[Pooled]) -> Vec<(&Pooled, HostFigures)> {
    pooled
        .iter()
        .filter_map(|p| p.host().map(|h| (p, h)))
        .collect()
}

/// The whole run in one sentence: "the hypervisor stole 30 ms during 3 of 4,120 samples;
/// the canary (5.10 µs) ran 25% slow or more after 12 of them".
pub fn summary(figures: &[(&Pooled, HostFigures)]) -> Option<String> {
    let samples: usize = figures.iter().map(|(_, h)| h.samples).sum();
    if samples == 0 {
        return None;
    }
    let slow: usize = figures.iter().map(|(_, h)| h.slow_canaries).sum();
    let canaries: Vec<f64> = figures.iter().map(|(_, h)| h.canary_median_ns).collect();
    let canary = crate::analysis::median(&canaries)?;
    let stolen = figures
        .iter()
        .filter_map(|(_, h)| h.stolen_samples.zip(h.steal_ns))
        .fold(None, |acc: Option<(usize, f64)>, (n, ns)| {
            let (n0, ns0) = acc.unwrap_or_default();
            Some((n0 + n, ns0 + ns))
        });
    let steal = match stolen {
        Some((0, _)) => format!("the hypervisor stole no time during the {samples} samples"),
        Some((n, ns)) => format!(
            "the hypervisor stole {} during {n} of the {samples} samples",
            steal_text(ns)
        ),
        None => format!("stolen time is not read here ({samples} samples)"),
    };
    let calls: Vec<f64> = figures
        .iter()
        .filter_map(|(_, h)| h.kernel_canary_median_ns)
        .collect();
    let phases: Vec<KernelPhase> = figures.iter().filter_map(|(_, h)| h.kernel_phase).collect();
    let kernel = match crate::analysis::median(&calls) {
        Some(call) => format!(
            "; a call into the kernel that does no work (the kernel canary, timed after every \
             sample too) took {} typically; {}",
            time_ns(call),
            phase_text(&phases)
        ),
        None => String::new(),
    };
    Some(format!(
        "{steal}; the canary (a fixed loop timed after every sample, {} typically) ran {:.0}% \
         slow or more after {slow} of them{kernel}",
        time_ns(canary),
        (SLOW_CANARY - 1.0) * 100.0
    ))
}

/// What the run's slow kernel phases did to its figures: how many configurations leave their
/// samples out, how many medians that moved, and how many would move without those they keep.
fn phase_text(phases: &[KernelPhase]) -> String {
    let left: Vec<&KernelPhase> = phases.iter().filter(|k| k.left_out).collect();
    let moved = left.iter().filter(|k| k.moves_figure()).count();
    let would = phases
        .iter()
        .filter(|k| !k.left_out && k.moves_figure())
        .count();
    format!(
        "{} of {} configurations leave out their samples taken in slow kernel phases (a kernel \
         canary {:.0}% or more above its configuration's fast level, in phases of the host), \
         which moved {moved} of their medians {:.0}% or more; {would} others' medians would \
         move as much without their slow samples, which stay in (scattered, or of an \
         experiment that works on files or stays in user space)",
        left.len(),
        phases.len(),
        (KERNEL_SLOW - 1.0) * 100.0,
        NOTABLE_SHIFT * 100.0,
    )
}

/// The columns of a configuration's host figures after its name, in `show`'s table and the
/// HTML report's.
pub const COLUMNS: [(&str, Align); 10] = [
    ("samples", Align::Right),
    ("stolen", Align::Right),
    ("in samples", Align::Right),
    ("canary", Align::Right),
    ("slow canaries", Align::Right),
    ("median without those", Align::Right),
    ("null call", Align::Right),
    ("apart", Align::Right),
    ("slow phase", Align::Right),
    ("median without", Align::Right),
];

/// One configuration's host figures as text, under [`COLUMNS`].
pub fn cells(h: &HostFigures) -> Vec<String> {
    let shift = |s: Option<f64>| s.map_or("–".into(), |s| format!("{:+.1}%", s * 100.0));
    vec![
        h.samples.to_string(),
        h.steal_ns.map_or("–".into(), steal_text),
        h.stolen_samples.map_or("–".into(), |n| n.to_string()),
        time_ns(h.canary_median_ns),
        h.slow_canaries.to_string(),
        shift(h.median_shift),
        h.kernel_canary_median_ns.map_or("–".into(), time_ns),
        h.kernel_canary_spread
            .map_or("–".into(), |s| format!("{:.1}%", s * 100.0)),
        h.kernel_phase.map_or("–".into(), |k| {
            let fate = if k.left_out { " left out" } else { "" };
            format!("{}{fate}", k.slow_samples)
        }),
        shift(h.kernel_phase.and_then(|k| k.median_shift)),
    ]
}

/// The text `show` prints: the run's line, and a table of the configurations during which
/// the host stole time, the canary ran slow after more than 2% of the samples, or the median
/// moved (or would move) 2% or more without the samples taken in a slow kernel phase.
pub fn section(pooled: &[Pooled]) -> String {
    let figures = of_run(pooled);
    let Some(summary) = summary(&figures) else {
        return String::new();
    };
    let mut out = format!(
        "\nHost\n\n{}\n",
        crate::report::format::wrap(&summary, 96, "  ", "  ")
    );
    if let Some(note) = slow_run_note(pooled) {
        out.push('\n');
        out.push_str(&crate::report::format::wrap(&note, 96, "  ", "  "));
        out.push('\n');
    }
    let notable: Vec<&(&Pooled, HostFigures)> =
        figures.iter().filter(|(_, h)| h.notable()).collect();
    if notable.is_empty() {
        return out;
    }
    let mut columns = vec![("experiment", Align::Left)];
    columns.extend_from_slice(&COLUMNS);
    let mut table = Table::new(&columns);
    for (p, h) in notable {
        let mut row = vec![label(&p.result)];
        row.extend(cells(h));
        table.row(row);
    }
    out.push('\n');
    out.push_str(&table.render(2));
    out
}

/// A configuration whose kernel entry ran slow against this machine's earlier runs
/// (`analysis::host::slow_against_earlier`).
#[derive(Debug, Clone, PartialEq)]
pub struct SlowAgainstEarlier {
    /// The configuration as the tables name it.
    pub label: String,
    /// Its kernel canary in this run and the earlier runs' median of theirs.
    pub slow: SlowRun,
}

/// Of a run's configurations (`pooled`), those whose kernel canary was slow against the
/// earlier runs' (`ExperimentResult::earlier_kernel_canaries`, stored with the run): of
/// experiments whose figures move with the kernel's phases alone
/// (`experiment::phase_bound`), not under an emulator.
pub fn slow_against_earlier(pooled: &[Pooled]) -> Vec<SlowAgainstEarlier> {
    pooled.iter().filter_map(slow_against_earlier_of).collect()
}

/// One configuration's kernel entry against the earlier runs' (see [`slow_against_earlier`]);
/// `None` when it was not that much slower, or cannot be told.
pub fn slow_against_earlier_of(p: &Pooled) -> Option<SlowAgainstEarlier> {
    let now_ns = p.host()?.kernel_canary_median_ns?;
    let slow = SlowRun::of(&p.result, now_ns, crate::experiment::phase_bound)?;
    Some(SlowAgainstEarlier {
        label: label(&p.result),
        slow,
    })
}

/// What `run` says when it ends, and `show` and the report whenever they show it, of a run
/// whose kernel entry was slow against this machine's earlier runs; `None` when it was not.
pub fn slow_run_note(pooled: &[Pooled]) -> Option<String> {
    slow_against_earlier_text(&slow_against_earlier(pooled), pooled.len())
}

/// What `run` says of `slow` (of a run of `configurations`): that the host made entering the
/// kernel slower through them than in the machine's earlier runs, with the first three; `None`
/// when none was.
pub fn slow_against_earlier_text(
    slow: &[SlowAgainstEarlier],
    configurations: usize,
) -> Option<String> {
    let shown: Vec<String> = slow
        .iter()
        .take(3)
        .map(|s| {
            format!(
                "{} {} against {}, {:.2}×",
                s.label,
                time_ns(s.slow.now_ns),
                time_ns(s.slow.earlier_ns),
                s.slow.ratio()
            )
        })
        .collect();
    if shown.is_empty() {
        return None;
    }
    let more = match slow.len() {
        n if n > 3 => format!("; and {} more", n - 3),
        _ => String::new(),
    };
    Some(format!(
        "Entering the kernel took {:.0}% longer or more in {} of {configurations} \
         configurations than in this machine's earlier runs measured alike (the null call \
         timed after each sample: {}{more}): the host was in a slow phase through them, \
         which nothing inside one run can tell, and their figures are likely slower for it. \
         Run again to measure outside it; `oslab compare` marks such pairs †.",
        (KERNEL_SLOW - 1.0) * 100.0,
        slow.len(),
        shown.join("; "),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_configurations_are_named_three_at_most() {
        let slow = |k: usize| SlowAgainstEarlier {
            label: format!("syscall.x{k}"),
            slow: SlowRun {
                now_ns: 263.0,
                earlier_ns: 190.0,
            },
        };
        assert_eq!(slow_against_earlier_text(&[], 11), None);
        let text = slow_against_earlier_text(&[slow(1)], 11).unwrap();
        assert!(text.contains("20% longer or more in 1 of 11"), "{text}");
        assert!(
            text.contains("syscall.x1 263 ns against 190 ns, 1.38×)"),
            "{text}"
        );
        let all: Vec<SlowAgainstEarlier> = (1..=5).map(slow).collect();
        let text = slow_against_earlier_text(&all, 11).unwrap();
        assert!(
            text.contains("syscall.x3 263 ns against 190 ns, 1.38×; and 2 more)"),
            "{text}"
        );
        assert!(!text.contains("syscall.x4"), "{text}");
    }
}

//! Pooling as the report words it: the experiments' expectations checked again over a
//! configuration's pooled processes (`analysis::pool`, which knows no experiment), and the
//! notes that say what its processes add to its figures.

pub use crate::analysis::pool::{Pooled, process_numbers};

use crate::analysis::host::{HostFigures, KERNEL_SLOW};
use crate::analysis::pool::RUN_SENSITIVE_MIN;
use crate::analysis::processes::{APART_MIN, APART_SPREADS};
use crate::experiment;
use crate::model::ExperimentResult;
use crate::report::format::{sig3, steal_text, time_ns};

/// The results of a run with those of one configuration merged (`analysis::pool::pool`), in
/// the order each configuration first appears, their experiments' expectations checked again
/// over the pooled counts.
pub fn pool(results: &[ExperimentResult]) -> Vec<Pooled> {
    crate::analysis::pool::pool(
        results,
        &experiment::expectations_of,
        experiment::phase_bound,
    )
}

/// What the processes of `pooled` add to its figures, for the notes: a cold first process left
/// out, a process at a level of its own, a spread between processes larger than within one,
/// samples left out for a slow kernel phase, a CPU effect, a run-sensitive figure.
pub fn process_notes(pooled: &Pooled) -> Vec<String> {
    let mut notes: Vec<String> = phase_note(pooled).into_iter().collect();
    notes.extend(slow_runs_note(&pooled.result));
    let Some(spread) = &pooled.spread else {
        return notes;
    };
    if let Some(excess) = spread.first_run {
        let fate = if spread.drops_first() {
            "so it counts as a warm-up and is left out"
        } else {
            "a warm-up it stays in (with three processes, two would give no interval); \
             --repeat 4 or more leaves it out"
        };
        notes.push(format!(
            "first-run effect: the first of {} processes was {:.1}% slower than every \
             other (cold caches), {fate}",
            pooled.processes,
            excess * 100.0
        ));
    }
    notes.extend(apart_note(pooled));
    if spread.layout_sensitive() {
        let own = if pooled.on_several_cpus() {
            "layout and CPU"
        } else {
            "memory layout"
        };
        notes.push(format!(
            "layout-sensitive: ±{:.1}% between processes (each with its own {own}), \
             against ±{:.2}% within one; the interval covers it",
            spread.between * 100.0,
            spread.within * 100.0
        ));
    }
    notes.extend(cpu_note(pooled));
    if let Some((between_runs, earlier)) = pooled.between_runs()
        && between_runs > spread.between.max(RUN_SENSITIVE_MIN)
    {
        let host = pooled.host();
        notes.push(format!(
            "run-sensitive: ±{:.1}% between this and the {earlier} earlier runs on this \
             machine, against ±{:.1}% between this run's processes; the interval covers \
             it{}",
            between_runs * 100.0,
            spread.between * 100.0,
            host.as_ref().and_then(during_samples).unwrap_or_default()
        ));
    }
    notes
}

/// The note on a process at a level of its own (`analysis::processes::apart`): which, where,
/// how far it moves the pooled median, and what the interval rests on.
fn apart_note(pooled: &Pooled) -> Option<String> {
    let spread = pooled.spread.as_ref()?;
    let i = spread.apart?;
    let others: Vec<f64> = spread.steady();
    let (lo, hi) = others
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| {
            (lo.min(m), hi.max(m))
        });
    let center = crate::analysis::median(&others)?;
    let m = spread.medians[i];
    let moved = pooled
        .median()
        .zip(pooled.median_without_apart())
        .map(|(with, without)| {
            format!(
                " ({:+.1}% against the others' samples alone)",
                (with / without - 1.0) * 100.0
            )
        })
        .unwrap_or_default();
    Some(format!(
        "a process apart: process {} of {} at {}, {:+.0}% from the others' {} – {}, a level of \
         its own ({}% or more from them and {}× their spread); the pooled median counts it{moved}, \
         the interval's spread between processes is the other {}'s",
        i + 1,
        spread.medians.len(),
        time_ns(m),
        (m / center - 1.0) * 100.0,
        time_ns(lo),
        time_ns(hi),
        APART_MIN * 100.0,
        APART_SPREADS,
        others.len()
    ))
}

/// The samples the figures leave out for a slow kernel phase of the host
/// (`analysis::host::leave_out`): "slow kernel phases: 61 of its 278 samples …; 61 are left
/// out; the median moved −0.8%".
fn phase_note(pooled: &Pooled) -> Option<String> {
    let phase = pooled.host()?.kernel_phase.filter(|k| k.left_out)?;
    let moved = phase
        .median_shift
        .map(|s| format!("; the median moved {:+.1}%", s * 100.0))
        .unwrap_or_default();
    let whole = match phase.left_out_processes {
        0 => String::new(),
        1 => " (with one process taken wholly in them, left out whole)".to_string(),
        n => format!(" (with {n} processes taken wholly in them, left out whole)"),
    };
    let kept = phase.slow_samples.saturating_sub(phase.left_out_samples);
    let kept = if kept > 0 {
        format!("{whole} ({kept} stay in: their processes have too few steady samples to stand on)")
    } else {
        whole
    };
    Some(format!(
        "slow kernel phases: {} of its {} samples were taken while the host made entering the \
         kernel dearer (a null call {:.1}× its fast level or slower, in phases); {} are left \
         out{kept}{moved}",
        phase.slow_samples, phase.samples, KERNEL_SLOW, phase.left_out_samples
    ))
}

/// The earlier runs left out of the interval's floor for a slow kernel phase as long as the
/// run (`ExperimentResult::earlier_slow_medians`): "earlier runs in slow phases: 1 of this
/// machine's 5 earlier runs …".
fn slow_runs_note(r: &ExperimentResult) -> Option<String> {
    let slow = &r.earlier_slow_medians;
    if slow.is_empty() {
        return None;
    }
    let all = slow.len() + r.earlier_medians.len();
    let medians: Vec<String> = slow.iter().map(|&m| time_ns(m)).collect();
    let (its, does) = if slow.len() == 1 {
        ("its median", "does")
    } else {
        ("their medians", "do")
    };
    Some(format!(
        "earlier runs in slow phases: {} of this machine's {all} earlier runs measured alike \
         sat wholly in a slow kernel phase of the host (a null call {:.1}× the fastest \
         run's or slower; {its} {}) and {does} not floor the interval, which rests on the \
         others, at the host's usual level",
        slow.len(),
        KERNEL_SLOW,
        medians.join(", ")
    ))
}

/// What `--cpu-turns` found: the CPUs' figures when they differ, that they do not when they
/// do not.
fn cpu_note(pooled: &Pooled) -> Option<String> {
    let effect = pooled.cpu_effect()?;
    let cpus: Vec<String> = effect.groups.iter().map(|g| g.cpu.to_string()).collect();
    // "p = 0.016; 0.176 over the run's 11 tests (Holm)", or "p = 0.3" for one test.
    let p = if effect.tests > 1 {
        format!(
            "p = {}; {} over the run's {} tests (Holm)",
            sig3(effect.p),
            sig3(effect.p_adjusted),
            effect.tests
        )
    } else {
        format!("p = {}", sig3(effect.p))
    };
    if !effect.differ() {
        return Some(format!(
            "no CPU effect: CPUs {} do not differ measurably ({p}, {} processes)",
            cpus.join(", "),
            effect.groups.iter().map(|g| g.processes).sum::<usize>()
        ));
    }
    let each: Vec<String> = effect
        .groups
        .iter()
        .map(|g| format!("CPU {} {} ({})", g.cpu, time_ns(g.median), g.processes))
        .collect();
    Some(format!(
        "CPUs differ: {}, {}% apart ({p}); the CPU is a factor here, not noise: \
             compare on one CPU (--cpu)",
        each.join(", "),
        sig3(effect.range() * 100.0),
    ))
}

/// What a run-sensitive configuration's note adds when the host stole time during its
/// samples: "; the hypervisor stole 30 ms during 3 of its 412 samples in this run".
fn during_samples(h: &HostFigures) -> Option<String> {
    let (n, ns) = h.stolen_samples.zip(h.steal_ns)?;
    (n > 0).then(|| {
        format!(
            "; the hypervisor stole {} during {n} of its {} samples in this run",
            steal_text(ns),
            h.samples
        )
    })
}

#[cfg(test)]
mod tests;

//! Repeats merged: `oslab run --repeat N` measures each configuration in N worker
//! processes, interleaved, and stores N results. Every figure of a configuration (run,
//! experiment, parameters) that oslab shows — the tables of `show`, the cost ladder, the HTML
//! page's tables and charts, the comparison's medians, the `configurations` of the JSON
//! document — is `Pooled::figures` over the pooled samples of its processes; no view picks one
//! process. The per-process medians (`Pooled::process_medians`) are shown beside it, labelled
//! as such. The store, the JSON document's `results` and `compare` (whose unit is the process)
//! keep the processes apart as data. What the pooled result must show is checked again over the
//! pooled counts with the expectations the caller gives (`report::pool` gives the experiments'),
//! and the notes that word what the processes add are the report's (`report::pool`).

use crate::analysis::bootstrap::grouped_median_ci;
use crate::analysis::cpus::{CpuEffect, adjust_for_each_other, cpu_effect};
use crate::analysis::host::{HostFigures, KernelPhase, PhaseBound, leave_out, phases};
use crate::analysis::processes::{
    Spread, between_interval, between_runs, hull, recent_earlier, rerun_interval, unstable,
};
use crate::analysis::reruns::MachineFloor;
use crate::analysis::result::{CI_RESAMPLES, CI_SEED, ResultFigures, figures, sum_probes};
use crate::analysis::validate::{self, Expectation};
use crate::model::pairs::DUET_FACT;
use crate::model::{ExperimentResult, Fact, Sample, Status};

/// What a configuration's counters must show, given its result (experiment and parameters):
/// `None` for an experiment the caller does not know, whose checks then stay as stored.
pub type Expectations<'a> = &'a dyn Fn(&ExperimentResult) -> Option<Vec<Expectation>>;

/// Runs that differ by more than this (and more than the run's processes do) make a
/// configuration run-sensitive.
pub const RUN_SENSITIVE_MIN: f64 = 0.01;

/// One configuration: its results merged, and how many worker processes measured it.
pub struct Pooled {
    pub result: ExperimentResult,
    pub processes: usize,
    /// How many of the merged samples each measuring process contributed, in order (a cold
    /// first process left out).
    sample_counts: Vec<usize>,
    /// What differed between the measuring processes (all of them, a cold first one
    /// included); `None` when none measured.
    pub spread: Option<Spread>,
    /// The CPU each measuring process was pinned to, in the order of `spread`'s medians
    /// (`None`: not to one CPU).
    pub process_cpus: Vec<Option<usize>>,
    /// Whether those CPUs differ, adjusted for every configuration of the run tested
    /// (`pool`); `None` with fewer than two CPUs or too few processes to tell.
    cpu: Option<CpuEffect>,
    /// Each round's process median (`ResultFigures::rounds`); empty for one process.
    pub rounds: Vec<Option<f64>>,
    /// Round by round, beside `rounds`: whether that process measured this configuration and
    /// its pair's in turn (`model::pairs::DUET_FACT`).
    pub duet: Vec<bool>,
    /// The wall time its processes took, seconds, setup included; a duet's worker, which
    /// measured two configurations, counts half for each.
    pub spent_s: f64,
    /// The machine's rerun spread over the run's configurations (`analysis::reruns`), where
    /// this configuration has too few earlier runs of its own to floor its interval.
    pub machine: Option<MachineFloor>,
    /// What the host did during the samples the figures count (`analysis::host`), computed
    /// once; its `kernel_phase` over every sample of every process that took any, those the
    /// figures leave out in slow kernel phases included (`analysis::host::phase`).
    host: Option<HostFigures>,
    /// The medians of the processes left out whole, taken wholly in a slow kernel phase
    /// (`analysis::host::leave_out`), in run order; not among `spread`'s.
    pub left_out_medians: Vec<f64>,
}

impl Pooled {
    /// The figures of the configuration: the one function every view takes its median and
    /// interval from. The interval is where a rerun's median falls, 95%
    /// (`analysis::processes::rerun_interval`): with samples from several processes, the
    /// two-stage bootstrap over them (processes, then their samples) widened to Student's t
    /// interval over the process medians, as `compare` does, its half-widths times √2; floored
    /// by the spread of this machine's earlier runs of the configuration where there are
    /// enough, or else by the machine's rerun spread over the run's configurations
    /// (`analysis::reruns`). With one process and no such runs it is that process's
    /// confidence interval.
    pub fn figures(&self) -> ResultFigures {
        let mut f = self.own_figures();
        if let (Some(stats), Some(ci), Some(machine)) = (&f.stats, f.ci, self.machine) {
            f.ci = Some(hull(ci, Some(machine.around(stats.median))));
        }
        f
    }

    /// The figures as [`Pooled::figures`] has them but for the machine's floor: what this
    /// configuration's own processes and earlier runs give, which the adaptive plan weighs
    /// (during the run a configuration is pooled alone, without the run's others).
    pub fn own_figures(&self) -> ResultFigures {
        let mut f = figures(&self.result);
        f.rounds.clone_from(&self.rounds);
        let kept = self.kept();
        if self.sample_counts.len() > 1 && unstable(&kept) {
            // No interval over processes this far apart says anything: none is computed.
            f.ci = None;
            f.unstable = Some(kept);
            return f;
        }
        if self.sample_counts.len() > 1 {
            let values = self.values();
            let groups = self.groups(&values);
            let between = match (&self.spread, &f.stats) {
                (Some(spread), Some(stats)) => between_interval(stats.median, spread.kept()),
                _ => None,
            };
            f.ci =
                grouped_median_ci(&groups, 0.95, CI_RESAMPLES, CI_SEED).map(|ci| hull(ci, between));
        }
        if let (Some(stats), Some(ci)) = (&f.stats, f.ci) {
            f.ci = Some(rerun_interval(
                stats.median,
                ci,
                self.sample_counts.len(),
                &self.result.earlier_medians,
            ));
        }
        f
    }

    /// The spread of this machine's runs of the configuration, this one and its earlier ones
    /// (`analysis::processes::between_runs`), with how many earlier runs it rests on; `None`
    /// while there are too few.
    pub fn between_runs(&self) -> Option<(f64, usize)> {
        let earlier = &self.result.earlier_medians;
        let spread = between_runs(self.median()?, earlier)?;
        Some((spread, recent_earlier(earlier)?.len()))
    }

    /// The pooled median alone, as `figures` has it, without resampling for the interval.
    pub fn median(&self) -> Option<f64> {
        crate::analysis::summarize(&self.values()).map(|s| s.median)
    }

    /// The pooled median over the samples of every kept process but the one apart
    /// (`analysis::processes::apart`): how far that process moves the figure, which counts it.
    /// `None` without a process apart.
    pub fn median_without_apart(&self) -> Option<f64> {
        let spread = self.spread.as_ref()?;
        // `groups` holds the kept processes: without a cold first one, when it is left out.
        let apart = spread.apart? - usize::from(spread.drops_first());
        let values = self.values();
        let groups = self.groups(&values);
        let rest: Vec<f64> = groups
            .into_iter()
            .enumerate()
            .filter(|&(i, _)| i != apart)
            .flat_map(|(_, g)| g.iter().copied())
            .collect();
        crate::analysis::summarize(&rest).map(|s| s.median)
    }

    /// The median time per operation of each process that took samples, in run order (a
    /// cold first process included, though the pooled figure leaves it out): what the pooled
    /// figure is made of, shown beside it (never instead of it).
    pub fn process_medians(&self) -> Vec<f64> {
        self.spread
            .as_ref()
            .map(|s| s.medians.clone())
            .unwrap_or_default()
    }

    /// Whether the CPUs the processes took in turn differ (`analysis::cpus`), over the
    /// processes the pooled figure keeps, its p adjusted for the run's other configurations
    /// tested; `None` with fewer than two CPUs or too few processes to tell.
    pub fn cpu_effect(&self) -> Option<CpuEffect> {
        self.cpu.clone()
    }

    /// Whether the processes ran on more than one CPU.
    pub fn on_several_cpus(&self) -> bool {
        let mut cpus = self.process_cpus.iter().flatten();
        cpus.next()
            .is_some_and(|first| cpus.any(|other| other != first))
    }

    /// The process medians the pooled figure is made of (a cold first process left out
    /// where the figures leave it out); empty when none measured.
    pub fn kept(&self) -> Vec<f64> {
        self.spread
            .as_ref()
            .map(|s| s.kept().to_vec())
            .unwrap_or_default()
    }

    /// What the host did during the samples the figures count (`analysis::host`); its
    /// `kernel_phase` over every sample of every process, those it leaves out in slow kernel
    /// phases included (`KernelPhase::left_out`).
    pub fn host(&self) -> Option<HostFigures> {
        self.host.clone()
    }

    fn values(&self) -> Vec<f64> {
        self.result.samples.iter().map(|s| s.ns_per_op).collect()
    }

    /// `values` cut into the samples of each measuring process.
    fn groups<'a, T>(&self, values: &'a [T]) -> Vec<&'a [T]> {
        let mut groups: Vec<&[T]> = Vec::new();
        let mut rest = values;
        for &n in &self.sample_counts {
            let (group, tail) = rest.split_at(n.min(rest.len()));
            groups.push(group);
            rest = tail;
        }
        groups
    }

    /// Each measuring process's time per operation, sample by sample, in order (with copies,
    /// one list per copy).
    pub fn per_process(&self) -> Vec<Vec<f64>> {
        let values = self.values();
        self.groups(&values)
            .into_iter()
            .map(<[f64]>::to_vec)
            .collect()
    }

    /// Whether this is the configuration of `r` (experiment, parameters, suite label).
    pub fn is_of(&self, r: &ExperimentResult) -> bool {
        same_configuration(&self.result, r)
    }
}

fn same_configuration(a: &ExperimentResult, b: &ExperimentResult) -> bool {
    a.experiment == b.experiment && a.params == b.params && a.label == b.label
}

/// The results of a run with those of one configuration (experiment, parameters, suite
/// label) merged, in the order each configuration first appears.
/// `expectations` are checked again over each configuration's pooled counts; `phase_bound`
/// says which experiments' figures leave out the samples of slow kernel phases
/// (`analysis::host::leave_out`).
pub fn pool(
    results: &[ExperimentResult],
    expectations: Expectations,
    phase_bound: PhaseBound,
) -> Vec<Pooled> {
    let mut groups: Vec<Vec<&ExperimentResult>> = Vec::new();
    for r in results {
        match groups.iter_mut().find(|g| same_configuration(g[0], r)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    let mut pooled: Vec<Pooled> = groups
        .into_iter()
        .map(|g| pooled(&g, expectations, phase_bound))
        .collect();
    let mut tested: Vec<&mut CpuEffect> =
        pooled.iter_mut().filter_map(|p| p.cpu.as_mut()).collect();
    adjust_for_each_other(&mut tested);
    let machine = MachineFloor::of(
        pooled
            .iter()
            .filter(|p| p.result.status == Status::Ok && !unstable(&p.kept()))
            .filter_map(|p| Some((p.median()?, p.result.earlier_medians.as_slice()))),
    );
    for p in &mut pooled {
        p.machine = machine.filter(|_| MachineFloor::floors(&p.result.earlier_medians));
    }
    pooled
}

/// The CPU test over the processes `spread` keeps (a cold first one left out).
fn tested_cpus(spread: Option<&Spread>, process_cpus: &[Option<usize>]) -> Option<CpuEffect> {
    let spread = spread?;
    let skip = usize::from(spread.drops_first());
    cpu_effect(spread.medians.get(skip..)?, process_cpus.get(skip..)?)
}

/// One configuration's processes pooled: the samples taken in slow kernel phases left out
/// where they came in phases and `phase_bound` allows (`analysis::host::leave_out`), then a
/// cold first process (`Spread::first_run`) left out of the merged samples and figures, and
/// the result says so.
fn pooled(
    group: &[&ExperimentResult],
    expectations: Expectations,
    phase_bound: PhaseBound,
) -> Pooled {
    let all: Vec<&[Sample]> = group
        .iter()
        .map(|r| r.samples.as_slice())
        .filter(|s| !s.is_empty())
        .collect();
    let mut phase = phases(&all);
    let Some(owned) = leave_out(group, phase_bound) else {
        return pooled_as_is(group, expectations, phase);
    };
    let steady: Vec<&ExperimentResult> = owned.iter().collect();
    let samples = |rs: &[&ExperimentResult]| rs.iter().map(|r| r.samples.len()).sum::<usize>();
    let left_out_samples = samples(group) - samples(&steady);
    let emptied = |(r, kept): (&&ExperimentResult, &ExperimentResult)| {
        !r.samples.is_empty() && kept.samples.is_empty()
    };
    let left_out_medians: Vec<f64> = group
        .iter()
        .zip(&owned)
        .filter(|&p| emptied(p))
        .filter_map(|(r, _)| {
            crate::analysis::median(&r.samples.iter().map(|s| s.ns_per_op).collect::<Vec<_>>())
        })
        .collect();
    let mut pooled = pooled_as_is(&steady, expectations, None);
    // The median with them, over every process that measured but a cold first one the figures
    // leave out (the first of those that still have samples).
    let cold = pooled
        .spread
        .as_ref()
        .is_some_and(Spread::drops_first)
        .then(|| owned.iter().position(|r| !r.samples.is_empty()))
        .flatten();
    let all_values: Vec<f64> = group
        .iter()
        .enumerate()
        .filter(|&(k, _)| Some(k) != cold)
        .flat_map(|(_, r)| r.samples.iter().map(|s| s.ns_per_op))
        .collect();
    let with_them = crate::analysis::median(&all_values);
    if let Some(phase) = phase.as_mut() {
        phase.left_out = true;
        phase.left_out_samples = left_out_samples;
        phase.left_out_processes = left_out_medians.len();
        // How far leaving them out moved the figure as pooled: a process with too few steady
        // samples keeps all of its own or goes whole, and a cold first process is left out
        // either way.
        if let (Some(m), Some(w)) = (pooled.median(), with_them)
            && w > 0.0
        {
            phase.median_shift = Some(m / w - 1.0);
        }
    }
    if let Some(host) = pooled.host.as_mut() {
        host.kernel_phase = phase;
    }
    pooled.left_out_medians = left_out_medians;
    pooled
}

/// One configuration's processes pooled as they are, `kernel_phase` their kernel phases.
fn pooled_as_is(
    group: &[&ExperimentResult],
    expectations: Expectations,
    kernel_phase: Option<KernelPhase>,
) -> Pooled {
    // Each process's times per op, in run order (empty for a process that measured nothing).
    let values: Vec<Vec<f64>> = group
        .iter()
        .map(|r| r.samples.iter().map(|s| s.ns_per_op).collect())
        .collect();
    let refs: Vec<&[f64]> = values
        .iter()
        .filter(|v| !v.is_empty())
        .map(Vec::as_slice)
        .collect();
    let spread = Spread::of(&refs, CI_SEED);
    let drop_first = spread.as_ref().is_some_and(Spread::drops_first);
    let measured: Vec<&ExperimentResult> = group
        .iter()
        .copied()
        .filter(|r| !r.samples.is_empty())
        .skip(usize::from(drop_first))
        .collect();
    let result = merge(group, &measured, expectations);
    let process_cpus: Vec<Option<usize>> = group
        .iter()
        .filter(|r| !r.samples.is_empty())
        .map(|r| match r.calibration.cpus.as_slice() {
            [one] => Some(*one),
            _ => None,
        })
        .collect();
    // Round by round (the group is in run order): a process that did not count is `None`; one
    // process has no rounds to pair.
    let mut cold = drop_first;
    let rounds = if group.len() > 1 {
        values
            .iter()
            .map(|v| {
                let median = crate::analysis::median(v)?;
                (!std::mem::take(&mut cold)).then_some(median)
            })
            .collect()
    } else {
        Vec::new()
    };
    let in_duet: Vec<bool> = group
        .iter()
        .map(|r| r.facts.iter().any(|f| f.name == DUET_FACT))
        .collect();
    let spent_s = group
        .iter()
        .zip(&in_duet)
        .map(|(r, &duet)| r.duration_s / if duet { 2.0 } else { 1.0 })
        .sum();
    let duet = in_duet.into_iter().take(rounds.len()).collect();
    let mut pooled = Pooled {
        spent_s,
        machine: None,
        host: None,
        left_out_medians: Vec::new(),
        rounds,
        duet,
        processes: group.len(),
        sample_counts: measured.iter().map(|r| r.samples.len()).collect(),
        cpu: tested_cpus(spread.as_ref(), &process_cpus),
        spread,
        process_cpus,
        result,
    };
    pooled.host = crate::analysis::host::figures(&pooled.groups(&pooled.result.samples))
        .map(|h| HostFigures { kernel_phase, ..h });
    pooled
}

/// For each result, in order: which of its configuration's worker processes it is (from 1)
/// and how many there are.
pub fn process_numbers(results: &[ExperimentResult]) -> Vec<(usize, usize)> {
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let same = |o: &&ExperimentResult| same_configuration(o, r);
            let before = results[..i].iter().filter(same).count();
            (before + 1, results.iter().filter(same).count())
        })
        .collect()
}

/// Merge the results of one configuration: samples concatenated, probe counts summed, each
/// fact the median over the processes, `expectations` checked again over the pooled
/// counts. A process that failed or was unsupported makes the merged result say so.
/// `measured`: the processes whose samples count (those that measured, less a cold first one).
fn merge(
    group: &[&ExperimentResult],
    measured: &[&ExperimentResult],
    expectations: Expectations,
) -> ExperimentResult {
    let Some(first) = measured.first() else {
        return group[0].clone();
    };
    if group.len() == 1 {
        return (*first).clone();
    }
    let mut merged = (*first).clone();
    merged.samples = measured.iter().flat_map(|r| r.samples.clone()).collect();
    merged.probes = sum_probes(measured);
    for r in &measured[1..] {
        for c in &r.counters {
            if !merged.counters.iter().any(|m| m.name == c.name) {
                merged.counters.push(c.clone());
            }
        }
    }
    merged.facts = median_facts(measured);
    merged.duration_s = group.iter().map(|r| r.duration_s).sum();
    let busy: Vec<f64> = group.iter().filter_map(|r| r.other_cpus_busy).collect();
    merged.other_cpus_busy =
        (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64);

    if let Some(expectations) = expectations(&merged) {
        merged.validation = validate::check(
            &expectations,
            &merged.samples,
            &merged.probes,
            &merged.counters,
            &merged.facts,
            merged.emulation.as_deref(),
        );
        (merged.status, merged.reason) = match validate::suspect_reason(&merged.validation) {
            Some(reason) => (Status::Suspect, Some(reason)),
            None => (Status::Ok, None),
        };
    }
    // A process that did not measure outweighs the pooled verdict of the others.
    if let Some((k, bad)) = group
        .iter()
        .enumerate()
        .find(|(_, r)| matches!(r.status, Status::Failed | Status::Unsupported))
    {
        merged.status = bad.status;
        merged.reason = Some(format!(
            "process {} of {}: {}",
            k + 1,
            group.len(),
            bad.reason.as_deref().unwrap_or("no reason recorded")
        ));
    }
    merged
}

/// Each fact as the median of its finite values over the processes (NaN when none has one),
/// in the order of the first process that reports it.
fn median_facts(results: &[&ExperimentResult]) -> Vec<Fact> {
    let mut facts: Vec<Fact> = Vec::new();
    for f in results.iter().flat_map(|r| &r.facts) {
        if facts.iter().any(|m| m.name == f.name) {
            continue;
        }
        let values: Vec<f64> = results
            .iter()
            .flat_map(|r| r.facts.iter().filter(|g| g.name == f.name))
            .map(|g| g.value)
            .filter(|v| v.is_finite())
            .collect();
        let mut fact = f.clone();
        fact.value = crate::analysis::median(&values).unwrap_or(f64::NAN);
        if results.len() > 1 {
            fact.note = format!("{} (median over {} processes)", f.note, results.len());
        }
        facts.push(fact);
    }
    facts
}

#[cfg(test)]
mod tests;

//! A pair of configurations made to be compared (`model::pairs`: `entry=inline` against
//! `call`, `thp=off` against `on`, `placement=same` against `cross`) measured by one worker
//! that sets up both and takes their samples in turn (`sampler::sample_duet`). Each keeps a
//! result of its own, as if measured alone, so every view reads them as before; the round's
//! two processes are then one, and the ratio of their medians shares the process's layout and
//! CPU and every second of the host's, not only the round's (duet benchmarking, Bulej et al.
//! 2020). Both results carry the fact `model::pairs::DUET_FACT`.

use std::collections::BTreeMap;

use crate::experiment::selection::Planned;
use crate::harness::copies;
use crate::harness::plan::Plan;
use crate::model::copies::Copies;
use crate::model::pairs;
use crate::model::passes::Passes;
use crate::model::{ExperimentResult, Sample};

/// Whether `a` and `b` can be measured as a duet, `a` the baseline: one experiment with one
/// label and load, one copy each, sampled (not in timed passes), differing only in one
/// compared parameter.
pub fn pairable(a: &Planned, b: &Planned) -> bool {
    let (pa, pb) = (a.params.as_map(), b.params.as_map());
    let alone = |p: &BTreeMap<String, String>| Copies::of(p).count == 1 && Passes::of(p).is_none();
    a.info.name == b.info.name
        && a.label == b.label
        && a.load == b.load
        && alone(pa)
        && alone(pb)
        && pairs::compared(pa, pb).is_some()
}

/// Measure `a` and `b` (see [`pairable`]) in one worker: their two results, `a`'s first. The
/// worker's time limit is twice a single one's: it samples two configurations.
pub fn run(
    a: &Planned,
    b: &Planned,
    plan: &Plan,
    on_sample: &mut dyn FnMut(&[Sample]),
) -> Vec<ExperimentResult> {
    let mut plan = plan.clone();
    plan.timeout *= 2;
    copies::workers(a, &plan, (&[None], Vec::new()), Some(b), on_sample)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Params;

    fn planned(name: &str, params: &[(&str, &str)]) -> Planned {
        let info = crate::experiment::find(name).expect("a known experiment");
        let map = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Planned {
            info,
            params: Params::from_map(map),
            label: None,
            load: None,
        }
    }

    #[test]
    fn a_duet_is_one_experiment_differing_in_a_compared_parameter() {
        // Any experiment: whether two configurations pair is a matter of their parameters.
        let name = crate::experiment::REGISTRY[0].name;
        let inline = planned(name, &[("entry", "inline")]);
        let call = planned(name, &[("entry", "call")]);
        assert!(pairable(&inline, &call));
        assert!(!pairable(&call, &inline), "the baseline first");
        let copies = planned(name, &[("entry", "call"), ("copies", "2")]);
        let with = planned(name, &[("entry", "inline"), ("copies", "2")]);
        assert!(!pairable(&with, &copies), "copies run alone");
        let mut labelled = planned(name, &[("entry", "call")]);
        labelled.label = Some("other".into());
        assert!(!pairable(&inline, &labelled));
    }
}

//! A duet: two routines in one process, their samples taken in turn (Bulej et al., "Duet
//! Benchmarking: Improving Measurement Accuracy in the Cloud", 2020, with the two sides taking
//! turns instead of running at once). Each sample of one lies a few milliseconds from the
//! other's, in the same process, layout and CPU, so what the host does over seconds falls on
//! both and cancels in their ratio. Each is calibrated as it would be alone; the stopping rule
//! waits for both.

use super::*;

/// One side of a duet: its routine and the batch an experiment with `Batch::Fixed` asks for.
pub struct Side<'r> {
    pub routine: &'r mut dyn Routine,
    pub fixed_ops: Option<u64>,
}

/// Take samples of both sides in turn, the first side's first, until both medians are known
/// precisely enough or the two configurations' budgets together are spent. `report` gets each
/// side's calibration and samples with the side's index (0, 1). Timed passes are not taken in
/// a duet (the harness does not ask for one).
pub fn sample_duet(
    subtract_loop_overhead: bool,
    mut sides: [Side; 2],
    clock: Clock,
    counters: &mut Counting,
    cpus: &[usize],
    cfg: &SamplerConfig,
    report: &mut dyn FnMut(usize, Progress) -> std::io::Result<()>,
) -> Result<[Sampled; 2], SampleError> {
    let mut ready = Vec::with_capacity(2);
    for (i, side) in sides.iter_mut().enumerate() {
        let calibrated = calibrate(
            subtract_loop_overhead,
            side.routine,
            side.fixed_ops,
            clock,
            cpus,
            cfg,
        )?;
        report(i, Progress::Calibrated(&calibrated.calibration)).map_err(SampleError::Report)?;
        ready.push(calibrated);
    }
    // The first side's warm-up has cooled while the second warmed: one more batch of it.
    let ops_a = ready[0].calibration.ops_per_sample;
    sides[0].routine.prepare(ops_a)?;
    sides[0].routine.run(ops_a)?;

    let sampling_start = clock.start();
    let mut values: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut stopping = Stopping::new(cfg);
    loop {
        for (i, side) in sides.iter_mut().enumerate() {
            let c = &ready[i];
            let partner = side.routine.partner();
            let sample = take_sample(
                side.routine,
                clock,
                counters,
                c.calibration.ops_per_sample,
                (c.calibration.timer_overhead_ns, c.subtract_ns),
                (partner, own_usage(cfg)),
            )?;
            report(i, Progress::Sample(&sample)).map_err(SampleError::Report)?;
            values[i].push(sample.ns_per_op);
        }
        let spent = clock.ns(sampling_start, clock.stop());
        if let Some(stop_reason) = stopping.check(&[&values[0], &values[1]], spent, cfg) {
            return Ok([0, 1].map(|i| Sampled {
                stop_reason,
                ops_per_sample: ready[i].calibration.ops_per_sample,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::clock::{self, ClockChoice};

    /// A routine that spins `spin` iterations an operation and counts the batches it ran.
    struct Spin {
        spin: u64,
        batches: u64,
    }

    impl Routine for Spin {
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for i in 0..ops * self.spin {
                std::hint::black_box(i);
            }
            self.batches += 1;
            Ok(())
        }
    }

    #[test]
    fn a_duet_takes_its_sides_samples_in_turn() {
        let (clock, _) = clock::choose(ClockChoice::Monotonic);
        let cfg = SamplerConfig {
            budget_s: 0.05,
            min_time_s: 0.0,
            min_samples: 4,
            max_samples: 6,
            min_sample_ns: 1e5,
            warmup_ns: 1e5,
            ..SamplerConfig::quick()
        };
        let (mut a, mut b) = (
            Spin {
                spin: 1,
                batches: 0,
            },
            Spin {
                spin: 4,
                batches: 0,
            },
        );
        let mut counters = Counting {
            perf: CounterSet::none(),
            reclaim: None,
            host: None,
        };
        let mut order = Vec::new();
        let sampled = sample_duet(
            false,
            [
                Side {
                    routine: &mut a,
                    fixed_ops: None,
                },
                Side {
                    routine: &mut b,
                    fixed_ops: Some(10),
                },
            ],
            clock,
            &mut counters,
            &[],
            &cfg,
            &mut |side, progress| {
                order.push((side, matches!(progress, Progress::Sample(_))));
                Ok(())
            },
        )
        .expect("sampled");
        // Both calibrations first, then the samples alternate, the first side's first.
        assert_eq!(&order[..2], &[(0, false), (1, false)]);
        let sides: Vec<usize> = order[2..].iter().map(|&(side, _)| side).collect();
        assert!(
            sides.len() >= 2 && sides.len().is_multiple_of(2),
            "{sides:?}"
        );
        assert!(sides.chunks(2).all(|turn| turn == [0, 1]), "{sides:?}");
        assert!(order[2..].iter().all(|&(_, sample)| sample));
        assert_eq!(sampled[0].stop_reason, sampled[1].stop_reason);
        assert_eq!(sampled[1].ops_per_sample, 10, "the fixed batch is kept");
    }
}

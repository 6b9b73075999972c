//! The machine's rerun spread, pooled over a run's configurations: the floor of the rerun
//! interval of a configuration that has too few earlier runs of its own to floor it
//! (`processes::between_runs` wants [`MIN_EARLIER_RUNS`](super::processes::MIN_EARLIER_RUNS)).
//!
//! Host phases that last longer than a run move its configurations alike, so one earlier run
//! on the machine already says much about them — not for one configuration (one difference
//! between two runs has t(0.975, 1) = 12.7 against it), but over many: each configuration's
//! difference between this run and the last earlier one, `d = ln(median / earlier)`, is one
//! draw of how far a rerun moves a figure here. Their spread around zero (not around their
//! mean: a machine that moved as a whole between the runs is part of what a rerun gives),
//! taken robustly (the median of `|d|` over 0.6745, the standard deviation it implies for a
//! normal `d`) so that the few configurations whose own processes disagree widely do not set
//! every other's floor, times t(0.975, n − 1) over the n configurations, is a half-width on
//! the log scale. `d` is already a difference of two runs: no √2 on top.
//!
//! A configuration whose own processes or earlier runs give a wider interval keeps it: this is
//! a floor, the hull of the two.

use super::processes::{log_interval, recent_earlier, t975};
use super::stats::median;

/// Configurations with an earlier run needed before their differences floor the others': fewer
/// give a spread that t(0.975, n − 1) makes too wide to be worth a floor (2.57 for six).
pub const MIN_CONFIGURATIONS: usize = 6;
/// The median of `|d|` of a normal `d` around 0, in its standard deviations (Φ⁻¹(0.75)).
const MEDIAN_ABS_NORMAL: f64 = 0.674_49;

/// The floor that one earlier run on the machine gives, pooled over a run's configurations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineFloor {
    /// Half the width of the rerun interval it floors, on the log scale.
    pub half: f64,
    /// The configurations whose differences it pools.
    pub configurations: usize,
}

impl MachineFloor {
    /// From each configuration of a run: its median and its earlier runs' medians, oldest
    /// first. `None` with fewer than [`MIN_CONFIGURATIONS`] that have an earlier run and a
    /// positive, finite median on both sides.
    pub fn of<'a>(configurations: impl IntoIterator<Item = (f64, &'a [f64])>) -> Option<Self> {
        let usable = |m: f64| m > 0.0 && m.is_finite();
        let d: Vec<f64> = configurations
            .into_iter()
            .filter_map(|(m, earlier)| {
                let last = *earlier.last()?;
                (usable(m) && usable(last)).then(|| (m / last).ln().abs())
            })
            .collect();
        if d.len() < MIN_CONFIGURATIONS {
            return None;
        }
        let spread = median(&d)? / MEDIAN_ABS_NORMAL;
        Some(MachineFloor {
            half: t975(d.len() - 1) * spread,
            configurations: d.len(),
        })
    }

    /// Whether it floors a configuration with `earlier` runs: one without enough of its own
    /// ([`recent_earlier`] gives none).
    pub fn floors(earlier: &[f64]) -> bool {
        recent_earlier(earlier).is_none()
    }

    /// The interval it gives around `center`.
    pub fn around(&self, center: f64) -> (f64, f64) {
        log_interval(center, self.half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_differences_from_the_last_earlier_run_set_the_floor() {
        // Six configurations, each 2% off its last earlier run, up or down: d = ±0.0198.
        let earlier = [[50.0, 100.0], [50.0, 200.0], [1.0, 300.0]];
        let runs: Vec<(f64, &[f64])> = (0..6)
            .map(|i| {
                let e = &earlier[i % 3][..];
                let m = e[1] * if i % 2 == 0 { 1.02 } else { 1.0 / 1.02 };
                (m, e)
            })
            .collect();
        let floor = MachineFloor::of(runs).unwrap();
        assert_eq!(floor.configurations, 6);
        let expected = t975(5) * 1.02f64.ln() / MEDIAN_ABS_NORMAL;
        assert!((floor.half - expected).abs() < 1e-12, "{floor:?}");
        let (lo, hi) = floor.around(100.0);
        assert!(
            (lo * hi - 100.0 * 100.0).abs() < 1e-9,
            "symmetric on the log scale"
        );
    }

    #[test]
    fn a_machine_that_moved_as_a_whole_is_part_of_the_floor() {
        // Every configuration 10% slower than its earlier run: the spread is around zero.
        let earlier = [100.0];
        let runs = vec![(110.0, &earlier[..]); 8];
        let floor = MachineFloor::of(runs).unwrap();
        assert!(floor.half > 1.1f64.ln() * 2.0, "{floor:?}");
    }

    #[test]
    fn a_few_configurations_far_apart_do_not_set_the_floor() {
        let earlier = [100.0];
        let mut runs = vec![(101.0, &earlier[..]); 7];
        runs.extend([(300.0, &earlier[..]), (30.0, &earlier[..])]);
        let floor = MachineFloor::of(runs).unwrap();
        assert!(floor.half < 0.05, "{floor:?}");
    }

    #[test]
    fn too_few_configurations_with_an_earlier_run_give_none() {
        let earlier = [100.0];
        let none: [f64; 0] = [];
        let mut runs = vec![(101.0, &earlier[..]); MIN_CONFIGURATIONS - 1];
        // Without an earlier run, or with a median that is no time, a configuration is not one.
        runs.extend([
            (101.0, &none[..]),
            (0.0, &earlier[..]),
            (f64::NAN, &earlier[..]),
        ]);
        assert_eq!(MachineFloor::of(runs), None);
    }

    proptest::proptest! {
        #[test]
        fn the_floor_is_a_positive_log_interval_that_no_unit_changes(
            pairs in proptest::collection::vec((1.0f64..1e6, 0.5f64..2.0), 6..40),
            unit in 1e-3f64..1e3,
        ) {
            // Each configuration's median m and its earlier run's m · r, in ns or in `unit`s.
            let of = |unit: f64| {
                let earlier: Vec<[f64; 1]> = pairs.iter().map(|&(m, r)| [m * r * unit]).collect();
                MachineFloor::of(pairs.iter().zip(&earlier).map(|(&(m, _), e)| (m * unit, &e[..])))
            };
            let floor = of(1.0).unwrap();
            proptest::prop_assert!(floor.half.is_finite() && floor.half >= 0.0);
            proptest::prop_assert_eq!(floor.configurations, pairs.len());
            let (lo, hi) = floor.around(7.0);
            proptest::prop_assert!(0.0 < lo && lo <= 7.0 && 7.0 <= hi);
            // Only ratios count.
            let other = of(unit).unwrap();
            proptest::prop_assert!((other.half - floor.half).abs() <= 1e-9 * (1.0 + floor.half));
        }
    }

    #[test]
    fn only_configurations_without_their_own_floor_take_it() {
        assert!(MachineFloor::floors(&[]));
        assert!(MachineFloor::floors(&[1.0]));
        assert!(!MachineFloor::floors(&[1.0, 2.0]));
    }
}

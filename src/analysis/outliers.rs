//! Outlier classification by Tukey's fences (J. W. Tukey, "Exploratory Data Analysis",
//! Addison-Wesley 1977).
//!
//! A sample far from the rest usually means the measurement was disturbed (an interrupt, a
//! migration, a page-cache flush), and the count of such samples says how noisy the machine
//! was. They are flagged and counted, never dropped: the median already resists them, and
//! silently removing data would make a noisy run look clean.
//!
//! Quartiles are type-7 percentiles (see [`percentile`]); with `IQR = Q3 − Q1`, a value is a
//! mild outlier outside `[Q1 − 1.5·IQR, Q3 + 1.5·IQR]` and a severe one outside
//! `[Q1 − 3·IQR, Q3 + 3·IQR]`. A value exactly on a fence is inside it.

use serde::{Deserialize, Serialize};

use super::stats::percentile;

/// Where one sample falls relative to Tukey's fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutlierClass {
    /// Within the inner fences.
    Normal,
    /// Between the lower inner (1.5 IQR) and outer (3 IQR) fences.
    LowMild,
    /// Below the lower outer fence (3 IQR).
    LowSevere,
    /// Between the upper inner (1.5 IQR) and outer (3 IQR) fences.
    HighMild,
    /// Above the upper outer fence (3 IQR).
    HighSevere,
}

/// How many samples fell in each outlier class.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
}

impl Outliers {
    /// All outliers, mild and severe, on both sides.
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }

    fn count(&mut self, class: OutlierClass) {
        match class {
            OutlierClass::Normal => {}
            OutlierClass::LowMild => self.low_mild += 1,
            OutlierClass::LowSevere => self.low_severe += 1,
            OutlierClass::HighMild => self.high_mild += 1,
            OutlierClass::HighSevere => self.high_severe += 1,
        }
    }
}

/// Tukey's four fences of one sample set; kept so a report can draw them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fences {
    /// `Q1 − 3·IQR`
    pub low_severe: f64,
    /// `Q1 − 1.5·IQR`
    pub low_mild: f64,
    /// `Q3 + 1.5·IQR`
    pub high_mild: f64,
    /// `Q3 + 3·IQR`
    pub high_severe: f64,
}

impl Fences {
    /// The fences of data sorted ascending; `None` when `sorted` is empty.
    pub fn of_sorted(sorted: &[f64]) -> Option<Fences> {
        if sorted.is_empty() {
            return None;
        }
        let q1 = percentile(sorted, 25.0);
        let q3 = percentile(sorted, 75.0);
        let iqr = q3 - q1;
        Some(Fences {
            low_severe: q1 - 3.0 * iqr,
            low_mild: q1 - 1.5 * iqr,
            high_mild: q3 + 1.5 * iqr,
            high_severe: q3 + 3.0 * iqr,
        })
    }

    /// The class of one value; NaN, which no fence can place, is `Normal`.
    pub fn classify(&self, x: f64) -> OutlierClass {
        if x < self.low_severe {
            OutlierClass::LowSevere
        } else if x < self.low_mild {
            OutlierClass::LowMild
        } else if x > self.high_severe {
            OutlierClass::HighSevere
        } else if x > self.high_mild {
            OutlierClass::HighMild
        } else {
            OutlierClass::Normal
        }
    }
}

/// The outlier class of every sample, in input order, and the counts per class.
///
/// The fences come from the finite values only; an infinity then lands beyond the outer fence
/// on its side, and a NaN counts as `Normal` (there is no class for it: [`super::summarize`]
/// already rejects such data). Empty input gives empty output.
pub fn classify(xs: &[f64]) -> (Vec<OutlierClass>, Outliers) {
    let mut sorted: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    sorted.sort_unstable_by(f64::total_cmp);
    let mut counts = Outliers::default();
    let Some(fences) = Fences::of_sorted(&sorted) else {
        return (vec![OutlierClass::Normal; xs.len()], counts);
    };
    let classes = xs
        .iter()
        .map(|&x| {
            let class = fences.classify(x);
            counts.count(class);
            class
        })
        .collect();
    (classes, counts)
}

#[cfg(test)]
mod tests {
    use super::OutlierClass::*;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn each_class_from_hand_computed_fences() {
        // Sorted: −30 −8 1 2 3 4 5 6 7 8 9 10 20 40 (n = 14).
        // Q1: h = 13·0.25 = 3.25 → 2 + 0.25 = 2.25; Q3: h = 9.75 → 8 + 0.75 = 8.75; IQR = 6.5.
        // Fences: −17.25, −7.5, 18.5, 28.25.
        let xs = [
            1.0, 2.0, -30.0, 3.0, 4.0, 5.0, 40.0, 6.0, 7.0, -8.0, 8.0, 9.0, 20.0, 10.0,
        ];
        let mut sorted = xs.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        assert_eq!(
            Fences::of_sorted(&sorted),
            Some(Fences {
                low_severe: -17.25,
                low_mild: -7.5,
                high_mild: 18.5,
                high_severe: 28.25,
            })
        );
        let (classes, counts) = classify(&xs);
        assert_eq!(
            classes,
            [
                Normal, Normal, LowSevere, Normal, Normal, Normal, HighSevere, Normal, Normal,
                LowMild, Normal, Normal, HighMild, Normal,
            ]
        );
        assert_eq!(
            counts,
            Outliers {
                low_severe: 1,
                low_mild: 1,
                high_mild: 1,
                high_severe: 1,
            }
        );
        assert_eq!(counts.total(), 4);
    }

    #[test]
    fn skewed_sample_has_one_severe_high_outlier() {
        // Q1 = 2, Q3 = 4, IQR = 2: fences −4, −1, 7, 10; 100 is beyond 10.
        let (classes, counts) = classify(&[1.0, 2.0, 3.0, 4.0, 100.0]);
        assert_eq!(classes, [Normal, Normal, Normal, Normal, HighSevere]);
        assert_eq!(counts.high_severe, 1);
        assert_eq!(counts.total(), 1);
    }

    #[test]
    fn a_value_on_a_fence_is_inside() {
        // Q1 = 2, Q3 = 4, IQR = 2: the upper inner fence is exactly 7.
        let f = Fences::of_sorted(&[1.0, 2.0, 3.0, 4.0, 5.0]).expect("non-empty");
        assert_eq!(f.high_mild, 7.0);
        assert_eq!(f.classify(7.0), Normal);
        assert_eq!(f.classify(7.000001), HighMild);
    }

    #[test]
    fn empty_and_non_finite_input() {
        assert_eq!(classify(&[]), (vec![], Outliers::default()));
        let (classes, counts) = classify(&[1.0, 2.0, 3.0, f64::NAN, f64::INFINITY]);
        assert_eq!(classes, [Normal, Normal, Normal, Normal, HighSevere]);
        assert_eq!(counts.total(), 1);
        let (classes, _) = classify(&[f64::NAN, f64::NEG_INFINITY]);
        assert_eq!(classes, [Normal, Normal]);
    }

    #[test]
    fn counts_round_trip_through_json() {
        let (_, counts) = classify(&[1.0, 2.0, 3.0, 4.0, 100.0]);
        let json = serde_json::to_string(&counts).expect("serialize");
        assert_eq!(
            serde_json::from_str::<Outliers>(&json).expect("parse"),
            counts
        );
    }

    proptest! {
        #[test]
        fn counts_agree_with_classes(xs in prop::collection::vec(-1e6f64..1e6, 0..200)) {
            let (classes, counts) = classify(&xs);
            prop_assert_eq!(classes.len(), xs.len());
            prop_assert!(counts.total() <= xs.len());
            let normal = classes.iter().filter(|c| **c == Normal).count();
            prop_assert_eq!(counts.total() + normal, xs.len());
        }

        #[test]
        fn constant_data_has_no_outliers(x in -1e6f64..1e6, n in 1usize..100) {
            let (classes, counts) = classify(&vec![x; n]);
            prop_assert_eq!(counts.total(), 0);
            prop_assert!(classes.iter().all(|c| *c == Normal));
        }
    }
}

//! What `oslab run` shows while it measures: on a terminal, one live line per experiment (what
//! is running, samples so far, the current half-width of the median's CI against the target,
//! elapsed time); elsewhere, plain lines when each experiment ends.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::analysis;
use crate::model::Sample;

/// How often the live CI is recomputed (every this many samples), and with how many
/// resamples: a rough view of convergence, not the stored figure.
const CI_EVERY: usize = 10;
const CI_RESAMPLES: usize = 200;

/// How often the live line redraws between samples (its elapsed time): once a second. The
/// ticker is a thread of oslab's beside the processes it measures; at indicatif's usual 8–10
/// a second it would move where the scheduler puts an unpinned pair, as the harness's own
/// 100 ms wake-ups moved unixbench.context1 with one copy (docs/unixbench.md, "The harness
/// asleep while its worker measures"), and a run at a terminal would measure otherwise than
/// the same run piped.
const TICK: Duration = Duration::from_secs(1);

pub struct Progress {
    interactive: bool,
    precision: f64,
    bar: Option<ProgressBar>,
    label: String,
    ci: Option<f64>,
}

impl Progress {
    /// `interactive`: stderr is a terminal. `precision`: the run's target (a fraction).
    pub fn new(interactive: bool, precision: f64) -> Progress {
        Progress {
            interactive,
            precision,
            bar: None,
            label: String::new(),
            ci: None,
        }
    }

    /// An experiment starts.
    pub fn start(&mut self, label: String) {
        self.ci = None;
        if self.interactive {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_message(format!("{label} setting up"));
            bar.enable_steady_tick(TICK);
            self.bar = Some(bar);
        }
        self.label = label;
    }

    /// A sample arrived; `samples` are all of this experiment's so far.
    pub fn sample(&mut self, samples: &[Sample]) {
        let Some(bar) = &self.bar else { return };
        let n = samples.len();
        if n >= 2 && n.is_multiple_of(CI_EVERY) {
            let values: Vec<f64> = samples.iter().map(|s| s.ns_per_op).collect();
            if let (Some(m), Some((lo, hi))) = (
                analysis::median(&values),
                analysis::median_ci(&values, 0.95, CI_RESAMPLES, n as u64),
            ) && m != 0.0
            {
                self.ci = Some((hi - lo) / 2.0 / m.abs());
            }
        }
        let ci = self
            .ci
            .map_or("…".to_string(), |c| format!("±{:.2}%", c * 100.0));
        bar.set_message(format!(
            "{}  {n} samples  CI {ci} (target ±{}%)",
            self.label,
            super::format::sig3(self.precision * 100.0)
        ));
    }

    /// The experiment ended: replace the live line with its summary.
    pub fn finish(&mut self, line: &str) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        crate::say!("{line}");
    }
}

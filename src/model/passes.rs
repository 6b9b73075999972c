//! Timed passes: a configuration sampled as UnixBench samples its tests, each sample one pass
//! that counts loops for a fixed wall-clock time (`--suite unixbench`: ten passes of 10 s for
//! the short loops, three of 30 s or 60 s for the long ones), instead of oslab's many sized
//! batches. A result so sampled carries the harness parameter `passes` (`10x10s`), which names
//! the configuration everywhere, as `copies` does (`model::copies`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The parameter holding the passes.
pub const PASSES: &str = "passes";

/// `count` passes of `seconds` each.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Passes {
    pub count: u32,
    pub seconds: f64,
}

impl Passes {
    /// `10x10s`, `3x0.1s`.
    pub fn name(self) -> String {
        format!("{}x{}s", self.count, self.seconds)
    }

    /// The inverse of `name`; `None` for anything else (no pass, no time, or over a day).
    pub fn parse(text: &str) -> Option<Passes> {
        let (count, seconds) = text.strip_suffix('s')?.split_once('x')?;
        let count: u32 = count.parse().ok()?;
        let seconds: f64 = seconds.parse().ok()?;
        ((1..=1000).contains(&count) && seconds > 0.0 && seconds <= 86_400.0)
            .then_some(Passes { count, seconds })
    }

    /// The passes a result's parameters record, if any.
    pub fn of(params: &BTreeMap<String, String>) -> Option<Passes> {
        params.get(PASSES).and_then(|p| Passes::parse(p))
    }

    /// Record these passes in a parameter map.
    pub fn record(self, params: &mut BTreeMap<String, String>) {
        params.insert(PASSES.into(), self.name());
    }

    /// The time the passes take, seconds.
    pub fn total_s(self) -> f64 {
        f64::from(self.count) * self.seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_nonsense_does_not() {
        for p in [
            Passes {
                count: 10,
                seconds: 10.0,
            },
            Passes {
                count: 3,
                seconds: 0.1,
            },
        ] {
            assert_eq!(Passes::parse(&p.name()), Some(p));
        }
        assert_eq!(Passes::parse("10x10s").map(Passes::total_s), Some(100.0));
        for bad in [
            "", "10x10", "x10s", "0x10s", "3x0s", "3x-1s", "3xNaNs", "1001x1s",
        ] {
            assert_eq!(Passes::parse(bad), None, "{bad}");
        }
    }
}

//! The sizes of a memory load (the cgroup's limit, the competitor's region) and how its
//! record writes sizes and memory pressure.

use super::*;

/// The limit, the competitor's region and where they come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// S: the experiment's size, or [`DEFAULT_SIZE`].
    pub experiment: u64,
    /// Whether S came from the experiment.
    pub from_experiment: bool,
    /// The cgroup's hard limit.
    pub limit: u64,
    /// v2 `memory.high`: where the kernel starts throttling and reclaiming.
    pub high: u64,
    /// The competitor's anonymous region.
    pub region: u64,
    /// Half of MemAvailable, when it lowered the limit.
    pub capped_at: Option<u64>,
    /// The headroom asked for (`memory:headroom=P`), percent of S; `None`: the default sizing.
    pub headroom: Option<i32>,
    /// The cgroup may not swap (`memory:swap=off`).
    pub no_swap: bool,
}

impl Sizes {
    /// The cgroup's limits: the competitor's region may be swapped out, and no more (nothing
    /// with `swap=off`).
    pub fn limits(&self) -> Limits {
        Limits {
            max: self.limit,
            high: self.high,
            swap: if self.no_swap { 0 } else { self.region },
        }
    }
}

/// Size the cgroup for an experiment of `size_hint` bytes on a machine with `available` bytes
/// of MemAvailable.
///
/// By default the limit is S plus a quarter of S (at least 64 MiB) for the worker's own
/// memory, capped at half of MemAvailable, and the competitor holds half of it. With a
/// headroom of P% (the reclaim lab's pressure levels) the competitor is as large as S and the
/// limit is S + S + P% of S: what is left beside the competitor is the experiment and P% more
/// (P% less when P is negative), with the worker's own memory (its binary, heap and page
/// tables: tens of MiB) not counted in, so at 0% the experiment does not quite fit. Such a limit is never capped: above half of
/// MemAvailable it is refused, since a smaller one would be another pressure.
pub fn sizes(size_hint: Option<u64>, available: u64, pressure: Pressure) -> Result<Sizes, String> {
    let page = memory::page_size();
    let experiment = size_hint.unwrap_or(DEFAULT_SIZE);
    let cap = available / 2;
    let (wanted, region) = match pressure.headroom {
        None => {
            let wanted = experiment.saturating_add((experiment / 4).max(MIN_HEADROOM));
            (wanted, None)
        }
        Some(percent) => {
            let room = experiment.saturating_mul(u64::from(percent.unsigned_abs())) / 100;
            let both = experiment.saturating_mul(2);
            let wanted = if percent < 0 {
                both.saturating_sub(room)
            } else {
                both.saturating_add(room)
            };
            if wanted > cap {
                return Err(format!(
                    "headroom {percent}% needs a {} cgroup, more than half of MemAvailable ({}): \
                     choose a smaller size",
                    mib(wanted),
                    mib(available)
                ));
            }
            (wanted, Some(experiment))
        }
    };
    let limit = wanted.min(cap) / page * page;
    if let (Some(percent), true) = (pressure.headroom, limit < MIN_LIMIT) {
        return Err(format!(
            "headroom {percent}% of a {} experiment makes a {} cgroup, under the {} a memory \
             load needs: choose a larger size",
            mib(experiment),
            mib(limit),
            mib(MIN_LIMIT)
        ));
    }
    if limit < MIN_LIMIT {
        return Err(format!(
            "MemAvailable is {}: half of it is under the {} a memory load needs",
            mib(available),
            mib(MIN_LIMIT)
        ));
    }
    Ok(Sizes {
        experiment,
        from_experiment: size_hint.is_some(),
        limit,
        high: (limit - limit / 16) / page * page,
        region: region.unwrap_or(limit / 2) / page * page,
        capped_at: (wanted > cap).then_some(cap),
        headroom: pressure.headroom,
        no_swap: pressure.no_swap,
    })
}

/// `832 MiB`, or `1.25 GiB` from 1 GiB on.
pub(super) fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", bytes as f64 / MIB as f64)
    }
}

/// A size with its exact byte count, for figures a reader may want to check against another.
pub(super) fn mib_exact(bytes: u64) -> String {
    format!("{} ({bytes} bytes)", mib(bytes))
}

pub(super) fn describe_psi(psi: &Psi) -> String {
    let mut s = format!(
        "some avg10 {:.2}% (total {} µs)",
        psi.some.avg10, psi.some.total_us
    );
    if let Some(full) = psi.full {
        s.push_str(&format!(
            ", full avg10 {:.2}% (total {} µs)",
            full.avg10, full.total_us
        ));
    }
    s
}

pub(super) fn describe_stall(before: &Psi, after: &Psi) -> String {
    let some = after.some.total_us.saturating_sub(before.some.total_us);
    let mut s = format!("some {} µs", some);
    if let (Some(b), Some(a)) = (before.full, after.full) {
        s.push_str(&format!(
            ", full {} µs",
            a.total_us.saturating_sub(b.total_us)
        ));
    }
    s
}

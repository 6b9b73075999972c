//! What page reclaim did, from its own tracepoints: `vmscan:mm_vmscan_lru_shrink_inactive`
//! (mm/vmscan.c `shrink_inactive_list`, and the multi-generational LRU's `evict_folios`) and
//! `vmscan:mm_vmscan_lru_shrink_active` (`shrink_active_list`), opened with perf_event_open on
//! every CPU for every task, one record per call, their fields summed.
//!
//! These count reclaim wherever it runs — kswapd, direct reclaim, a cgroup meeting its limit —
//! which /proc/vmstat's `pgscan_*`/`pgsteal_*` do not for a cgroup's own reclaim, and which
//! cgroup v1's memory.stat does not count at all. `nr_activate` is what the reclaim lab's patch
//! changes: the pages `shrink_folio_list` found referenced (`PAGEREF_ACTIVATE`) and moved back
//! to the active list instead of reclaiming them.
//!
//! The field offsets come from each tracepoint's format file, so a kernel that moves them is
//! read right. Records are drained at each reading (outside a sample's timed window); a ring
//! buffer that overflowed says so in `vmscan.lost_records`.

use std::collections::BTreeMap;
use std::io;

use perf_event::data::Record;
use perf_event::{Builder, SampleFlag, Sampler};

use super::stacks::{online_cpus, sampled_in_largest};
use super::tracefs;

/// Ring buffer sizes tried in turn, per CPU and event.
const RINGS: [usize; 3] = [1 << 20, 1 << 18, 1 << 16];
const CATEGORY: &str = "vmscan";
const INACTIVE: &str = "mm_vmscan_lru_shrink_inactive";
const ACTIVE: &str = "mm_vmscan_lru_shrink_active";

/// The counters, each the sum of one field of one tracepoint: (stored name, event, field).
pub const FIELDS: [(&str, &str, &str); 8] = [
    ("vmscan.scanned", INACTIVE, "nr_scanned"),
    ("vmscan.reclaimed", INACTIVE, "nr_reclaimed"),
    ("vmscan.activated_anon", INACTIVE, "nr_activate0"),
    ("vmscan.activated_file", INACTIVE, "nr_activate1"),
    ("vmscan.kept_referenced", INACTIVE, "nr_ref_keep"),
    ("vmscan.active_scanned", ACTIVE, "nr_taken"),
    ("vmscan.deactivated", ACTIVE, "nr_deactivated"),
    ("vmscan.active_referenced", ACTIVE, "nr_referenced"),
];

/// Records lost to a full ring buffer: the sums above are short by that many calls.
pub const LOST: &str = "vmscan.lost_records";

/// Where one summed field is in a record.
#[derive(Debug, Clone, Copy)]
struct Field {
    index: usize,
    offset: usize,
    size: usize,
}

/// The two tracepoints open on every CPU, and the sums so far.
pub struct VmscanSums {
    /// (ring buffer, whether it is of the shrink_inactive event).
    buffers: Vec<(Sampler, bool)>,
    inactive: Vec<Field>,
    active: Vec<Field>,
    sums: [u64; FIELDS.len()],
    lost: u64,
}

impl VmscanSums {
    /// Open both tracepoints on every online CPU. `Err`: why not.
    pub fn open() -> Result<VmscanSums, VmscanError> {
        let mut fields = (Vec::new(), Vec::new());
        for (index, (_, event, name)) in FIELDS.iter().enumerate() {
            let (offset, size) = tracefs::field_layout(CATEGORY, event, name)
                .ok_or(VmscanError::NoField { event, field: name })?;
            let field = Field {
                index,
                offset,
                size,
            };
            if *event == INACTIVE {
                fields.0.push(field);
            } else {
                fields.1.push(field);
            }
        }
        let inactive = tracefs::tracepoint(CATEGORY, INACTIVE)?;
        let active = tracefs::tracepoint(CATEGORY, ACTIVE)?;
        let mut buffers = Vec::new();
        for cpu in online_cpus() {
            for (event, is_inactive) in [(inactive, true), (active, false)] {
                let mut builder = Builder::new(event);
                builder
                    .any_pid()
                    .one_cpu(cpu)
                    .sample_period(1)
                    .sample(SampleFlag::RAW)
                    .include_kernel()
                    .enabled(true);
                let sampler = sampled_in_largest(&builder, &RINGS)
                    .map_err(|source| VmscanError::Open { source })?;
                buffers.push((sampler, is_inactive));
            }
        }
        Ok(VmscanSums {
            buffers,
            inactive: fields.0,
            active: fields.1,
            sums: [0; FIELDS.len()],
            lost: 0,
        })
    }

    /// Every sum so far, the records written since the last reading included.
    pub fn read(&mut self) -> BTreeMap<&'static str, u64> {
        for (sampler, is_inactive) in &mut self.buffers {
            let fields = if *is_inactive {
                &self.inactive
            } else {
                &self.active
            };
            while let Some(record) = sampler.next_record() {
                match record.parse_record() {
                    Ok(Record::Sample(sample)) => {
                        if let Some(raw) = sample.raw() {
                            add_fields(&mut self.sums, fields, raw);
                        }
                    }
                    Ok(Record::Lost(lost)) => self.lost += lost.lost,
                    _ => {}
                }
            }
        }
        let mut out: BTreeMap<&'static str, u64> = FIELDS
            .iter()
            .zip(self.sums)
            .map(|((name, _, _), sum)| (*name, sum))
            .collect();
        out.insert(LOST, self.lost);
        out
    }
}

/// Add the `fields` of one raw record to `sums`.
fn add_fields(sums: &mut [u64], fields: &[Field], raw: &[u8]) {
    for f in fields {
        let Some(bytes) = raw.get(f.offset..f.offset + f.size) else {
            continue;
        };
        let value = match f.size {
            4 => bytes.try_into().map(u32::from_ne_bytes).map(u64::from),
            8 => bytes.try_into().map(u64::from_ne_bytes),
            _ => continue,
        };
        if let (Ok(v), Some(sum)) = (value, sums.get_mut(f.index)) {
            *sum = sum.saturating_add(v);
        }
    }
}

/// Why perf_event_open refused, with what would allow it.
/// Why the vmscan tracepoints could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum VmscanError {
    #[error("the {CATEGORY}:{event} tracepoint has no field {field} on this kernel")]
    NoField {
        event: &'static str,
        field: &'static str,
    },
    #[error(transparent)]
    Tracefs(#[from] tracefs::TracefsError),
    #[error(
        "perf_event_open of the {CATEGORY} tracepoints: {source}{}",
        hint(source)
    )]
    Open { source: io::Error },
}

/// What a refused perf_event_open of every task's tracepoints needs.
fn hint(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (tracepoints on every task need root, or CAP_PERFMON with perf_event_paranoid \
             at most 0)"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_four_and_eight_bytes_are_summed() {
        let fields = [
            Field {
                index: 0,
                offset: 16,
                size: 8,
            },
            Field {
                index: 2,
                offset: 64,
                size: 4,
            },
        ];
        let mut raw = vec![0u8; 96];
        raw[16..24].copy_from_slice(&32u64.to_ne_bytes());
        raw[64..68].copy_from_slice(&7u32.to_ne_bytes());
        let mut sums = [0u64; FIELDS.len()];
        add_fields(&mut sums, &fields, &raw);
        add_fields(&mut sums, &fields, &raw);
        assert_eq!(sums[0], 64);
        assert_eq!(sums[2], 14);
        // A short record adds nothing.
        add_fields(&mut sums, &fields, &raw[..20]);
        assert_eq!(sums[0], 64);
    }

    #[test]
    fn reclaim_in_a_cgroup_is_counted_where_root_may_trace() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let mut sums = match VmscanSums::open() {
            Ok(s) => s,
            Err(why) => {
                eprintln!("vmscan tracepoints: {why}");
                return;
            }
        };
        let first = sums.read();
        assert_eq!(first.len(), FIELDS.len() + 1);
        // Cumulative: a second reading never goes down.
        let second = sums.read();
        for (name, value) in &first {
            assert!(second[name] >= *value, "{name}");
        }
    }
}

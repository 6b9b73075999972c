//! perf_event counters around every sample (perf_event_open(2)).
//!
//! Events are opened as small groups so that the two halves of a ratio (accesses and misses)
//! share one time window; each group is read with time_enabled/time_running and scaled when
//! the PMU multiplexed it (stress-ng `core-perf.c` and `perf stat` do the same). Hardware
//! events go in pairs because a PMU has only a few general-purpose counters: one group of ten
//! would never be scheduled at all.
//!
//! An event this machine cannot count (no PMU: ENOENT) or may not count (perf_event_paranoid:
//! EACCES) is recorded once as unsupported with the reason and never fails the run. Software
//! events include the kernel: counted in user space only, context switches and faults read 0
//! (FINDINGS). Hardware events fall back to user space only when the kernel side is refused,
//! and say so.

use std::collections::BTreeMap;
use std::io;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter, Group};

use crate::model::errno::linux_text;
use crate::model::{CounterStatus, CounterValue};

/// One event oslab knows how to count.
#[derive(Debug, Clone, Copy)]
enum Event {
    Software(Software),
    /// perf's generic events (arm64 counts by Arm's events instead, see `Arm`).
    #[cfg_attr(target_arch = "aarch64", allow(dead_code))]
    Hardware(Hardware),
    #[cfg_attr(target_arch = "aarch64", allow(dead_code))]
    Cache(CacheId, CacheOp, CacheResult),
    /// A tracepoint by category and name, e.g. `raw_syscalls:sys_enter`.
    Tracepoint(&'static str, &'static str),
    /// arm64: the Arm event of the counter's name on the pinned CPU's own PMU (`arm64`).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    Arm,
}

#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
mod arm64;

/// The software events, counted around every sample on every machine.
const SOFTWARE: &[(&str, Event)] = &[
    ("task-clock", Event::Software(Software::TASK_CLOCK)),
    ("page-faults", Event::Software(Software::PAGE_FAULTS)),
    ("minor-faults", Event::Software(Software::PAGE_FAULTS_MIN)),
    ("major-faults", Event::Software(Software::PAGE_FAULTS_MAJ)),
    (
        "context-switches",
        Event::Software(Software::CONTEXT_SWITCHES),
    ),
    ("cpu-migrations", Event::Software(Software::CPU_MIGRATIONS)),
];

/// The groups opened around every sample, by perf's names for the events.
#[cfg(not(target_arch = "aarch64"))]
const GROUPS: &[&[(&str, Event)]] = &[
    SOFTWARE,
    &[
        ("cycles", Event::Hardware(Hardware::CPU_CYCLES)),
        ("instructions", Event::Hardware(Hardware::INSTRUCTIONS)),
    ],
    &[
        (
            "L1-dcache-loads",
            Event::Cache(CacheId::L1D, CacheOp::READ, CacheResult::ACCESS),
        ),
        (
            "L1-dcache-load-misses",
            Event::Cache(CacheId::L1D, CacheOp::READ, CacheResult::MISS),
        ),
    ],
    &[
        (
            "L1-dcache-stores",
            Event::Cache(CacheId::L1D, CacheOp::WRITE, CacheResult::ACCESS),
        ),
        (
            "L1-dcache-store-misses",
            Event::Cache(CacheId::L1D, CacheOp::WRITE, CacheResult::MISS),
        ),
    ],
    &[
        (
            "dTLB-loads",
            Event::Cache(CacheId::DTLB, CacheOp::READ, CacheResult::ACCESS),
        ),
        (
            "dTLB-load-misses",
            Event::Cache(CacheId::DTLB, CacheOp::READ, CacheResult::MISS),
        ),
    ],
    &[
        (
            "dTLB-stores",
            Event::Cache(CacheId::DTLB, CacheOp::WRITE, CacheResult::ACCESS),
        ),
        (
            "dTLB-store-misses",
            Event::Cache(CacheId::DTLB, CacheOp::WRITE, CacheResult::MISS),
        ),
    ],
];

/// arm64: the same counters, each by its Arm event on the pinned CPU's PMU (`arm64`).
#[cfg(target_arch = "aarch64")]
const GROUPS: &[&[(&str, Event)]] = &[
    SOFTWARE,
    &[("cycles", Event::Arm), ("instructions", Event::Arm)],
    &[
        ("L1-dcache-loads", Event::Arm),
        ("L1-dcache-load-misses", Event::Arm),
    ],
    &[
        ("L1-dcache-stores", Event::Arm),
        ("L1-dcache-store-misses", Event::Arm),
    ],
    &[("dTLB-loads", Event::Arm), ("dTLB-load-misses", Event::Arm)],
    &[
        ("dTLB-stores", Event::Arm),
        ("dTLB-store-misses", Event::Arm),
    ],
];

/// Events counted only in untimed batches after the samples, because counting them changes
/// what is timed: while the `raw_syscalls:sys_enter` tracepoint is enabled, every system call
/// (of every task on the machine) takes the kernel's slow path with syscall work — measured
/// here: a raw getppid from 118 to 212 ns, `perf bench syscall basic` from 166 to 300 ns.
const PROBE_GROUPS: &[&[(&str, Event)]] = &[
    // One count per kernel entry through a system call.
    &[("syscalls", Event::Tracepoint("raw_syscalls", "sys_enter"))],
    // One count per task this one creates (fork, vfork, clone of a thread): the proof that a
    // process-creation experiment created what it claims.
    &[("tasks", Event::Tracepoint("sched", "sched_process_fork"))],
];

/// Every counter name, in display order.
pub fn names() -> impl Iterator<Item = &'static str> {
    GROUPS
        .iter()
        .chain(PROBE_GROUPS)
        .flat_map(|g| g.iter().map(|(name, _)| *name))
}

/// A snapshot of one group: (enabled ns, running ns, raw value per member).
#[derive(Debug, Clone, Default)]
pub struct GroupReading {
    enabled_ns: u64,
    running_ns: u64,
    values: Vec<u64>,
}

fn read_group(g: &mut OpenGroup) -> GroupReading {
    let nanos = |d: Option<std::time::Duration>| d.map_or(0, |d| d.as_nanos() as u64);
    match &mut g.events {
        Events::Group(group) => match group.read() {
            Ok(data) => GroupReading {
                enabled_ns: nanos(data.time_enabled()),
                running_ns: nanos(data.time_running()),
                values: g
                    .members
                    .iter()
                    .map(|(_, c)| data.get(c).map_or(0, |e| e.value()))
                    .collect(),
            },
            Err(_) => GroupReading::default(),
        },
        Events::Single(counter) => match counter.read_full() {
            Ok(data) => GroupReading {
                enabled_ns: nanos(data.time_enabled()),
                running_ns: nanos(data.time_running()),
                values: vec![data.count()],
            },
            Err(_) => GroupReading::default(),
        },
    }
}

/// A group of events read together, or one event on its own. A lone event is opened without
/// a group: the `raw_syscalls:sys_enter` tracepoint as a member of a group led by perf's
/// dummy event was measured to read 0 on Linux 6.18, while on its own it counts every call.
enum Events {
    Group(Group),
    Single(Counter),
}

struct OpenGroup {
    events: Events,
    /// The members of a group, to find their values in a group read (empty for one event).
    members: Vec<(&'static str, Counter)>,
    /// Every event's name, in reading order.
    names: Vec<&'static str>,
}

/// The counter groups of one worker, counting the calling thread on any CPU.
pub struct CounterSet {
    groups: Vec<OpenGroup>,
    statuses: Vec<CounterStatus>,
    /// Events opened but found not to count (arm64's unimplemented ones): read with their
    /// group, never reported.
    silent: Vec<&'static str>,
}

impl CounterSet {
    /// Open the groups counted around every sample on the calling thread. Never fails: what
    /// cannot be opened is recorded in `statuses` with the reason.
    pub fn open() -> CounterSet {
        let mut set = CounterSet::open_specs(GROUPS);
        if cfg!(target_arch = "aarch64") {
            set.drop_unimplemented();
        }
        set
    }

    /// arm64: mark unsupported the Arm events that counted nothing over a workload they must
    /// count (`arm64::exercise`): the PMU accepts any event number, implemented or not.
    fn drop_unimplemented(&mut self) {
        let before = self.read_before();
        arm64::exercise();
        let after = self.read_after();
        let counted = self.delta(&before, &after);
        let names = self.groups.iter().flat_map(|g| g.names.iter().copied());
        for name in names.collect::<Vec<_>>() {
            let raw = counted.get(name).and_then(|v| v.value);
            let Some(why) = raw.and_then(|n| arm64::unimplemented(name, n as u64)) else {
                continue;
            };
            if let Some(status) = self.statuses.iter_mut().find(|s| s.name == name) {
                status.supported = false;
                status.reason = Some(why);
            }
            self.silent.push(name);
        }
    }

    /// Open the events counted only in untimed batches after sampling (see `PROBE_GROUPS`),
    /// with the sampled groups too when they were not counted around the samples.
    pub fn open_probes(with_sampled_groups: bool) -> CounterSet {
        let mut set = CounterSet::open_specs(if with_sampled_groups { GROUPS } else { &[] });
        for spec in PROBE_GROUPS {
            set.open_group(spec);
        }
        set.self_test();
        set
    }

    /// No counters at all (an experiment whose groups are counted after sampling).
    pub fn none() -> CounterSet {
        CounterSet::open_specs(&[])
    }

    fn open_specs(specs: &[&[(&'static str, Event)]]) -> CounterSet {
        let mut set = CounterSet {
            groups: Vec::new(),
            statuses: Vec::new(),
            silent: Vec::new(),
        };
        for spec in specs {
            set.open_group(spec);
        }
        set
    }

    fn open_group(&mut self, spec: &[(&'static str, Event)]) {
        let software = spec
            .iter()
            .all(|(_, e)| matches!(e, Event::Software(_) | Event::Tracepoint(..)));
        // Kernel side first; hardware events may retreat to user space only.
        let attempts: &[bool] = if software { &[true] } else { &[true, false] };
        let mut last_error = String::new();
        for &kernel in attempts {
            match open_members(spec, kernel) {
                Ok(group) => {
                    let note = (!kernel).then(|| format!("user space only: {last_error}"));
                    for (name, _) in spec {
                        self.statuses.push(CounterStatus {
                            name: name.to_string(),
                            supported: true,
                            reason: note.clone(),
                        });
                    }
                    self.groups.push(group);
                    return;
                }
                Err(OpenError {
                    member,
                    reason,
                    permission,
                }) => {
                    last_error = reason.clone();
                    // Only a refusal of the kernel side is worth retrying in user space.
                    if !permission {
                        record_unsupported(&mut self.statuses, spec, member, &reason);
                        return;
                    }
                }
            }
        }
        record_unsupported(&mut self.statuses, spec, None, &last_error);
    }

    pub fn statuses(&self) -> &[CounterStatus] {
        &self.statuses
    }

    /// Read every open group before a sample, in order. Reads are one `read(2)` each.
    pub fn read_before(&mut self) -> Vec<GroupReading> {
        self.groups.iter_mut().map(read_group).collect()
    }

    /// Read every open group after a sample, in reverse order, so each group's window holds
    /// as few of the other groups' reads as possible.
    pub fn read_after(&mut self) -> Vec<GroupReading> {
        let mut readings: Vec<GroupReading> =
            self.groups.iter_mut().rev().map(read_group).collect();
        readings.reverse();
        readings
    }

    /// Check that the syscall counter really counts this task before trusting it: a counter
    /// that silently reads 0 would pass "no system call" expectations. (As a member of a group
    /// led by perf's dummy event it did read 0 here; on its own it counts every call.)
    pub fn self_test(&mut self) {
        const CALLS: u64 = 16;
        let Some(index) = self
            .groups
            .iter()
            .position(|g| g.names.contains(&"syscalls"))
        else {
            return;
        };
        let before = read_group(&mut self.groups[index]);
        for _ in 0..CALLS {
            // SAFETY: getppid has no arguments and cannot fail.
            std::hint::black_box(unsafe { libc::getppid() });
        }
        let after = read_group(&mut self.groups[index]);
        let counted = after
            .values
            .first()
            .zip(before.values.first())
            .map_or(0, |(a, b)| a.saturating_sub(*b));
        if counted < CALLS {
            self.groups.remove(index);
            if let Some(status) = self.statuses.iter_mut().find(|s| s.name == "syscalls") {
                status.supported = false;
                status.reason = Some(format!(
                    "raw_syscalls:sys_enter opened but counted {counted} of {CALLS} test calls, so its counts \
                     cannot be trusted here"
                ));
            }
        }
    }

    /// Counts between two snapshots, scaled by enabled/running.
    pub fn delta(
        &self,
        before: &[GroupReading],
        after: &[GroupReading],
    ) -> BTreeMap<String, CounterValue> {
        let mut out = BTreeMap::new();
        for ((g, b), a) in self.groups.iter().zip(before).zip(after) {
            let enabled = a.enabled_ns.saturating_sub(b.enabled_ns);
            let running = a.running_ns.saturating_sub(b.running_ns);
            for (i, name) in g.names.iter().enumerate() {
                let (Some(va), Some(vb)) = (a.values.get(i), b.values.get(i)) else {
                    continue;
                };
                if self.silent.contains(name) {
                    continue;
                }
                let raw = va.saturating_sub(*vb);
                out.insert(name.to_string(), scale(raw, enabled, running));
            }
        }
        out
    }
}

/// Scale a raw count for the time its group was not on the PMU.
pub fn scale(raw: u64, enabled_ns: u64, running_ns: u64) -> CounterValue {
    let value = if running_ns == 0 {
        // Never scheduled during the window: nothing is known, unless the window was empty.
        (enabled_ns == 0).then_some(raw as f64)
    } else if running_ns >= enabled_ns {
        Some(raw as f64)
    } else {
        Some(raw as f64 * enabled_ns as f64 / running_ns as f64)
    };
    CounterValue {
        value,
        raw,
        enabled_ns,
        running_ns,
    }
}

fn record_unsupported(
    statuses: &mut Vec<CounterStatus>,
    spec: &[(&'static str, Event)],
    failed_member: Option<&'static str>,
    reason: &str,
) {
    for (name, _) in spec {
        // A reason about one event is said of that event; its partners were simply not
        // opened. A reason about the machine (no PMU, no permission) holds for all.
        let reason = match failed_member {
            Some(m) if m != *name && reason.contains(m) => {
                format!("not opened: its group partner {m} is unsupported ({reason})")
            }
            _ => reason.to_string(),
        };
        statuses.push(CounterStatus {
            name: name.to_string(),
            supported: false,
            reason: Some(reason),
        });
    }
}

struct OpenError {
    member: Option<&'static str>,
    reason: String,
    /// The kernel refused for permission (EACCES/EPERM), not for lack of the event.
    permission: bool,
}

fn builder_for(
    name: &'static str,
    event: Event,
    include_kernel: bool,
) -> Result<Builder<'static>, OpenError> {
    let mut builder = match event {
        Event::Software(e) => Builder::new(e),
        Event::Hardware(e) => Builder::new(e),
        Event::Cache(which, op, result) => Builder::new(Cache {
            which,
            operation: op,
            result,
        }),
        Event::Arm => Builder::new(arm_event(name).map_err(|reason| OpenError {
            member: Some(name),
            reason,
            permission: false,
        })?),
        Event::Tracepoint(category, event) => Builder::new(
            super::tracefs::tracepoint(category, event).map_err(|reason| OpenError {
                member: Some(name),
                reason: reason.to_string(),
                permission: false,
            })?,
        ),
    };
    builder.exclude_kernel(!include_kernel).exclude_hv(false);
    Ok(builder)
}

/// The Arm event of counter `name` on the PMU of the CPU this thread runs on (pinned).
fn arm_event(name: &str) -> Result<perf_event::events::Dynamic, String> {
    let (_, number) =
        arm64::event_of(name).ok_or_else(|| format!("no Arm event is known for {name}"))?;
    let cpu = super::cpu::current().ok_or("sched_getcpu failed")?;
    let pmu = arm64::pmu_for(std::path::Path::new(arm64::DEVICES), cpu)?;
    arm64::dynamic(&pmu, number)
}

fn open_members(
    spec: &[(&'static str, Event)],
    include_kernel: bool,
) -> Result<OpenGroup, OpenError> {
    let names: Vec<&'static str> = spec.iter().map(|(name, _)| *name).collect();
    if let [(name, event)] = spec {
        let mut counter = builder_for(name, *event, include_kernel)?
            .build()
            .map_err(|e| open_error(Some(name), &e, name))?;
        counter
            .enable()
            .map_err(|e| open_error(Some(name), &e, "enable"))?;
        return Ok(OpenGroup {
            events: Events::Single(counter),
            members: Vec::new(),
            names,
        });
    }
    let mut group = Group::builder()
        .exclude_kernel(!include_kernel)
        .exclude_hv(false)
        .build_group()
        .map_err(|e| open_error(None, &e, "group leader"))?;
    let mut members = Vec::new();
    for (name, event) in spec {
        let builder = builder_for(name, *event, include_kernel)?;
        let counter = group
            .add(&builder)
            .map_err(|e| open_error(Some(name), &e, name))?;
        members.push((*name, counter));
    }
    group.enable().map_err(|e| open_error(None, &e, "enable"))?;
    Ok(OpenGroup {
        events: Events::Group(group),
        members,
        names,
    })
}

fn open_error(member: Option<&'static str>, e: &io::Error, what: &str) -> OpenError {
    let errno = e.raw_os_error().unwrap_or(0);
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    let permission = errno == libc::EACCES || errno == libc::EPERM;
    let reason = match errno {
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV => {
            if std::path::Path::new("/sys/bus/event_source/devices/cpu").exists()
                || std::path::Path::new("/sys/bus/event_source/devices/armv8_pmuv3_0").exists()
            {
                format!("this PMU does not count {what} ({})", linux_text(errno))
            } else {
                format!(
                    "no hardware PMU is exposed here ({}; /sys/bus/event_source/devices/cpu is absent, as in most VMs)",
                    linux_text(errno)
                )
            }
        }
        libc::EACCES | libc::EPERM => format!(
            "not permitted: perf_event_paranoid is {paranoid} ({}); run as root or set it to 1 or lower",
            linux_text(errno)
        ),
        libc::ENOSYS => "perf_event_open is not available in this kernel (ENOSYS)".into(),
        libc::EMFILE => "too many open files (EMFILE); raise `ulimit -n`".into(),
        _ => format!("perf_event_open failed for {what}: {e}"),
    };
    OpenError {
        member,
        reason,
        permission,
    }
}

/// Which counters work on this machine, for `oslab env`: opens every group once and closes
/// it again.
pub fn probe() -> BTreeMap<String, crate::model::env::CounterAvailability> {
    let timed = CounterSet::open();
    let probes = CounterSet::open_probes(false);
    let arm_pmu = cfg!(target_arch = "aarch64")
        .then(super::cpu::current)
        .flatten()
        .and_then(|cpu| arm64::pmu_for(std::path::Path::new(arm64::DEVICES), cpu).ok());
    timed
        .statuses()
        .iter()
        .chain(probes.statuses())
        .map(|s| {
            (
                s.name.clone(),
                crate::model::env::CounterAvailability {
                    supported: s.supported,
                    reason: s.reason.clone(),
                    event: arm_pmu.as_ref().and_then(|p| arm64::describe(p, &s.name)),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;

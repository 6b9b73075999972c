//! The perf-records backend: the `raw_syscalls:sys_enter` and `sys_exit` tracepoints opened
//! with perf_event_open on the held command (one event and ring buffer per CPU, inherited into
//! children), a record per call drained while the command runs; and, for either backend, the
//! executable mappings of the traced processes (MMAP2 records).

use std::io;

use perf_event::data::Record;
use perf_event::{Builder, SampleFlag, Sampler};

use super::super::tracefs;
use super::TraceError;
use crate::model::trace::{Mapping, SysEvent, Traced};

/// Ring buffer sizes tried in turn, per CPU and event.
const RINGS: [usize; 3] = [8 << 20, 1 << 20, 1 << 18];

/// Where the fields of the two tracepoints' records are.
pub(super) struct Layout {
    enter: perf_event::events::Tracepoint,
    exit: perf_event::events::Tracepoint,
    enter_id: usize,
    exit_id: usize,
    exit_ret: usize,
}

impl Layout {
    pub(super) fn read() -> Result<Layout, TraceError> {
        let offset = |event: &str, field: &str| {
            tracefs::field_offset("raw_syscalls", event, field).ok_or_else(|| {
                TraceError::Refused(format!(
                    "the raw_syscalls:{event} tracepoint's format has no field {field}"
                ))
            })
        };
        let refused = |e: tracefs::TracefsError| TraceError::Refused(e.to_string());
        Ok(Layout {
            enter: tracefs::tracepoint("raw_syscalls", "sys_enter").map_err(refused)?,
            exit: tracefs::tracepoint("raw_syscalls", "sys_exit").map_err(refused)?,
            enter_id: offset("sys_enter", "id")?,
            exit_id: offset("sys_exit", "id")?,
            exit_ret: offset("sys_exit", "ret")?,
        })
    }
}

/// The register of the user-space instruction pointer in `PERF_SAMPLE_REGS_USER`.
#[cfg(target_arch = "x86_64")]
const IP_REGISTER: u32 = 8; // PERF_REG_X86_IP
#[cfg(target_arch = "aarch64")]
const IP_REGISTER: u32 = 32; // PERF_REG_ARM64_PC

/// One ring buffer: of sys_enter (with the mapping records) or of sys_exit, on one CPU.
pub(super) struct Buffer {
    sampler: Sampler,
    enter: bool,
}

/// The events on every online CPU, following `pid` and what it starts.
pub(super) fn open_all(pid: libc::pid_t, layout: &Layout) -> io::Result<Vec<Buffer>> {
    let mut buffers = Vec::new();
    for cpu in super::super::stacks::online_cpus() {
        for enter in [true, false] {
            let event = if enter { layout.enter } else { layout.exit };
            let mut builder = Builder::new(event);
            builder
                .observe_pid(pid)
                .one_cpu(cpu)
                .inherit(true)
                .sample_period(1)
                .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::RAW)
                .include_kernel()
                .enabled(true);
            if enter {
                builder
                    .sample(
                        SampleFlag::TID
                            | SampleFlag::TIME
                            | SampleFlag::RAW
                            | SampleFlag::REGS_USER,
                    )
                    .sample_regs_user(1 << IP_REGISTER)
                    .mmap(true)
                    .mmap2(true)
                    .sample_id_all(true);
            }
            buffers.push(Buffer {
                sampler: super::super::stacks::sampled_in_largest(&builder, &RINGS)?,
                enter,
            });
        }
    }
    Ok(buffers)
}

impl Buffer {
    /// Take the buffer's records; `layout` `None`: a mappings-only buffer.
    pub(super) fn drain(&mut self, layout: Option<&Layout>, traced: &mut Traced) {
        while let Some(record) = self.sampler.next_record() {
            match record.parse_record() {
                Ok(Record::Sample(sample)) => {
                    let Some(layout) = layout else { continue };
                    let (Some(pid), Some(tid), Some(time), Some(raw)) =
                        (sample.pid(), sample.tid(), sample.time(), sample.raw())
                    else {
                        continue;
                    };
                    let field = |offset: usize| {
                        raw.get(offset..offset + 8)
                            .map(|b| i64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
                    };
                    if self.enter {
                        let ip = sample
                            .regs_user()
                            .and_then(|r| r.regs.first().copied())
                            .unwrap_or(0);
                        if let Some(nr) = field(layout.enter_id) {
                            traced.events.push(SysEvent::Enter {
                                pid,
                                tid,
                                time,
                                nr,
                                ip,
                            });
                        }
                    } else if let (Some(nr), Some(ret)) =
                        (field(layout.exit_id), field(layout.exit_ret))
                    {
                        traced.events.push(SysEvent::Exit {
                            pid,
                            tid,
                            time,
                            nr,
                            ret,
                        });
                    }
                }
                Ok(Record::Mmap2(m)) => traced.mappings.push(Mapping {
                    pid: m.pid,
                    start: m.addr,
                    len: m.len,
                    path: String::from_utf8_lossy(&m.filename).into_owned(),
                }),
                Ok(Record::Lost(lost)) => traced.lost += lost.lost,
                _ => {}
            }
        }
    }
}

/// A dummy event per CPU that only reports the executable mappings of `pid` and its children
/// (the eBPF backend's calling addresses are told apart by them).
pub(super) fn open_mappings(pid: libc::pid_t) -> io::Result<Vec<Buffer>> {
    let mut buffers = Vec::new();
    for cpu in super::super::stacks::online_cpus() {
        let mut builder = Builder::new(perf_event::events::Software::DUMMY);
        builder
            .observe_pid(pid)
            .one_cpu(cpu)
            .inherit(true)
            .sample(SampleFlag::TID | SampleFlag::TIME)
            .mmap(true)
            .mmap2(true)
            .sample_id_all(true)
            .enabled(true);
        buffers.push(Buffer {
            sampler: super::super::stacks::sampled_in_largest(&builder, &RINGS[1..])?,
            enter: true,
        });
    }
    Ok(buffers)
}

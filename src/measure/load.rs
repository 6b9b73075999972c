//! Background load beside an experiment, started by the harness before a worker and stopped
//! after it, so users can compare a quiet machine with a loaded one, as the classic labs do
//! ("idle, light load, full stress"): busy loops pinned to the measured CPU or to every CPU
//! (`--load cpu`, `--load cpu:all`), or a competitor for memory confined with the worker in a
//! memory cgroup (`--load memory`, see [`super::memload`]).
//!
//! Each load process is the binary re-executed as the hidden `oslab load` subcommand. It dies
//! with oslab (`platform::process::die_with_parent_of`: killed if oslab exits or is killed,
//! Ctrl-C included), and the harness kills and reaps it after every experiment.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::memload::{self, MemoryLoad};
use crate::model::LoadRecord;
use crate::model::SetupError;
use crate::platform::{cpu, process};

/// What load to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Load {
    /// One busy loop on the measured CPU.
    Cpu,
    /// One busy loop on every CPU this process may use.
    CpuAll,
    /// A process filling and rewriting memory, in one memory cgroup with the worker.
    Memory,
}

impl Load {
    pub fn parse(text: &str) -> Option<Load> {
        match text {
            "cpu" => Some(Load::Cpu),
            "cpu:all" => Some(Load::CpuAll),
            "memory" => Some(Load::Memory),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Load::Cpu => "cpu",
            Load::CpuAll => "cpu:all",
            Load::Memory => "memory",
        }
    }

    /// The CPUs that get a busy loop, given the measured CPU.
    pub fn cpus(&self, measured: Option<usize>) -> Vec<usize> {
        match self {
            Load::Cpu => measured.into_iter().collect(),
            Load::CpuAll => cpu::allowed(),
            Load::Memory => Vec::new(),
        }
    }
}

/// Running load processes; dropping this kills and reaps them (and removes a memory load's
/// cgroup).
pub struct Running {
    kind: &'static str,
    children: Vec<Child>,
    details: Vec<(String, String)>,
    memory: Option<MemoryLoad>,
}

impl Running {
    /// Start `load` beside an experiment pinned to `measured`. A memory load puts its
    /// competitor on `other` (the CPU not measured) and sizes its cgroup from `size_hint`, the
    /// experiment's `size` parameter, and is `Unsupported` where no memory cgroup can be made.
    pub fn start(
        load: &Load,
        measured: Option<usize>,
        other: Option<usize>,
        size_hint: Option<u64>,
    ) -> Result<Running, SetupError> {
        if *load == Load::Memory {
            return Ok(Running {
                kind: load.name(),
                children: Vec::new(),
                details: Vec::new(),
                memory: Some(MemoryLoad::start(size_hint, measured, other)?),
            });
        }
        let cpus = load.cpus(measured);
        let mut running = Running::busy_loops(&cpus)
            .map_err(|e| SetupError::Failed(format!("cannot start a busy loop: {e}")))?;
        running.kind = load.name();
        running
            .details
            .push(("busy loops on CPUs".into(), cpu::format_list(&cpus)));
        Ok(running)
    }

    /// The `cgroup.procs` file the worker must join first, for a memory load.
    pub fn cgroup_procs(&self) -> Option<PathBuf> {
        self.memory.as_ref().map(MemoryLoad::cgroup_procs)
    }

    /// What the load was and what it recorded, once the experiment is over.
    pub fn record(&self) -> LoadRecord {
        let mut details = self.details.clone();
        if let Some(memory) = &self.memory {
            details.extend(memory.record());
        }
        LoadRecord {
            kind: self.kind.to_string(),
            details,
        }
    }

    /// Start one busy loop per CPU in `cpus`.
    fn busy_loops(cpus: &[usize]) -> std::io::Result<Running> {
        let exe = std::env::current_exe()?;
        let parent = std::process::id().to_string();
        let mut running = Running {
            kind: "cpu",
            children: Vec::new(),
            details: Vec::new(),
            memory: None,
        };
        for cpu in cpus {
            let child = Command::new(&exe)
                .args(["load", "--cpu", &cpu.to_string(), "--parent", &parent])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            running.children.push(child);
        }
        Ok(running)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Entry point of `oslab load`: the memory competitor when `memory` is given (see
/// [`memload::competitor_main`]), else a busy loop on `cpu`.
pub fn main(
    cpu: Option<usize>,
    memory: Option<u64>,
    cgroup_procs: Option<&Path>,
    parent: u32,
) -> i32 {
    match (memory, cpu) {
        (Some(bytes), _) => memload::competitor_main(bytes, cpu, cgroup_procs, parent),
        (None, Some(cpu)) => busy_loop(cpu, parent),
        (None, None) => 2,
    }
}

/// Pin to `cpu_index` and spin until killed or orphaned.
fn busy_loop(cpu_index: usize, parent: u32) -> i32 {
    // The parent may have died before this process was tied to it: then nobody would stop
    // it.
    if !process::die_with_parent_of(parent) {
        return 1;
    }
    if cpu::pin(&[cpu_index]).is_err() {
        return 1;
    }
    let mut x: u64 = 0;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_names_and_cpus() {
        assert_eq!(Load::parse("cpu"), Some(Load::Cpu));
        assert_eq!(Load::parse("cpu:all"), Some(Load::CpuAll));
        assert_eq!(Load::parse("memory"), Some(Load::Memory));
        assert_eq!(Load::parse("io"), None);
        assert_eq!(Load::Cpu.cpus(Some(3)), vec![3]);
        assert_eq!(Load::CpuAll.cpus(None), cpu::allowed());
    }
}

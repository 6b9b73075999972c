//! Background load beside an experiment, started by the harness before a worker and stopped
//! after it, so users can compare a quiet machine with a loaded one, as the classic labs do
//! ("idle, light load, full stress"): busy loops pinned to the measured CPU or to every CPU
//! (`--load cpu`, `--load cpu:all`), a competitor for memory confined with the worker in a
//! memory cgroup (`--load memory`, see [`super::memload`]), or buffered writes with fsync and
//! reads on the device of `--dir` (`--load io`, see [`super::ioload`]).
//!
//! Each load process is the binary re-executed as the hidden `oslab load` subcommand. It dies
//! with oslab (`platform::process::die_with_parent_of`: killed if oslab exits or is killed,
//! Ctrl-C included), and the harness kills and reaps it after every experiment.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use tempfile::TempDir;

use super::ioload;
use super::memload::{self, MemoryLoad};
pub use super::pressure::Pressure;
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
    Memory(Pressure),
    /// A process writing (with fsync) and reading a file on `--dir`'s device.
    Io,
}

impl Load {
    /// `cpu`, `cpu:all`, `memory` (with options: `memory:headroom=10,swap=off`) or `io`.
    pub fn parse(text: &str) -> Option<Load> {
        match text {
            "cpu" => Some(Load::Cpu),
            "cpu:all" => Some(Load::CpuAll),
            "memory" => Some(Load::Memory(Pressure::default())),
            "io" => Some(Load::Io),
            _ => Pressure::parse(text.strip_prefix("memory:")?).map(Load::Memory),
        }
    }

    /// The name it is given by, options included.
    pub fn name(&self) -> String {
        match self {
            Load::Cpu => "cpu".into(),
            Load::CpuAll => "cpu:all".into(),
            Load::Memory(p) => match p.options() {
                Some(options) => format!("memory:{options}"),
                None => "memory".into(),
            },
            Load::Io => "io".into(),
        }
    }

    /// The CPUs that get a busy loop, given the measured CPU.
    pub fn cpus(&self, measured: Option<usize>) -> Vec<usize> {
        match self {
            Load::Cpu => measured.into_iter().collect(),
            Load::CpuAll => cpu::allowed(),
            Load::Memory(_) | Load::Io => Vec::new(),
        }
    }
}

/// Running load processes; dropping this kills and reaps them (and removes a memory load's
/// cgroup).
pub struct Running {
    kind: String,
    children: Vec<Child>,
    details: Vec<(String, String)>,
    memory: Option<MemoryLoad>,
    /// An I/O load's directory (its file and statistics), removed after the load is killed.
    io_dir: Option<TempDir>,
}

impl Running {
    /// Start `load` beside an experiment pinned to `measured`. A memory load puts its
    /// competitor on `other` (the CPU not measured) and sizes its cgroup from `size_hint`, the
    /// experiment's `size` parameter, and is `Unsupported` where no memory cgroup can be made.
    /// An I/O load works in `io_dir` (made by the harness in `--dir`), on `other`.
    pub fn start(
        load: &Load,
        (measured, other): (Option<usize>, Option<usize>),
        size_hint: Option<u64>,
        io_dir: Option<TempDir>,
    ) -> Result<Running, SetupError> {
        match load {
            Load::Memory(pressure) => {
                let mut running = Running::new(load.name());
                running.memory = Some(MemoryLoad::start(size_hint, *pressure, measured, other)?);
                return Ok(running);
            }
            Load::Io => return Running::io(other, io_dir),
            Load::Cpu | Load::CpuAll => {}
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

    fn new(kind: String) -> Running {
        Running {
            kind,
            children: Vec::new(),
            details: Vec::new(),
            memory: None,
            io_dir: None,
        }
    }

    /// The I/O load: one process writing and reading in `dir`, pinned to `cpu` if any.
    fn io(cpu: Option<usize>, dir: Option<TempDir>) -> Result<Running, SetupError> {
        let dir = dir.ok_or_else(|| SetupError::Failed("no directory for the I/O load".into()))?;
        if cfg!(windows) {
            return Err(SetupError::Unsupported(
                "not built for Windows yet (its file cache is dropped with posix_fadvise)".into(),
            ));
        }
        let failed = |e: std::io::Error| SetupError::Failed(format!("cannot start it: {e}"));
        let exe = std::env::current_exe().map_err(failed)?;
        let mut command = Command::new(exe);
        command.args(["load", "--parent", &std::process::id().to_string()]);
        command.arg("--io").arg(dir.path());
        if let Some(cpu) = cpu {
            command.args(["--cpu", &cpu.to_string()]);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(failed)?;
        let mut running = Running::new("io".into());
        running.children.push(child);
        running.details.push((
            "writes and reads".into(),
            format!(
                "a {} MiB file in {}",
                ioload::FILE_BYTES >> 20,
                dir.path().parent().unwrap_or(dir.path()).display()
            ),
        ));
        if let Some(cpu) = cpu {
            running.details.push(("on CPU".into(), cpu.to_string()));
        }
        running.io_dir = Some(dir);
        Ok(running)
    }

    /// What the load was and what it recorded, once the experiment is over.
    pub fn record(&self) -> LoadRecord {
        let mut details = self.details.clone();
        if let Some(memory) = &self.memory {
            details.extend(memory.record());
        }
        if let Some(dir) = &self.io_dir {
            match ioload::read_stats(dir.path()) {
                Some(stats) => details.extend(stats.details()),
                None => details.push((
                    "achieved".into(),
                    "nothing reported yet (it reports every 0.1 s)".into(),
                )),
            }
        }
        LoadRecord {
            kind: self.kind.clone(),
            details,
        }
    }

    /// Start one busy loop per CPU in `cpus`.
    fn busy_loops(cpus: &[usize]) -> std::io::Result<Running> {
        let exe = std::env::current_exe()?;
        let parent = std::process::id().to_string();
        let mut running = Running::new("cpu".into());
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
        // Only now that its writer is gone.
        drop(self.io_dir.take());
    }
}

/// Entry point of `oslab load`: the memory competitor when `memory` is given (see
/// [`memload::competitor_main`]), the I/O load in `io` (pinned to `cpu` if given), else a
/// busy loop on `cpu`.
pub fn main(
    cpu: Option<usize>,
    (memory, io): (Option<u64>, Option<&Path>),
    cgroup_procs: Option<&Path>,
    parent: u32,
) -> i32 {
    match (memory, io, cpu) {
        (Some(bytes), _, _) => memload::competitor_main(bytes, cpu, cgroup_procs, parent),
        (None, Some(dir), _) => io_load(dir, cpu, parent),
        (None, None, Some(cpu)) => busy_loop(cpu, parent),
        (None, None, None) => 2,
    }
}

/// Tie to the parent, pin if asked, and write and read in `dir` until killed.
fn io_load(dir: &Path, cpu: Option<usize>, parent: u32) -> i32 {
    if !process::die_with_parent_of(parent) {
        return 1;
    }
    if cpu.is_some_and(|c| cpu::pin(&[c]).is_err()) {
        return 1;
    }
    ioload::main(dir)
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
        assert_eq!(
            Load::parse("memory"),
            Some(Load::Memory(Pressure::default()))
        );
        let tight = Load::parse("memory:headroom=0,swap=off").unwrap();
        assert_eq!(
            tight,
            Load::Memory(Pressure {
                headroom: Some(0),
                no_swap: true
            })
        );
        assert_eq!(tight.name(), "memory:headroom=0%,swap=off");
        assert_eq!(Load::parse(&tight.name()), Some(tight));
        let short = Load::parse("memory:headroom=-25").unwrap();
        assert_eq!(short.name(), "memory:headroom=-25%");
        for bad in [
            "memory:",
            "memory:headroom",
            "memory:headroom=-95",
            "memory:swap=maybe",
        ] {
            assert_eq!(Load::parse(bad), None, "{bad}");
        }
        assert_eq!(Load::parse("io"), Some(Load::Io));
        assert_eq!(Load::parse("disk"), None);
        assert_eq!(Load::Cpu.cpus(Some(3)), vec![3]);
        assert_eq!(Load::CpuAll.cpus(None), cpu::allowed());
    }
}

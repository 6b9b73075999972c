//! Background load beside an experiment (`--load cpu`, `--load cpu:all`): busy-looping
//! processes pinned to the measured CPU or to every CPU, started by the harness before a
//! worker and stopped after it, so users can compare a quiet machine with a loaded one, as the
//! classic labs do ("idle, light load, full stress").
//!
//! Each load process is the binary re-executed as the hidden `oslab load` subcommand. It dies
//! with oslab: `PR_SET_PDEATHSIG` kills it if oslab exits or is killed (Ctrl-C included), and
//! the harness kills and reaps it after every experiment.

use std::process::{Child, Command, Stdio};

use super::cpu;

/// What load to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Load {
    /// One busy loop on the measured CPU.
    Cpu,
    /// One busy loop on every CPU this process may use.
    CpuAll,
}

impl Load {
    pub fn parse(text: &str) -> Option<Load> {
        match text {
            "cpu" => Some(Load::Cpu),
            "cpu:all" => Some(Load::CpuAll),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Load::Cpu => "cpu",
            Load::CpuAll => "cpu:all",
        }
    }

    /// The CPUs that get a busy loop, given the measured CPU.
    pub fn cpus(&self, measured: Option<usize>) -> Vec<usize> {
        match self {
            Load::Cpu => measured.into_iter().collect(),
            Load::CpuAll => cpu::allowed(),
        }
    }
}

/// Running load processes; dropping this kills and reaps them.
pub struct Running {
    children: Vec<Child>,
}

impl Running {
    /// Start one busy loop per CPU in `cpus`.
    pub fn start(cpus: &[usize]) -> std::io::Result<Running> {
        let exe = std::env::current_exe()?;
        let parent = std::process::id().to_string();
        let mut running = Running {
            children: Vec::new(),
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

/// Entry point of `oslab load`: pin to `cpu` and spin until killed or orphaned.
pub fn main(cpu_index: usize, parent: u32) -> i32 {
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag on this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    // The parent may have died before the flag was set: then there is nobody to stop us.
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } as u32 != parent {
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
        assert_eq!(Load::parse("memory"), None);
        assert_eq!(Load::Cpu.cpus(Some(3)), vec![3]);
        assert_eq!(Load::CpuAll.cpus(None), cpu::allowed());
    }
}

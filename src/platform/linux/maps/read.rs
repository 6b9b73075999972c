//! Inspecting a process: a snapshot of its map, the default child of oslab, and the ASLR note from a second child.

use super::*;

/// One process's classified memory map.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub pid: u32,
    /// The command line (arguments joined by spaces), else the short name from `comm`.
    pub command: String,
    /// The target of `/proc/PID/exe`, when it could be read.
    pub exe: Option<String>,
    /// `ADDR_NO_RANDOMIZE` from `/proc/PID/personality` (set by `setarch -R` and debuggers):
    /// this process's addresses are not randomized whatever the sysctl says.
    pub no_randomize: Option<bool>,
    pub mappings: Vec<Mapping>,
}

impl Snapshot {
    /// The base address of a region that ASLR may move: the lowest executable mapping, the
    /// top of the stack (its start moves as it grows), the start of the others.
    pub fn base(&self, region: AslrRegion) -> Option<u64> {
        let mut of_kind = self.mappings.iter().filter(|m| m.kind == region.kind());
        match region {
            AslrRegion::Stack => of_kind.map(|m| m.region.end).max(),
            _ => of_kind.next().map(|m| m.region.start),
        }
    }

    /// The mapping holding `address`.
    pub fn containing(&self, address: u64) -> Option<&Mapping> {
        self.mappings
            .iter()
            .find(|m| m.region.start <= address && address < m.region.end)
    }
}

/// Read and classify the memory map of `pid`. A process that does not exist, cannot be read
/// by this user or has no address space is a [`UserError`] naming the fix.
pub fn read(pid: u32) -> Result<Snapshot> {
    let dir = format!("/proc/{pid}");
    let smaps = match std::fs::read(format!("{dir}/smaps")) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UserError::BadOption(format!(
                "no process {pid}; pass the PID of a running process (`ps -e` lists them), or no \
                 PID to map a fresh child of oslab"
            ))
            .into());
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(UserError::BadOption(format!(
                "cannot read {dir}/smaps (permission denied): another user's memory map needs \
                 ptrace access; run oslab as that process's user or as root"
            ))
            .into());
        }
        Err(e) => return Err(anyhow!(e).context(format!("cannot read {dir}/smaps"))),
    };
    let regions = parse_smaps(&smaps).with_context(|| format!("cannot parse {dir}/smaps"))?;
    let comm = std::fs::read_to_string(format!("{dir}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default();
    if regions.is_empty() {
        return Err(UserError::BadOption(format!(
            "process {pid} ({comm}) has no memory map: it is a kernel thread or has exited; pass \
             the PID of a user process"
        ))
        .into());
    }
    let exe = std::fs::read_link(format!("{dir}/exe"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let command = std::fs::read(format!("{dir}/cmdline"))
        .ok()
        .map(|c| {
            c.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(String::from_utf8_lossy)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or(comm);
    let no_randomize = std::fs::read_to_string(format!("{dir}/personality"))
        .ok()
        .and_then(|p| u64::from_str_radix(p.trim(), 16).ok())
        .map(|p| p & libc::ADDR_NO_RANDOMIZE as u64 != 0);
    Ok(Snapshot {
        pid,
        command,
        mappings: classify(regions, exe.as_deref()),
        exe,
        no_randomize,
    })
}

/// The regions whose base addresses the ASLR note compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AslrRegion {
    Executable,
    Heap,
    Stack,
    Vdso,
    Vsyscall,
}

impl AslrRegion {
    pub const ALL: [AslrRegion; 5] = [
        AslrRegion::Executable,
        AslrRegion::Heap,
        AslrRegion::Stack,
        AslrRegion::Vdso,
        AslrRegion::Vsyscall,
    ];

    pub fn kind(self) -> Kind {
        match self {
            AslrRegion::Executable => Kind::Executable,
            AslrRegion::Heap => Kind::Heap,
            AslrRegion::Stack => Kind::Stack,
            AslrRegion::Vdso => Kind::Vdso,
            AslrRegion::Vsyscall => Kind::Vsyscall,
        }
    }
}

/// One region's base in the shown child and in a second fresh child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseComparison {
    pub region: AslrRegion,
    pub first: Option<u64>,
    pub second: Option<u64>,
}

/// What oslab knows about address-space randomization for the target.
#[derive(Debug, Clone)]
pub struct Aslr {
    /// `/proc/sys/kernel/randomize_va_space`: 0 off, 1 stack, mmap area, vDSO and PIE
    /// executable, 2 also the heap (brk).
    pub randomize_va_space: Option<u8>,
    /// Bases in two fresh children; empty when a PID was given (that process cannot be
    /// started again).
    pub comparison: Vec<BaseComparison>,
}

/// Everything `oslab maps` shows.
#[derive(Debug, Clone)]
pub struct Report {
    pub snapshot: Snapshot,
    /// The address of the fresh child's malloc block ([`CHILD_BLOCK_BYTES`]); `None` when a
    /// PID was given.
    pub child_block: Option<u64>,
    pub aslr: Aslr,
}

/// `oslab maps PID`.
pub fn inspect_pid(pid: u32) -> Result<Report> {
    Ok(Report {
        snapshot: read(pid)?,
        child_block: None,
        aslr: Aslr {
            randomize_va_space: randomize_va_space(),
            comparison: Vec::new(),
        },
    })
}

/// `oslab maps`: map a fresh child, and a second one to see what ASLR moved.
pub fn inspect_child() -> Result<Report> {
    let (first, block) = ChildProcess::spawn()?;
    let (second, _) = ChildProcess::spawn()?;
    let snapshot = read(first.pid())?;
    let other = read(second.pid())?;
    first.finish()?;
    second.finish()?;
    let comparison = AslrRegion::ALL
        .iter()
        .map(|&region| BaseComparison {
            region,
            first: snapshot.base(region),
            second: other.base(region),
        })
        .collect();
    Ok(Report {
        snapshot,
        child_block: Some(block),
        aslr: Aslr {
            randomize_va_space: randomize_va_space(),
            comparison,
        },
    })
}

pub(super) fn randomize_va_space() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A running `oslab maps-child`, killed and reaped when dropped before [`finish`].
///
/// [`finish`]: ChildProcess::finish
pub(super) struct ChildProcess {
    pub(super) child: std::process::Child,
}

impl ChildProcess {
    /// Start the child and wait until it says its heap block is filled; returns the block's
    /// address with it.
    pub(super) fn spawn() -> Result<(ChildProcess, u64)> {
        let exe = std::env::current_exe().context("cannot find the oslab binary")?;
        let child = Command::new(&exe)
            .arg("maps-child")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {} maps-child", exe.display()))?;
        let mut running = ChildProcess { child };
        let stdout = running
            .child
            .stdout
            .take()
            .context("oslab maps-child has no stdout pipe")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("cannot read from oslab maps-child")?;
        let address = line
            .strip_prefix("ready ")
            .and_then(|a| u64::from_str_radix(a.trim(), 16).ok())
            .ok_or_else(|| {
                anyhow!(
                    "oslab maps-child did not report its heap block (it said {:?})",
                    line.trim_end()
                )
            })?;
        Ok((running, address))
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Close the child's stdin, which ends it, and reap it.
    pub(super) fn finish(mut self) -> Result<()> {
        drop(self.child.stdin.take());
        let status = self
            .child
            .wait()
            .context("cannot wait for oslab maps-child")?;
        if !status.success() {
            return Err(anyhow!("oslab maps-child ended with {status}"));
        }
        Ok(())
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // After finish() the child is reaped: std neither signals nor waits for it again.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Entry point of `oslab maps-child`: fill a heap block, print `ready ADDRESS` (hex), and
/// wait for stdin to close, which happens when the parent is done or dies.
pub fn child_main() -> i32 {
    // A non-zero fill touches every page: calloc-style zeroing could skip fresh heap pages
    // and leave them out of RSS.
    let block = std::hint::black_box(vec![0xa5_u8; CHILD_BLOCK_BYTES]);
    let mut out = std::io::stdout().lock();
    if writeln!(out, "ready {:x}", block.as_ptr() as u64)
        .and_then(|()| out.flush())
        .is_err()
    {
        return 1;
    }
    let drained = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    std::hint::black_box(&block);
    i32::from(drained.is_err())
}

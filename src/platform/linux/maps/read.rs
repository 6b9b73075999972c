//! Reading a process's map: `/proc/PID/smaps` with its command line, executable and
//! personality; the ASLR sysctl; this process's own mapping at an address.

use super::*;

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

/// The `kernel.randomize_va_space` sysctl: 0 off, 1 stack, mmap area, vDSO and PIE
/// executable, 2 also the heap (brk); `None` when it cannot be read.
pub fn randomize_va_space() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The mapping of this process that holds `address`, from `/proc/self/smaps` (an experiment
/// asking what the kernel put behind its region: AnonHugePages after a touch).
pub fn own_region_containing(address: u64) -> std::result::Result<Region, RegionError> {
    const SMAPS: &str = "/proc/self/smaps";
    let text = std::fs::read(SMAPS).map_err(|source| RegionError::Read {
        path: SMAPS,
        source,
    })?;
    parse_smaps(&text)
        .map_err(|e| RegionError::Garbled {
            path: SMAPS,
            what: e.to_string(),
        })?
        .into_iter()
        .find(|r| (r.start..r.end).contains(&address))
        .ok_or(RegionError::NoMapping {
            path: SMAPS,
            address,
        })
}

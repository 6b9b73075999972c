//! Memory as the kernel reports it: what is available, the swap, pressure stall information
//! (PSI), a process's peak and resident size, transparent huge pages, and whether the host
//! takes back memory the guest frees (virtio-balloon free page reporting).

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

pub use crate::platform::contract::memory::{MemInfo, Psi, PsiLine};

use procfs::Current;

/// Where the system-wide memory pressure is read: named in messages when it is absent.
pub const PRESSURE_FILE: &str = "/proc/pressure/memory";
/// The transparent-huge-page mode, named in messages.
pub const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
/// Where the kernel says how hard it tries to find a huge page, named in messages.
pub const THP_DEFRAG: &str = "/sys/kernel/mm/transparent_hugepage/defrag";
/// The madvise(2) advice that keeps a region in base pages (no transparent huge pages).
pub const MADV_NO_HUGE_PAGES: Option<libc::c_int> = Some(libc::MADV_NOHUGEPAGE);

/// How a range of anonymous memory is faulted in for writing from user space, and the system
/// call that does it: MADV_POPULATE_WRITE (Linux 5.14; older kernels refuse it with EINVAL).
pub const POPULATE_WRITE_CALL: &str = "madvise(MADV_POPULATE_WRITE)";
pub const POPULATE_WRITE_SYSCALL: &str = "madvise";

/// Fault `[ptr, ptr + len)`, inside one of our writable anonymous mappings, in for writing.
pub fn populate_write(ptr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: the caller's range lies inside its own mapping; the advice only maps pages.
    if unsafe { libc::madvise(ptr.cast(), len, libc::MADV_POPULATE_WRITE) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// MAP_POPULATE and MADV_POPULATE_WRITE exist (the latter from Linux 5.14: the experiments
/// probe it).
pub fn populate_unsupported() -> Option<String> {
    None
}

const VIRTIO_BALLOON: &str = "/sys/bus/virtio/drivers/virtio_balloon";
/// VIRTIO_BALLOON_F_REPORTING: the balloon takes free page reports (virtio 1.2, 5.5.3).
const BALLOON_F_REPORTING: usize = 5;

/// Read /proc/meminfo.
pub fn meminfo() -> io::Result<MemInfo> {
    let m = procfs::Meminfo::current().map_err(io::Error::other)?;
    Ok(MemInfo {
        available: m.mem_available.unwrap_or(m.mem_free),
        swap_total: m.swap_total,
        total: m.mem_total,
    })
}

/// The size of a page, bytes (4096 when the system does not say).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// Parse the PSI format: `some avg10=0.00 avg60=0.00 avg300=0.00 total=0` and a `full` line.
pub fn parse_psi(text: &str) -> Option<Psi> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let kind = words.next();
        let fields: BTreeMap<&str, &str> = words.filter_map(|w| w.split_once('=')).collect();
        let parsed = (|| {
            Some(PsiLine {
                avg10: fields.get("avg10")?.parse().ok()?,
                total_us: fields.get("total")?.parse().ok()?,
            })
        })();
        match kind {
            Some("some") => some = parsed,
            Some("full") => full = parsed,
            _ => {}
        }
    }
    Some(Psi { some: some?, full })
}

pub(crate) fn read_psi(path: &Path) -> Option<Psi> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse_psi(&t))
}

/// The system-wide memory pressure now; `None` without PSI (kernel without CONFIG_PSI, or
/// booted with psi=0).
pub fn system_pressure() -> Option<Psi> {
    read_psi(Path::new(PRESSURE_FILE))
}

/// A field of process `pid`'s /proc/PID/status in bytes (`VmHWM:  1234 kB`): `VmHWM` is its
/// peak resident size, `VmRSS` its resident size now.
pub fn status_bytes(pid: libc::pid_t, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The THP mode the kernel is in: `always`, `madvise` or `never` (the bracketed word), or
/// why it cannot be read.
pub fn thp_mode() -> io::Result<String> {
    let text = std::fs::read_to_string(THP_ENABLED)?;
    parse_thp_mode(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no [mode] in `{}`", text.trim()),
        )
    })
}

/// The bracketed word of `always [madvise] never`.
pub(super) fn parse_thp_mode(text: &str) -> Option<String> {
    let (_, rest) = text.split_once('[')?;
    let (mode, _) = rest.split_once(']')?;
    Some(mode.to_string())
}

/// The virtio balloon device that takes free page reports (`virtio0`), if one is bound.
/// Only then does a host reclaim memory the guest frees.
pub fn free_page_reporting() -> Option<String> {
    std::fs::read_dir(VIRTIO_BALLOON)
        .ok()?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("virtio"))
        .find(|name| {
            std::fs::read_to_string(format!("{VIRTIO_BALLOON}/{name}/features"))
                .is_ok_and(|bits| bits.as_bytes().get(BALLOON_F_REPORTING) == Some(&b'1'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psi_lines() {
        let psi = parse_psi(
            "some avg10=1.50 avg60=0.00 avg300=0.00 total=1234\n\
                 full avg10=0.25 avg60=0.00 avg300=0.00 total=567\n",
        )
        .unwrap();
        assert_eq!(psi.some.avg10, 1.5);
        assert_eq!(psi.some.total_us, 1234);
        assert_eq!(psi.full.map(|f| f.total_us), Some(567));
        let later = parse_psi("some avg10=0 avg60=0 avg300=0 total=2000\n").unwrap();
        assert_eq!(later.full, None);
        assert_eq!(parse_psi(""), None);
    }

    #[test]
    fn thp_modes() {
        assert_eq!(
            parse_thp_mode("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(parse_thp_mode("never"), None);
    }

    #[test]
    fn this_machine() {
        let m = meminfo().expect("/proc/meminfo");
        assert!(m.available > 0 && m.available <= m.total);
        assert!(page_size().is_power_of_two());
        // This process's resident and peak resident sizes (two reads: the resident size may
        // grow between them, so only that both are there is checked).
        let pid = std::process::id() as libc::pid_t;
        for field in ["VmHWM", "VmRSS"] {
            assert!(status_bytes(pid, field).is_some_and(|b| b > 0), "{field}");
        }
        assert_eq!(status_bytes(pid, "NoSuchField"), None);
    }
}

//! Swap: what the machine has (/proc/swaps, zswap), and a temporary swap area for one run
//! (`oslab run --swap SIZE`, root only): a swap file in /var/tmp, or a zram device
//! (`--swap zram:SIZE`), enabled with swapon(2) and removed when the run ends — on Ctrl-C too,
//! since the run returns normally then. Each area oslab makes is labelled `oslab-<pid>` in its
//! swap header, so when oslab itself was killed (kill -9), the next run finds it by the label,
//! sees that its oslab is gone, and switches it off and removes it ([`remove_stale`]).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::memory::page_size;
pub use crate::platform::contract::swap::SwapError;

/// Where a swap file is made.
pub const FILE_DIR: &str = "/var/tmp";
const FILE_PREFIX: &str = "oslab-swap-";
const LABEL_PREFIX: &str = "oslab-";
const ZRAM_CONTROL: &str = "/sys/class/zram-control";
/// The swap header: `version`, `last_page`, `nr_badpages`, `sws_uuid[16]`, `sws_volume[16]`
/// after the 1024 boot bytes (include/linux/swap.h, `union swap_header`), and the magic in the
/// last ten bytes of the first page.
const HEADER_INFO: u64 = 1024;
const LABEL_AT: u64 = HEADER_INFO + 12 + 16;
const MAGIC: &[u8; 10] = b"SWAPSPACE2";

/// One line of /proc/swaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapArea {
    pub path: String,
    /// `file` or `partition`.
    pub kind: String,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub priority: i64,
}

/// The swap areas in use.
pub fn areas() -> Vec<SwapArea> {
    std::fs::read_to_string("/proc/swaps")
        .map(|t| parse_swaps(&t))
        .unwrap_or_default()
}

/// Parse /proc/swaps (its header line skipped; sizes are KiB). A path with spaces is
/// written with `\040`, so splitting on blanks holds.
pub fn parse_swaps(text: &str) -> Vec<SwapArea> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let [path, kind, size, used, priority] = f.as_slice() else {
                return None;
            };
            Some(SwapArea {
                path: path.replace("\\040", " "),
                kind: kind.to_string(),
                size_bytes: size.parse::<u64>().ok()? * 1024,
                used_bytes: used.parse::<u64>().ok()? * 1024,
                priority: priority.parse().ok()?,
            })
        })
        .collect()
}

/// Whether zswap (a compressed cache in front of swap) is on: `None` when the kernel has none.
pub fn zswap() -> Option<bool> {
    let text = std::fs::read_to_string("/sys/module/zswap/parameters/enabled").ok()?;
    Some(matches!(text.trim(), "Y" | "1"))
}

/// The machine's swap in one line, for the environment: each area (a zram device named as
/// one), and zswap.
pub fn describe() -> String {
    let areas = areas();
    let mut parts: Vec<String> = areas
        .iter()
        .map(|a| {
            let kind = if a.path.starts_with("/dev/zram") {
                "zram"
            } else {
                a.kind.as_str()
            };
            let ours = label_of(Path::new(&a.path))
                .filter(|l| l.starts_with(LABEL_PREFIX))
                .map_or(String::new(), |_| ", made by oslab for the run".into());
            format!(
                "{kind} {} {} priority {}{ours}",
                a.path,
                size_text(a.size_bytes),
                a.priority
            )
        })
        .collect();
    if parts.is_empty() {
        parts.push("none".into());
    }
    match zswap() {
        Some(on) => format!(
            "{}; zswap {}",
            parts.join(", "),
            if on { "on" } else { "off" }
        ),
        None => parts.join(", "),
    }
}

/// `64 MiB`, or `1.00 GiB` from 1 GiB on.
fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// The label in the swap header of `path`, if it has one.
fn label_of(path: &Path) -> Option<String> {
    let file = File::open(path).ok()?;
    let mut magic = [0u8; 10];
    file.read_exact_at(&mut magic, page_size() - 10).ok()?;
    if &magic != MAGIC {
        return None;
    }
    let mut label = [0u8; 16];
    file.read_exact_at(&mut label, LABEL_AT).ok()?;
    let end = label.iter().position(|&b| b == 0).unwrap_or(16);
    Some(String::from_utf8_lossy(&label[..end]).into_owned())
}

/// The oslab pid a label names (`oslab-1234`).
fn pid_of(label: &str) -> Option<u32> {
    label.strip_prefix(LABEL_PREFIX)?.parse().ok()
}

/// The oslab pid in the name of a swap file of oslab's (`/var/tmp/oslab-swap-1234`).
fn pid_of_file(path: &Path) -> Option<u32> {
    if path.parent() != Some(Path::new(FILE_DIR)) {
        return None;
    }
    path.file_name()?
        .to_str()?
        .strip_prefix(FILE_PREFIX)?
        .parse()
        .ok()
}

/// Write a swap header for `bytes` of swap, labelled `label`, at the start of `file`.
fn write_header(file: &File, bytes: u64, label: &str) -> io::Result<()> {
    let page = page_size();
    let mut header = vec![0u8; page as usize];
    let pages = bytes / page;
    let last_page = u32::try_from(pages.saturating_sub(1))
        .map_err(|_| io::Error::other("the swap area is too large for one swap header"))?;
    let info = HEADER_INFO as usize;
    header[info..info + 4].copy_from_slice(&1u32.to_ne_bytes());
    header[info + 4..info + 8].copy_from_slice(&last_page.to_ne_bytes());
    // A fresh UUID-like identity: the label is what oslab reads back.
    let seed = (u64::from(std::process::id()) << 32) ^ bytes;
    header[info + 12..info + 20].copy_from_slice(&seed.to_ne_bytes());
    let l = LABEL_AT as usize;
    let name = label.as_bytes();
    header[l..l + name.len().min(15)].copy_from_slice(&name[..name.len().min(15)]);
    header[page as usize - 10..].copy_from_slice(MAGIC);
    file.write_all_at(&header, 0)?;
    file.sync_all()
}

fn swapon(path: &Path) -> io::Result<()> {
    let c =
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(io::Error::other)?;
    // SAFETY: a valid NUL-terminated path; flags 0 (default priority).
    if unsafe { libc::swapon(c.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn swapoff(path: &Path) -> io::Result<()> {
    let c =
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(io::Error::other)?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::swapoff(c.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What kind of temporary swap to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapKind {
    /// A file in [`FILE_DIR`].
    File,
    /// A zram device: compressed RAM, no disk.
    Zram,
}

/// A swap area made for one run; dropping it switches it off and removes it.
pub struct TempSwap {
    path: PathBuf,
    /// The zram device number, for a zram area.
    zram: Option<u32>,
    bytes: u64,
}

impl TempSwap {
    /// Make and enable `bytes` of swap of `kind`, labelled with this process's pid.
    pub fn create(kind: SwapKind, bytes: u64) -> Result<TempSwap, SwapError> {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(SwapError::NotRoot);
        }
        remove_stale();
        let label = format!("{LABEL_PREFIX}{}", std::process::id());
        let swap = match kind {
            SwapKind::File => TempSwap::file(bytes, &label)?,
            SwapKind::Zram => TempSwap::zram_device(bytes, &label)?,
        };
        swapon(&swap.path).map_err(|source| SwapError::Swapon {
            path: swap.path.clone(),
            file: kind == SwapKind::File,
            source,
        })?;
        Ok(swap)
    }

    /// The area's path (a file, or /dev/zramN).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `1.00 GiB swap file /var/tmp/oslab-swap-123`, for the run's settings.
    pub fn describe(&self) -> String {
        format!(
            "{} {} {}",
            size_text(self.bytes),
            if self.zram.is_some() {
                "zram device"
            } else {
                "swap file"
            },
            self.path.display()
        )
    }

    fn file(bytes: u64, label: &str) -> Result<TempSwap, SwapError> {
        let path = Path::new(FILE_DIR).join(format!("{FILE_PREFIX}{}", std::process::id()));
        let swap = TempSwap {
            path: path.clone(),
            zram: None,
            bytes,
        };
        let fail = |source: io::Error| SwapError::Make {
            what: format!("cannot make the swap file {}", path.display()),
            source,
            hint: "",
        };
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(fail)?;
        // Allocated, not sparse: swapon refuses a file with holes.
        // SAFETY: a valid descriptor; mode 0 allocates and extends.
        let len = libc::off_t::try_from(bytes).map_err(|e| fail(io::Error::other(e)))?;
        if unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&file), 0, 0, len) } != 0 {
            return Err(fail(io::Error::last_os_error()));
        }
        write_header(&file, bytes, label).map_err(fail)?;
        Ok(swap)
    }

    fn zram_device(bytes: u64, label: &str) -> Result<TempSwap, SwapError> {
        let make = |what: String, hint| move |source| SwapError::Make { what, source, hint };
        let id: u32 = std::fs::read_to_string(Path::new(ZRAM_CONTROL).join("hot_add"))
            .map_err(make(
                format!("cannot add a zram device ({ZRAM_CONTROL}/hot_add)"),
                "; is the zram module loaded?",
            ))?
            .trim()
            .parse()
            .map_err(|e| {
                SwapError::Zram(format!("{ZRAM_CONTROL}/hot_add gave no device number: {e}"))
            })?;
        let swap = TempSwap {
            path: PathBuf::from(format!("/dev/zram{id}")),
            zram: Some(id),
            bytes,
        };
        std::fs::write(format!("/sys/block/zram{id}/disksize"), bytes.to_string())
            .map_err(make(format!("cannot size /dev/zram{id}"), ""))?;
        let device = OpenOptions::new()
            .write(true)
            .read(true)
            .open(&swap.path)
            .map_err(make(format!("cannot open {}", swap.path.display()), ""))?;
        write_header(&device, bytes, label)
            .map_err(make(format!("cannot write {}", swap.path.display()), ""))?;
        Ok(swap)
    }
}

impl Drop for TempSwap {
    fn drop(&mut self) {
        if let Err(e) = remove(&self.path, self.zram) {
            // Nothing else can report it: swap left behind must not go unnoticed.
            crate::say!("oslab: {e}");
        }
    }
}

/// Switch the area off (if on) and remove it.
fn remove(path: &Path, zram: Option<u32>) -> Result<(), SwapError> {
    let left = |what: String, fix: String| move |source| SwapError::Leftover { what, source, fix };
    let on = areas().iter().any(|a| Path::new(&a.path) == path);
    if on {
        swapoff(path).map_err(left(
            format!("could not switch off the swap area {}", path.display()),
            format!("; run swapoff {}", path.display()),
        ))?;
    }
    match zram {
        Some(id) => {
            let _ = std::fs::write(format!("/sys/block/zram{id}/reset"), "1");
            std::fs::write(Path::new(ZRAM_CONTROL).join("hot_remove"), id.to_string()).map_err(
                left(format!("could not remove /dev/zram{id}"), String::new()),
            )
        }
        None => std::fs::remove_file(path)
            .or_else(|e| match e.kind() {
                io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
            .map_err(left(
                format!("could not remove the swap file {}", path.display()),
                String::new(),
            )),
    }
}

/// Switch off and remove the swap areas oslabs that are gone made: areas in use labelled
/// `oslab-<pid>` whose process is gone, and swap files of theirs left in
/// [`FILE_DIR`]. Quiet: a run must not fail because of another's leftovers, but it says what it
/// removed.
pub fn remove_stale() {
    let gone = |pid: u32| !super::process::is_alive(pid);
    for area in areas() {
        let path = PathBuf::from(&area.path);
        // The header's label, else the name of a swap file of oslab's (a header read back
        // unlabelled once in a test; the area was then removed below without a word).
        let pid = label_of(&path)
            .as_deref()
            .and_then(pid_of)
            .or_else(|| pid_of_file(&path));
        let Some(pid) = pid else {
            continue;
        };
        if !gone(pid) {
            continue;
        }
        let zram = area
            .path
            .strip_prefix("/dev/zram")
            .and_then(|n| n.parse().ok());
        match remove(&path, zram) {
            Ok(()) => crate::say!(
                "oslab: removed the swap area {} a killed oslab (pid {pid}) left",
                area.path
            ),
            Err(e) => crate::say!("oslab: {e}"),
        }
    }
    let Ok(entries) = std::fs::read_dir(FILE_DIR) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        let Some(pid) = pid_of_file(&path) else {
            continue;
        };
        if gone(pid) && remove(&path, None).is_ok() {
            crate::say!(
                "oslab: removed the swap file {} a killed oslab (pid {pid}) left",
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_files_name_their_oslab() {
        assert_eq!(
            pid_of_file(Path::new("/var/tmp/oslab-swap-1234")),
            Some(1234)
        );
        assert_eq!(pid_of_file(Path::new("/var/tmp/oslab-swap-x")), None);
        assert_eq!(pid_of_file(Path::new("/tmp/oslab-swap-1234")), None);
        assert_eq!(pid_of_file(Path::new("/var/tmp/swapfile")), None);
    }

    #[test]
    fn proc_swaps_lines() {
        let areas = parse_swaps(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
             /var/tmp/oslab-swap-12                  file\t\t1048572\t\t0\t\t-2\n\
             /dev/zram0                              partition\t65532\t\t12\t\t100\n\
             /mnt/my\\040swap file 4 0 -3\n",
        );
        assert_eq!(areas.len(), 3);
        assert_eq!(areas[0].path, "/var/tmp/oslab-swap-12");
        assert_eq!(areas[0].size_bytes, 1048572 * 1024);
        assert_eq!(areas[1].priority, 100);
        assert_eq!(areas[1].used_bytes, 12 * 1024);
        assert_eq!(areas[2].path, "/mnt/my swap");
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
        assert_eq!(size_text(64 << 20), "64 MiB");
        assert_eq!(size_text(1 << 30), "1.00 GiB");
    }

    #[test]
    fn a_header_carries_the_label_and_the_magic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("area");
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(16 * page_size()).unwrap();
        write_header(&file, 16 * page_size(), "oslab-4242").unwrap();
        assert_eq!(label_of(&path).as_deref(), Some("oslab-4242"));
        assert_eq!(pid_of("oslab-4242"), Some(4242));
        assert_eq!(pid_of("swap"), None);
        let mut version = [0u8; 8];
        file.read_exact_at(&mut version, HEADER_INFO).unwrap();
        assert_eq!(u32::from_ne_bytes(version[..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_ne_bytes(version[4..].try_into().unwrap()), 15);
        // A file without the magic has no label.
        std::fs::write(&path, vec![0u8; 2 * page_size() as usize]).unwrap();
        assert_eq!(label_of(&path), None);
    }
}

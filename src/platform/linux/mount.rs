//! `/proc/self/mountinfo` (proc(5)), the one parser of it: which file system a directory is on
//! (the mount whose mount point is the longest prefix of the directory's canonical path), and
//! the lines `cgroup` finds the hierarchies in. Pure, so it can be tested on any text.

use std::path::Path;

pub use crate::platform::contract::mount::{Mount, MountError};

/// The file systems that keep their files in memory.
pub const MEMORY_FILE_SYSTEMS: &[&str] = &["tmpfs", "ramfs", "devtmpfs", "hugetlbfs"];

/// mountinfo escapes space, tab, newline and backslash in paths as `\ooo` octal; a
/// backslash not followed by an octal byte (at most `\377`) is kept as it is.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && (b'0'..=b'3').contains(&bytes[i + 1])
            && bytes[i + 2..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of mountinfo, with what the parts of oslab that read it need: the file system a
/// directory is on ([`Mount`]) and where the cgroup hierarchies are (`cgroup`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountLine {
    /// The directory of the file system the mount shows from (field 4; `/` but for bind
    /// mounts and containers).
    pub root: String,
    pub mount_point: String,
    pub fstype: String,
    pub source: String,
    /// The mount's own options (field 6), then the super block's (after the separator).
    pub mount_options: String,
    pub super_options: String,
}

impl MountLine {
    /// The mount as the platform contract describes it: both option lists, in their order.
    pub fn mount(&self) -> Mount {
        let mut options = self.mount_options.clone();
        if !self.super_options.is_empty() {
            options.push(',');
            options.push_str(&self.super_options);
        }
        Mount {
            mount_point: self.mount_point.clone(),
            fstype: self.fstype.clone(),
            source: self.source.clone(),
            options,
        }
    }

    /// Whether the super block's options include `name` (a cgroup v1 mount's controllers).
    pub fn has_super_option(&self, name: &str) -> bool {
        self.super_options
            .split(',')
            .any(|o| o.split('=').next() == Some(name))
    }
}

/// Parse one mountinfo line; `None` when it is malformed.
pub fn parse_entry(line: &str) -> Option<MountLine> {
    let (left, right) = line.split_once(" - ")?;
    let left: Vec<&str> = left.split(' ').collect();
    let right: Vec<&str> = right.split(' ').collect();
    if left.len() < 6 || right.len() < 2 {
        return None;
    }
    Some(MountLine {
        root: unescape(left[3]),
        mount_point: unescape(left[4]),
        fstype: right[0].to_string(),
        source: unescape(right[1]),
        mount_options: left[5].to_string(),
        super_options: right.get(2).copied().unwrap_or_default().to_string(),
    })
}

/// Every well-formed line of a mountinfo text, in order.
pub fn entries(mountinfo: &str) -> impl Iterator<Item = MountLine> + '_ {
    mountinfo.lines().filter_map(parse_entry)
}

/// Whether `mount_point` is `path` or one of its ancestors, by whole components.
fn covers(mount_point: &str, path: &str) -> bool {
    mount_point == "/"
        || path == mount_point
        || (path.starts_with(mount_point) && path.as_bytes().get(mount_point.len()) == Some(&b'/'))
}

/// The mount `path` (absolute, canonical) is on: the longest covering mount point; of equal
/// ones (mounts stacked on one point) the last, which is the one visible.
pub fn mount_of_path(mountinfo: &str, path: &str) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for m in entries(mountinfo).map(|l| l.mount()) {
        if covers(&m.mount_point, path)
            && best
                .as_ref()
                .is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// The mount a directory is on, from this process's mountinfo.
pub fn mount_of(dir: &Path) -> Result<Mount, MountError> {
    let canonical = dir.canonicalize().map_err(|source| MountError::Resolve {
        path: dir.to_path_buf(),
        source,
    })?;
    let text =
        std::fs::read_to_string("/proc/self/mountinfo").map_err(|source| MountError::Query {
            asking: "cannot read /proc/self/mountinfo".into(),
            source,
        })?;
    mount_of_path(&text, &canonical.to_string_lossy())
        .ok_or(MountError::Uncovered { path: canonical })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
30 25 0:27 / /dev/shm rw,nosuid - tmpfs shm2 rw,size=4k
40 27 0:40 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw,attr2
41 27 0:41 / /mnt/my rw - btrfs /dev/sdc rw
";

    #[test]
    fn longest_prefix_by_components() {
        let m = mount_of_path(SAMPLE, "/work/main").unwrap();
        assert_eq!((m.fstype.as_str(), m.source.as_str()), ("ext4", "/dev/vda"));
        assert_eq!(m.options, "rw,relatime,rw,discard,resv_strict");
        assert!(!m.memory_backed());
        // Stacked mounts: the last one is visible.
        let m = mount_of_path(SAMPLE, "/dev/shm/x").unwrap();
        assert_eq!(m.source, "shm2");
        assert!(m.memory_backed());
        // "/mnt/my" does not cover "/mnt/my disk"; the escaped space is decoded.
        let m = mount_of_path(SAMPLE, "/mnt/my disk/a").unwrap();
        assert_eq!(
            (m.fstype.as_str(), m.mount_point.as_str()),
            ("xfs", "/mnt/my disk")
        );
        assert_eq!(mount_of_path(SAMPLE, "/mnt/my").unwrap().fstype, "btrfs");
        assert_eq!(mount_of_path(SAMPLE, "/mnt/myx").unwrap().fstype, "ext4");
        assert!(
            mount_of_path(SAMPLE, "/proc/self")
                .unwrap()
                .describe()
                .starts_with("proc on")
        );
    }

    #[test]
    fn malformed_lines_are_skipped() {
        assert!(parse_entry("").is_none());
        assert!(parse_entry("1 2 3 - ext4").is_none());
        assert!(mount_of_path("garbage\n", "/").is_none());
        let l =
            parse_entry("35 31 0:32 /a\\040b /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory")
                .unwrap();
        assert_eq!((l.root.as_str(), l.mount_options.as_str()), ("/a b", "rw"));
        assert!(l.has_super_option("memory") && !l.has_super_option("mem"));
        assert_eq!(unescape("a\\134b\\0"), "a\\b\\0");
        // Found by the fuzz target proc_text: \777 overflowed a byte.
        assert_eq!(unescape("a\\777b\\400"), "a\\777b\\400");
        assert_eq!(unescape("\\377"), "\u{fffd}");
    }

    #[test]
    fn this_process_sees_its_own_root() {
        let m = mount_of(Path::new("/")).unwrap();
        assert_eq!(m.mount_point, "/");
        assert!(!m.fstype.is_empty());
    }
}

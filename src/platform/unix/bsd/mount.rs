//! Which file system a directory is on: statfs(2), which on the BSDs names the file system
//! type, the mounted device and the mount point itself (Linux needs mountinfo for that).

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub use crate::platform::contract::mount::{Mount, MountError};

/// The file systems that keep their files in memory.
pub const MEMORY_FILE_SYSTEMS: &[&str] = &["tmpfs", "mfs", "devfs"];

/// The mount flags (sys/mount.h, the same bits on FreeBSD and macOS) worth naming.
const FLAGS: [(u64, &str); 6] = [
    (0x0000_0002, "sync"),
    (0x0000_0004, "noexec"),
    (0x0000_0008, "nosuid"),
    (0x0000_0040, "async"),
    (0x0000_1000, "local"),
    (0x1000_0000, "noatime"),
];
const READ_ONLY: u64 = 0x0000_0001;

fn text(chars: &[libc::c_char]) -> String {
    // SAFETY: reinterpreting c_char (i8 or u8) as bytes of the same size.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(chars.as_ptr().cast(), chars.len()) };
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// The flags in words: `rw` or `ro`, then the others that are set.
fn options(flags: u64) -> String {
    let mut words = vec![if flags & READ_ONLY != 0 { "ro" } else { "rw" }];
    words.extend(
        FLAGS
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, w)| *w),
    );
    words.join(",")
}

/// The mount a directory is on (statfs(2)).
pub fn mount_of(dir: &Path) -> Result<Mount, MountError> {
    let canonical = dir.canonicalize().map_err(|source| MountError::Resolve {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = CString::new(canonical.as_os_str().as_bytes()).map_err(|_| MountError::Nul {
        path: canonical.clone(),
    })?;
    // SAFETY: an all-zero statfs is a valid value of the plain C struct.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a writable statfs.
    if unsafe { libc::statfs(path.as_ptr(), &mut fs) } != 0 {
        return Err(MountError::Query {
            asking: format!("statfs {}", canonical.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    #[allow(clippy::unnecessary_cast)] // u64 on FreeBSD, u32 on macOS
    let flags = fs.f_flags as u64;
    Ok(Mount {
        mount_point: text(&fs.f_mntonname),
        fstype: text(&fs.f_fstypename),
        source: text(&fs.f_mntfromname),
        options: options(flags),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_mounted_somewhere() {
        let m = mount_of(Path::new("/")).unwrap();
        assert_eq!(m.mount_point, "/");
        assert!(!m.fstype.is_empty());
        assert_eq!(options(READ_ONLY | 0x1000), "ro,local");
    }
}

//! Which volume a directory is on: GetVolumePathNameW for its mount point, then
//! GetVolumeInformationW for the file system's name and flags and
//! GetVolumeNameForVolumeMountPointW for the volume itself.

use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    GetVolumeInformationW, GetVolumeNameForVolumeMountPointW, GetVolumePathNameW,
};

use super::text::{from_wide, wide};

/// GetVolumeInformationW's flag of a read-only volume (winnt.h).
const FILE_READ_ONLY_VOLUME: u32 = 0x0008_0000;

pub use crate::platform::contract::mount::{Mount, MountError};

/// Windows' RAM disks are third-party drivers with no common name: none is recognised.
pub const MEMORY_FILE_SYSTEMS: &[&str] = &[];

/// The volume a directory is on.
pub fn mount_of(dir: &Path) -> Result<Mount, MountError> {
    let canonical = dir.canonicalize().map_err(|source| MountError::Resolve {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = wide(canonical.as_os_str());
    let mut root = vec![0u16; 1024];
    // SAFETY: a NUL-terminated path and a buffer of `root.len()` characters.
    if unsafe { GetVolumePathNameW(path.as_ptr(), root.as_mut_ptr(), root.len() as u32) } == 0 {
        return Err(MountError::Query {
            asking: format!("GetVolumePathNameW {}", canonical.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    let mut fs_name = vec![0u16; 64];
    let mut flags = 0u32;
    // SAFETY: the volume root (NUL-terminated) and buffers of the stated sizes; the values not
    // asked for are null.
    let ok = unsafe {
        GetVolumeInformationW(
            root.as_ptr(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut flags,
            fs_name.as_mut_ptr(),
            fs_name.len() as u32,
        )
    };
    if ok == 0 {
        return Err(MountError::Query {
            asking: format!("GetVolumeInformationW {}", from_wide(&root)),
            source: std::io::Error::last_os_error(),
        });
    }
    let mut volume = vec![0u16; 64];
    // SAFETY: the volume root and a buffer of `volume.len()` characters (50 are enough).
    let named = unsafe {
        GetVolumeNameForVolumeMountPointW(root.as_ptr(), volume.as_mut_ptr(), volume.len() as u32)
    } != 0;
    let mount_point = from_wide(&root);
    Ok(Mount {
        source: if named {
            from_wide(&volume)
        } else {
            mount_point.clone()
        },
        mount_point,
        fstype: from_wide(&fs_name),
        options: if flags & FILE_READ_ONLY_VOLUME != 0 {
            "ro"
        } else {
            "rw"
        }
        .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_directory_has_a_volume() {
        let m = mount_of(Path::new(".")).unwrap();
        assert!(!m.fstype.is_empty(), "{m:?}");
        assert!(m.describe().contains(&m.mount_point));
    }
}

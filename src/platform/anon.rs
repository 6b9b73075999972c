//! Anonymous memory for experiments: `len` bytes, readable and writable, zero-filled by the
//! system at first touch, given back when dropped; on Unix also a bare mapping of a file or of
//! anonymous memory that the caller unmaps (`map`). The system's calls are the backend's
//! (`unix/anon.rs`: mmap, madvise; `windows/anon.rs`: VirtualAlloc, VirtualFree).

use crate::model::SetupError;

use super::this_os_anon as os;

/// Drop the contents of `[ptr, ptr + len)`, a page-aligned range inside one of our private
/// [`Anon`] mappings: the next touch of each page faults in a zero page again.
pub fn release_range(ptr: *mut u8, len: usize) -> std::io::Result<()> {
    os::release(ptr, len)
}

/// A fresh readable and writable mapping of `len` bytes of the open file `file` from its start
/// (at least `len` bytes long), or anonymous (`None`); shared or private. The caller unmaps it
/// (munmap(2)).
#[cfg(unix)]
pub fn map(
    len: usize,
    shared: bool,
    file: Option<std::os::fd::BorrowedFd<'_>>,
) -> std::io::Result<*mut u8> {
    os::map_fd(len, shared, file)
}

/// madvise(2) on `[ptr, ptr + len)`.
///
/// # Safety
/// The range is whole pages of one of the caller's own mappings, and the advice may not
/// drop contents that Rust code still reads as initialised.
#[cfg(unix)]
pub unsafe fn advise(ptr: *mut u8, len: usize, advice: libc::c_int) -> std::io::Result<()> {
    os::advise(ptr, len, advice)
}

/// An anonymous mapping of `len` bytes.
pub struct Anon {
    ptr: *mut u8,
    len: usize,
}

impl Anon {
    /// A private mapping: copied on write by a fork.
    pub fn private(len: usize) -> Result<Anon, SetupError> {
        Ok(Anon {
            ptr: os::map(len, false)?,
            len,
        })
    }

    /// A shared mapping: the same pages in a forked child (for futex words across processes).
    #[cfg(unix)]
    pub fn shared(len: usize) -> Result<Anon, SetupError> {
        Ok(Anon {
            ptr: os::map(len, true)?,
            len,
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Give advice on the whole mapping (madvise(2)); the result says whether it was taken.
    #[cfg(unix)]
    pub fn advise(&self, advice: libc::c_int) -> std::io::Result<()> {
        os::advise(self.ptr, self.len, advice)
    }

    /// Drop the contents: the next touch of each page faults in a zero page again.
    pub fn release(&self) -> std::io::Result<()> {
        os::release(self.ptr, self.len)
    }

    /// Ask for base pages only, so that each page faults on its own even where transparent
    /// huge pages are `always` (advice only; nothing to ask where the system has no THP).
    pub fn base_pages_only(&self) {
        os::base_pages_only(self.ptr, self.len);
    }
}

impl Drop for Anon {
    fn drop(&mut self) {
        // Unmapping exactly our own mapping; its owner drops it after every use.
        os::unmap(self.ptr, self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_writes_and_releases() {
        let m = Anon::private(3 * 4096).unwrap();
        assert_eq!(m.len(), 3 * 4096);
        // SAFETY: inside the mapping.
        unsafe { m.ptr().add(4096).write(7) };
        m.release().unwrap();
        // SAFETY: inside the mapping, whose contents were dropped: zero-filled again.
        assert_eq!(unsafe { m.ptr().add(4096).read() }, 0);
        #[cfg(unix)]
        assert!(Anon::shared(4096).is_ok());
    }
}

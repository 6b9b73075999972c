//! Anonymous memory mappings for experiments, unmapped when dropped: one place for the
//! mmap/munmap pair and its error, shared by every family that needs memory of its own.

use super::SetupError;

/// An anonymous mapping of `len` bytes, readable and writable, zero-filled by the kernel.
pub struct Anon {
    ptr: *mut u8,
    len: usize,
}

impl Anon {
    /// A private mapping: copied on write by a fork.
    pub fn private(len: usize) -> Result<Anon, SetupError> {
        Anon::map(len, libc::MAP_PRIVATE)
    }

    /// A shared mapping: the same pages in a forked child (for futex words across processes).
    pub fn shared(len: usize) -> Result<Anon, SetupError> {
        Anon::map(len, libc::MAP_SHARED)
    }

    fn map(len: usize, kind: libc::c_int) -> Result<Anon, SetupError> {
        // SAFETY: a fresh anonymous mapping at an address the kernel picks; no existing
        // memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                kind | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(SetupError::Failed(format!(
                "mmap of {len} bytes failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Anon {
            ptr: ptr.cast(),
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
    pub fn advise(&self, advice: libc::c_int) -> std::io::Result<()> {
        // SAFETY: the range is exactly this mapping.
        let rc = unsafe { libc::madvise(self.ptr.cast(), self.len, advice) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Drop for Anon {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly our own mapping; its owner drops it after every use.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_writes_and_advises() {
        let m = Anon::private(3 * 4096).unwrap();
        assert_eq!(m.len(), 3 * 4096);
        // SAFETY: inside the mapping.
        unsafe { m.ptr().add(4096).write(7) };
        m.advise(libc::MADV_DONTNEED).unwrap();
        // SAFETY: inside the mapping; DONTNEED on private anonymous memory zero-fills it.
        assert_eq!(unsafe { m.ptr().add(4096).read() }, 0);
        assert!(Anon::shared(4096).is_ok());
    }
}

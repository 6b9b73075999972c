//! The mapping of one pass: created by backing, populated or prepared, walked block by block, unmapped.

use super::*;

// --- the mapping of one pass ---

/// The memory of one pass, released when dropped (munmap, or free for malloc).
pub(super) struct Mapping {
    /// Where the walk starts: the mapping's start, or the pointer malloc returned.
    pub(super) base: *mut u8,
    /// The whole pages holding the walked bytes: what madvise, msync and mincore take.
    pub(super) pages_start: *mut u8,
    pub(super) pages_len: usize,
    pub(super) malloc: bool,
}

impl Mapping {
    pub(super) fn new(
        backing: Backing,
        len: usize,
        file: Option<&File>,
    ) -> Result<Mapping, RoutineError> {
        let page = page_size();
        if backing == Backing::Malloc {
            // SAFETY: malloc has no preconditions; the block is freed once, by Drop.
            let base = unsafe { libc::malloc(len) }.cast::<u8>();
            if base.is_null() {
                return Err(RoutineError::Check(format!("malloc({len}) returned NULL")));
            }
            let start = base as usize / page * page;
            let end = (base as usize + len).next_multiple_of(page);
            return Ok(Mapping {
                base,
                pages_start: start as *mut u8,
                pages_len: end - start,
                malloc: true,
            });
        }
        let ptr = crate::platform::anon::map(len, backing.shared(), file.map(|f| f.as_fd()))
            .map_err(|source| RoutineError::Os {
                call: format!("mmap of {len} bytes"),
                source,
            })?;
        Ok(Mapping {
            base: ptr.cast(),
            pages_start: ptr.cast(),
            pages_len: len,
            malloc: false,
        })
    }

    pub(super) fn pages(&self) -> usize {
        self.pages_len / page_size()
    }

    pub(super) fn advise(&self, advice: libc::c_int) -> io::Result<()> {
        // SAFETY: the range is whole pages of this mapping (of the malloc block's own
        // mapping, which M_MMAP_THRESHOLD guarantees), whose bytes are only read through
        // raw pointers.
        unsafe { crate::platform::anon::advise(self.pages_start, self.pages_len, advice) }
    }

    pub(super) fn msync(&self) -> io::Result<()> {
        // SAFETY: the range is whole pages of this mapping.
        let rc = unsafe { libc::msync(self.pages_start.cast(), self.pages_len, libc::MS_SYNC) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The share of the mapping's pages in memory (for a file mapping: in the page cache).
    pub(super) fn resident_share(&self) -> io::Result<f64> {
        let mut vec = vec![0u8; self.pages()];
        // SAFETY: `vec` has one byte per page of the range, which is whole pages of ours.
        let rc = unsafe {
            libc::mincore(
                self.pages_start.cast(),
                self.pages_len,
                vec.as_mut_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let resident = vec.iter().filter(|&&b| b & 1 == 1).count();
        Ok(resident as f64 / vec.len().max(1) as f64)
    }

    /// Resident pages of this mapping, in kB (mincore: for a file, in the page cache).
    pub(super) fn resident_kb(&self) -> Option<f64> {
        let share = self.resident_share().ok()?;
        Some(share * self.pages_len as f64 / 1024.0)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.malloc {
            // SAFETY: `base` came from malloc and is freed once, here.
            unsafe { libc::free(self.base.cast()) };
        } else {
            // SAFETY: unmapping exactly the mapping this value owns, once.
            unsafe { libc::munmap(self.pages_start.cast(), self.pages_len) };
        }
    }
}

/// Walk one block: 16 times over its 512 lines, a store to every 8th line, loads from the
/// others. Returns the sum of the loaded bytes, so no load can be dropped.
#[inline(always)]
pub(super) fn walk_block(block: *mut u8) -> u64 {
    let mut sum = 0u64;
    for walk in 0..WALKS {
        for group in 0..LINES / STORE_EVERY {
            // SAFETY: the block is BLOCK bytes inside the mapping (checked by the caller);
            // every offset here is below BLOCK.
            unsafe {
                let first = block.add(group * STORE_EVERY * LINE);
                first.write_volatile(walk as u8);
                for line in 1..STORE_EVERY {
                    sum = sum.wrapping_add(u64::from(first.add(line * LINE).read_volatile()));
                }
            }
        }
    }
    sum
}

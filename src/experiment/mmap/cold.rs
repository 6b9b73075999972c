//! Cold caches: an evictor that walks more than the largest data cache between passes.

use super::*;

// --- cold caches ---

/// The largest data or unified cache of `cpu` and the smallest line size
/// (`platform::cpu::caches`).
pub(super) fn largest_data_cache(cpu: usize) -> Option<(usize, usize)> {
    let caches: Vec<_> = crate::platform::cpu::caches(cpu)
        .into_iter()
        .filter(|c| c.kind != "Instruction")
        .collect();
    let largest = caches.iter().map(|c| c.size_bytes).max().unwrap_or(0);
    let line = caches
        .iter()
        .filter_map(|c| c.line_bytes)
        .min()
        .map_or(LINE, |l| l as usize);
    (largest > 0).then_some((largest as usize, line))
}

/// A resident buffer of twice the largest data cache, read line by line to evict the walk's
/// lines and translations before a pass.
pub(super) struct Evictor {
    pub(super) buf: Anon,
    pub(super) line: usize,
}

impl Evictor {
    pub(super) fn new(cpu: usize) -> Result<Evictor, SetupError> {
        let (cache, line) = largest_data_cache(cpu).ok_or_else(|| {
            SetupError::Unsupported(format!(
                "cold=true needs the sizes of CPU {cpu}'s caches, which this system does not \
                 describe"
            ))
        })?;
        let buf = Anon::private(2 * cache)?;
        // Written, not just mapped: reads of untouched anonymous memory all hit one zero page
        // and would evict nothing.
        // SAFETY: the whole mapping is ours.
        unsafe { std::ptr::write_bytes(buf.ptr(), 1, buf.len()) };
        Ok(Evictor { buf, line })
    }

    pub(super) fn evict(&self) {
        let mut sum = 0u64;
        for off in (0..self.buf.len()).step_by(self.line) {
            // SAFETY: `off` is inside the buffer.
            sum = sum.wrapping_add(u64::from(unsafe {
                self.buf.ptr().add(off).read_volatile()
            }));
        }
        black_box(sum);
    }
}

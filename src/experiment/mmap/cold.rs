//! Cold caches: an evictor that walks more than the largest data cache between passes.

use super::*;

// --- cold caches ---

/// The largest data or unified cache of `cpu` and the smallest line size, from sysfs
/// (CPUID's cache leaves are wrong on some VMs: FINDINGS).
pub(super) fn largest_data_cache(cpu: usize) -> Option<(usize, usize)> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let read = |path: &Path| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mut largest = 0u64;
    let mut line = usize::MAX;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index")
            || read(&path.join("type")).as_deref() == Some("Instruction")
        {
            continue;
        }
        if let Some(size) = read(&path.join("size")).as_deref().and_then(parse_size) {
            largest = largest.max(size);
        }
        if let Some(l) = read(&path.join("coherency_line_size")).and_then(|l| l.parse().ok()) {
            line = line.min(l);
        }
    }
    let line = if line == usize::MAX { LINE } else { line };
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
                "cold=true needs the cache sizes in /sys/devices/system/cpu/cpu{cpu}/cache, \
                 which this system does not describe"
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

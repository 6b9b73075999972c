//! The machine's memory and its pressure, as every backend reports them (`memory::meminfo`,
//! `memory::system_pressure`).

/// The machine's memory, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfo {
    /// What can be allocated without swapping: free and reclaimable pages (Linux's
    /// MemAvailable, MemFree on kernels older than 3.14).
    pub available: u64,
    pub swap_total: u64,
    pub total: u64,
}

/// One line of Linux's pressure stall information (/proc/pressure/memory or a v2 cgroup's
/// memory.pressure).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsiLine {
    /// Share of the last 10 s some (or every) task stalled on memory, in percent.
    pub avg10: f64,
    /// Stall time since boot, µs.
    pub total_us: u64,
}

/// Memory pressure: `some` (at least one task stalled) and `full` (every non-idle task did).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Psi {
    pub some: PsiLine,
    pub full: Option<PsiLine>,
}

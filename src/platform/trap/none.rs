//! No raw trap instruction here (an architecture or system oslab has no raw path for): every
//! call fails with ENOSYS, which libc's `syscall()` would not (it measures a wrapper), and the
//! experiments of the raw path declare where they run. Each backend's `raw` re-exports this
//! module where it has no trap of its own (macOS; Linux and FreeBSD on an architecture oslab
//! writes no trap for).

pub const SUPPORTED: bool = false;

/// No machine code for a static helper here.
pub const EXIT0: Option<super::ExitProgram> = None;

/// # Safety
/// None needed: it makes no call.
pub unsafe fn syscall0(_: i64) -> i64 {
    -(libc::ENOSYS as i64)
}
/// # Safety
/// None needed: it makes no call.
pub unsafe fn syscall1(_: i64, _: i64) -> i64 {
    -(libc::ENOSYS as i64)
}
/// # Safety
/// None needed: it makes no call.
pub unsafe fn syscall2(_: i64, _: i64, _: i64) -> i64 {
    -(libc::ENOSYS as i64)
}
/// # Safety
/// None needed: it makes no call.
pub unsafe fn syscall3(_: i64, _: i64, _: i64, _: i64) -> i64 {
    -(libc::ENOSYS as i64)
}
/// # Safety
/// None needed: it makes no call.
pub unsafe fn syscall4(_: i64, _: i64, _: i64, _: i64, _: i64) -> i64 {
    -(libc::ENOSYS as i64)
}

/// The system call a vfork wrapper would make.
pub const VFORK_SYSCALL: &str = "vfork";

/// No vfork wrapper is written for this system and architecture: fails with ENOSYS.
pub fn vfork_exit0() -> i64 {
    -(libc::ENOSYS as i64)
}

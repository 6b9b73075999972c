//! Linux's memory advice, mmap flag and prctl calls, named for the experiments that use them.
//! Those experiments declare `os: LINUX`, so on another system the runner marks them
//! unsupported before any of this runs; there each advice is an invalid value (madvise fails
//! with EINVAL), MAP_POPULATE is no flag, and prctl fails with EINVAL, so a call that did run
//! would fail loudly instead of measuring something else. Only this file names the OS.

#[cfg(target_os = "linux")]
mod values {
    pub const MADV_HUGEPAGE: libc::c_int = libc::MADV_HUGEPAGE;
    pub const MADV_NOHUGEPAGE: libc::c_int = libc::MADV_NOHUGEPAGE;
    pub const MADV_POPULATE_READ: libc::c_int = libc::MADV_POPULATE_READ;
    pub const MADV_POPULATE_WRITE: libc::c_int = libc::MADV_POPULATE_WRITE;
    pub const MAP_POPULATE: libc::c_int = libc::MAP_POPULATE;
    pub const PR_SET_TIMERSLACK: libc::c_int = libc::PR_SET_TIMERSLACK;
    pub const PR_GET_TIMERSLACK: libc::c_int = libc::PR_GET_TIMERSLACK;
    pub const PR_SET_THP_DISABLE: libc::c_int = libc::PR_SET_THP_DISABLE;
    pub const PR_GET_THP_DISABLE: libc::c_int = libc::PR_GET_THP_DISABLE;

    /// posix_fallocate(2) of `len` bytes from the start.
    ///
    /// # Safety
    /// `fd` must be a descriptor the caller owns.
    pub unsafe fn posix_fallocate(fd: libc::c_int, len: libc::off_t) -> libc::c_int {
        // SAFETY: the caller's open descriptor.
        unsafe { libc::posix_fallocate(fd, 0, len) }
    }

    /// prctl(2) with its four further arguments (zero where the option takes fewer).
    pub fn prctl(option: libc::c_int, a2: libc::c_ulong, a3: libc::c_ulong) -> libc::c_int {
        // SAFETY: the options oslab passes (PR_GET/SET_TIMERSLACK, PR_GET/SET_THP_DISABLE)
        // only read or change this thread's or process's settings; no memory is passed.
        unsafe { libc::prctl(option, a2, a3, 0 as libc::c_ulong, 0 as libc::c_ulong) }
    }
}

#[cfg(not(target_os = "linux"))]
mod values {
    /// No such advice here: madvise(2) refuses it with EINVAL.
    const INVALID: libc::c_int = -1;
    pub const MADV_HUGEPAGE: libc::c_int = INVALID;
    pub const MADV_NOHUGEPAGE: libc::c_int = INVALID;
    pub const MADV_POPULATE_READ: libc::c_int = INVALID;
    pub const MADV_POPULATE_WRITE: libc::c_int = INVALID;
    /// No such flag here: the mapping is made without pre-faulting.
    pub const MAP_POPULATE: libc::c_int = 0;
    pub const PR_SET_TIMERSLACK: libc::c_int = INVALID;
    pub const PR_GET_TIMERSLACK: libc::c_int = INVALID;
    pub const PR_SET_THP_DISABLE: libc::c_int = INVALID;
    pub const PR_GET_THP_DISABLE: libc::c_int = INVALID;

    /// Not used here: fails with EOPNOTSUPP.
    ///
    /// # Safety
    /// None needed: it makes no call.
    pub unsafe fn posix_fallocate(_fd: libc::c_int, _len: libc::off_t) -> libc::c_int {
        libc::EOPNOTSUPP
    }

    /// No prctl(2) here: fails, as Linux's does for an unknown option.
    pub fn prctl(_option: libc::c_int, _a2: libc::c_ulong, _a3: libc::c_ulong) -> libc::c_int {
        -1
    }
}

pub use values::*;

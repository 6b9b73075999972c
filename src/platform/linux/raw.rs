//! System calls made with the architecture's trap instruction directly, without libc: the
//! cheapest path into the kernel, so what is measured is the kernel's entry and exit and the
//! call's own work, not a library wrapper (FINDINGS: glibc's wrapper adds ~40 ns here).
//!
//! Each function returns the raw kernel result: a negative value is `-errno`.
//!
//! Also here: the numbers of the calls the system-call ladder makes (`nr`).

#[cfg(target_arch = "x86_64")]
mod arch {
    use core::arch::asm;

    /// The raw path exists on this architecture.
    pub const SUPPORTED: bool = true;

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall0(n: i64) -> i64 {
        let ret: i64;
        // SAFETY: the caller passes a system call that takes no argument and touches no user
        // memory; `syscall` clobbers rcx and r11 only (x86-64 System V ABI, syscall(2)).
        unsafe {
            asm!("syscall", inlateout("rax") n => ret, lateout("rcx") _, lateout("r11") _,
                 options(nostack, preserves_flags));
        }
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall1(n: i64, a1: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the argument is valid for call `n`.
        unsafe {
            asm!("syscall", inlateout("rax") n => ret, in("rdi") a1,
                 lateout("rcx") _, lateout("r11") _, options(nostack, preserves_flags));
        }
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall2(n: i64, a1: i64, a2: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("syscall", inlateout("rax") n => ret, in("rdi") a1, in("rsi") a2,
                 lateout("rcx") _, lateout("r11") _, options(nostack, preserves_flags));
        }
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall3(n: i64, a1: i64, a2: i64, a3: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("syscall", inlateout("rax") n => ret, in("rdi") a1, in("rsi") a2, in("rdx") a3,
                 lateout("rcx") _, lateout("r11") _, options(nostack, preserves_flags));
        }
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("syscall", inlateout("rax") n => ret, in("rdi") a1, in("rsi") a2, in("rdx") a3,
                 in("r10") a4, lateout("rcx") _, lateout("r11") _, options(nostack, preserves_flags));
        }
        ret
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    use core::arch::asm;

    pub const SUPPORTED: bool = true;

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall0(n: i64) -> i64 {
        let ret: i64;
        // SAFETY: the caller passes a system call that takes no argument; `svc 0` returns in x0
        // and clobbers nothing else (arm64 Linux syscall ABI, syscall(2)).
        unsafe { asm!("svc 0", in("x8") n, lateout("x0") ret, options(nostack)) };
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall1(n: i64, a1: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the argument is valid for call `n`.
        unsafe { asm!("svc 0", in("x8") n, inlateout("x0") a1 => ret, options(nostack)) };
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall2(n: i64, a1: i64, a2: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("svc 0", in("x8") n, inlateout("x0") a1 => ret, in("x1") a2, options(nostack))
        };
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall3(n: i64, a1: i64, a2: i64, a3: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("svc 0", in("x8") n, inlateout("x0") a1 => ret, in("x1") a2, in("x2") a3,
                 options(nostack))
        };
        ret
    }

    #[inline(always)]
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("svc 0", in("x8") n, inlateout("x0") a1 => ret, in("x1") a2, in("x2") a3,
                 in("x3") a4, options(nostack))
        };
        ret
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    //! Elsewhere the raw path is not built; libc's `syscall()` would measure a wrapper.
    pub const SUPPORTED: bool = false;
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall0(_: i64) -> i64 {
        -(libc::ENOSYS as i64)
    }
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall1(_: i64, _: i64) -> i64 {
        -(libc::ENOSYS as i64)
    }
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall2(_: i64, _: i64, _: i64) -> i64 {
        -(libc::ENOSYS as i64)
    }
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall3(_: i64, _: i64, _: i64, _: i64) -> i64 {
        -(libc::ENOSYS as i64)
    }
    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    pub unsafe fn syscall4(_: i64, _: i64, _: i64, _: i64, _: i64) -> i64 {
        -(libc::ENOSYS as i64)
    }
}

pub use arch::*;

/// The numbers of the system calls the ladder makes, as this architecture numbers them
/// (libc supplies each target's table: getppid is 110 on x86_64, 173 on aarch64, where the
/// generic table has no `stat` and `newfstatat` is the path lookup).
pub mod nr {
    pub const CLOCK_GETTIME: i64 = libc::SYS_clock_gettime;
    pub const CLOSE: i64 = libc::SYS_close;
    pub const FSTAT: i64 = libc::SYS_fstat;
    pub const GETPID: i64 = libc::SYS_getpid;
    pub const GETPPID: i64 = libc::SYS_getppid;
    pub const NEWFSTATAT: i64 = libc::SYS_newfstatat;
    pub const OPENAT: i64 = libc::SYS_openat;
    pub const READ: i64 = libc::SYS_read;
    pub const WRITE: i64 = libc::SYS_write;
}

/// Why the raw path is unavailable, if it is.
pub fn unsupported_reason() -> Option<String> {
    (!SUPPORTED).then(|| {
        format!(
            "raw system calls are implemented for x86_64 and aarch64, not {}",
            std::env::consts::ARCH
        )
    })
}

/// Turn a raw result into the errno text, for error messages.
pub fn errno_text(ret: i64) -> String {
    std::io::Error::from_raw_os_error((-ret) as i32).to_string()
}

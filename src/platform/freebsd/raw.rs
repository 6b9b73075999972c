//! System calls made with the `syscall` instruction directly, without libc, on FreeBSD
//! x86_64: the same two paths as Linux (`syscall0`…`syscall4` inline, [`called`] never
//! inlined). FreeBSD's amd64 ABI differs in how it fails: the kernel sets the carry flag and
//! returns the positive errno in rax; here it is turned into `-errno`, so each function returns
//! what Linux's do. The numbers are FreeBSD's (sys/kern/syscalls.master), which never change.

#[cfg(target_arch = "x86_64")]
mod arch {
    use core::arch::asm;

    /// The raw path exists on this architecture.
    pub const SUPPORTED: bool = true;

    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// The arguments must be valid for call `n`: pointers point to memory the call may
    /// read or write, and the call must not affect memory Rust believes it owns.
    #[inline(always)]
    pub unsafe fn syscall0(n: i64) -> i64 {
        let ret: i64;
        // SAFETY: the caller passes a call that takes no argument and touches no user memory;
        // `syscall` clobbers rcx and r11 (and rdx: the second return value) and the flags.
        unsafe {
            asm!("syscall", "jnc 2f", "neg rax", "2:",
                 inlateout("rax") n => ret, lateout("rdx") _, lateout("rcx") _,
                 lateout("r11") _, options(nostack));
        }
        ret
    }

    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// As [`syscall0`].
    #[inline(always)]
    pub unsafe fn syscall1(n: i64, a1: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the argument is valid for call `n`.
        unsafe {
            asm!("syscall", "jnc 2f", "neg rax", "2:",
                 inlateout("rax") n => ret, in("rdi") a1, lateout("rdx") _,
                 lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        ret
    }

    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// As [`syscall0`].
    #[inline(always)]
    pub unsafe fn syscall2(n: i64, a1: i64, a2: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("syscall", "jnc 2f", "neg rax", "2:",
                 inlateout("rax") n => ret, in("rdi") a1, in("rsi") a2, lateout("rdx") _,
                 lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        ret
    }

    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// As [`syscall0`].
    #[inline(always)]
    pub unsafe fn syscall3(n: i64, a1: i64, a2: i64, a3: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("syscall", "jnc 2f", "neg rax", "2:",
                 inlateout("rax") n => ret, in("rdi") a1, in("rsi") a2,
                 inlateout("rdx") a3 => _, lateout("rcx") _, lateout("r11") _,
                 options(nostack));
        }
        ret
    }

    /// Make system call `n` with the trap instruction.
    ///
    /// # Safety
    /// As [`syscall0`].
    #[inline(always)]
    pub unsafe fn syscall4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
        let ret: i64;
        // SAFETY: as syscall0; the caller guarantees the arguments are valid for call `n`.
        unsafe {
            asm!("syscall", "jnc 2f", "neg rax", "2:",
                 inlateout("rax") n => ret, in("rdi") a1, in("rsi") a2,
                 inlateout("rdx") a3 => _, in("r10") a4, lateout("rcx") _,
                 lateout("r11") _, options(nostack));
        }
        ret
    }

    /// The system call the vfork wrapper makes to create the child.
    pub const VFORK_SYSCALL: &str = "vfork";

    /// `vfork()` whose child exits at once, in assembly for the reasons given in the Linux
    /// backend (a child running compiled Rust on its parent's stack). FreeBSD returns the
    /// child's pid in the parent and 0 in the child (rdx says which, as well); the child runs
    /// `test`, `jnz`, `xor`, `mov` and exit(0) on registers only.
    ///
    /// Returns the child's pid, or `-errno`.
    pub fn vfork_exit0() -> i64 {
        let ret: i64;
        // SAFETY: vfork suspends this thread until the child exits; the child touches no
        // memory and never returns here. The parent resumes after the first `syscall`.
        unsafe {
            core::arch::asm!(
                "syscall",
                "jc 3f",
                "test rax, rax",
                "jnz 2f",
                "xor edi, edi",
                "mov eax, {exit}",
                "syscall",
                "ud2",
                "3:",
                "neg rax",
                "2:",
                exit = const super::nr::EXIT,
                inlateout("rax") super::nr::VFORK => ret,
                out("rdi") _,
                lateout("rdx") _,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[path = "../raw_none.rs"]
mod arch;

pub use arch::*;

#[path = "../raw_paths.rs"]
mod paths;
pub use paths::*;

/// FreeBSD's numbers of the calls the ladder makes (syscalls.master: the same on every
/// architecture). `NEWFSTATAT` keeps Linux's name for the path lookup: here it is fstatat
/// (552), with the same arguments (dirfd, path, buffer, flags).
pub mod nr {
    pub const CLOCK_GETTIME: i64 = 232;
    pub const CLOSE: i64 = 6;
    pub const FSTAT: i64 = 551;
    pub const GETPID: i64 = 20;
    pub const GETPPID: i64 = 39;
    pub const NEWFSTATAT: i64 = 552;
    pub const OPENAT: i64 = 499;
    pub const READ: i64 = 3;
    pub const WRITE: i64 = 4;
    /// exit(2), which the vfork child calls.
    pub const EXIT: i64 = 1;
    pub const VFORK: i64 = 66;
}

/// Why the raw path is unavailable, if it is.
pub fn unsupported_reason() -> Option<String> {
    (!SUPPORTED).then(|| {
        format!(
            "raw system calls are implemented for FreeBSD on x86_64, not {}",
            std::env::consts::ARCH
        )
    })
}

/// Turn a raw result into the errno text, for error messages.
pub fn errno_text(ret: i64) -> String {
    std::io::Error::from_raw_os_error((-ret) as i32).to_string()
}

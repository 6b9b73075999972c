//! System calls made with the `syscall` instruction directly, without libc, on FreeBSD
//! x86_64: the same two paths as Linux (`syscall0`…`syscall4` inline, [`called`] never
//! inlined). FreeBSD's amd64 ABI differs in how it fails: the kernel sets the carry flag and
//! returns the positive errno in rax; here it is turned into `-errno`, so each function returns
//! what Linux's do. The numbers are FreeBSD's (sys/kern/syscalls.master), which never change.
//!
//! FreeBSD's return path also differs in what it keeps: besides rcx and r11 (which the
//! `syscall` instruction takes) and rdx (the second return value), `fast_syscall` in
//! sys/amd64/amd64/exception.S zeroes r8, r9 and r10 before `sysretq`, so that no kernel
//! value reaches user space. Linux keeps them. Every asm block here declares the three
//! clobbered: without that the compiler kept a loop counter or a pointer in one of them, and
//! the inline path looped for ever (getppid) or passed a null buffer (fstatat: EFAULT) on
//! FreeBSD 13.2. [`tests::argument_registers`] shows what the kernel leaves in them.

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
                 lateout("r11") _, lateout("r8") _, lateout("r9") _, lateout("r10") _,
                 options(nostack));
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
                 lateout("rcx") _, lateout("r11") _, lateout("r8") _, lateout("r9") _,
                 lateout("r10") _, options(nostack));
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
                 lateout("rcx") _, lateout("r11") _, lateout("r8") _, lateout("r9") _,
                 lateout("r10") _, options(nostack));
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
                 lateout("r8") _, lateout("r9") _, lateout("r10") _, options(nostack));
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
                 inlateout("rdx") a3 => _, inlateout("r10") a4 => _, lateout("rcx") _,
                 lateout("r11") _, lateout("r8") _, lateout("r9") _, options(nostack));
        }
        ret
    }

    /// The system call the vfork wrapper makes to create the child.
    pub const VFORK_SYSCALL: &str = "vfork";

    /// `xor edi, edi; mov eax, 1 (exit); syscall`, in an ELF branded FreeBSD
    /// (ELFOSABI_FREEBSD): the kernel refuses an unbranded static ELF ("ELF binary type "0"
    /// not known", ENOEXEC).
    pub const EXIT0: Option<super::ExitProgram> = Some(super::ExitProgram {
        osabi: 9,
        code: &[0x31, 0xff, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05],
    });

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
                lateout("r8") _,
                lateout("r9") _,
                lateout("r10") _,
                options(nostack),
            );
        }
        ret
    }
}

#[cfg(not(target_arch = "x86_64"))]
use crate::platform::trap::none as arch;

pub use arch::*;

// The two paths to the trap instruction over this module's calls (`platform::trap`).
pub use crate::platform::trap::*;

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

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// What FreeBSD's return from `syscall` leaves in r8, r9 and r10: the value put there
    /// before the call, or zero. The fast path (`sysretq`) zeroes them; a return through the
    /// full trap frame (after a signal or another asynchronous trap) restores the caller's.
    fn argument_registers_after_getppid() -> [i64; 3] {
        let (r8, r9, r10): (i64, i64, i64);
        // SAFETY: getppid takes no argument and touches no memory; rax, rcx, rdx and r11 are
        // declared clobbered as the call needs, r8–r10 are read back.
        unsafe {
            core::arch::asm!("syscall",
                inlateout("rax") nr::GETPPID => _, lateout("rdx") _, lateout("rcx") _,
                lateout("r11") _, inlateout("r8") 0x5a5a_0008_i64 => r8,
                inlateout("r9") 0x5a5a_0009_i64 => r9, inlateout("r10") 0x5a5a_0010_i64 => r10,
                options(nostack));
        }
        [r8, r9, r10]
    }

    #[test]
    fn argument_registers() {
        let seen: Vec<[i64; 3]> = (0..100)
            .map(|_| argument_registers_after_getppid())
            .collect();
        for regs in &seen {
            for (reg, (got, kept)) in regs
                .iter()
                .zip([0x5a5a_0008, 0x5a5a_0009, 0x5a5a_0010])
                .enumerate()
            {
                assert!(
                    *got == 0 || *got == kept,
                    "r{} after syscall: {got:#x}",
                    reg + 8
                );
            }
        }
        assert!(
            seen.contains(&[0, 0, 0]),
            "the kernel kept r8–r10 in 100 calls: {:x?}",
            seen[0]
        );
    }

    #[test]
    fn numbered_calls_answer_as_libc_does() {
        // SAFETY: getpid and getppid take no argument and cannot fail.
        let (pid, ppid) = unsafe { (syscall0(nr::GETPID), syscall0(nr::GETPPID)) };
        // SAFETY: as above.
        let (want_pid, want_ppid) = unsafe { (libc::getpid(), libc::getppid()) };
        assert_eq!((pid, ppid), (want_pid as i64, want_ppid as i64));
    }

    /// fstatat(AT_FDCWD, `path`, a buffer larger than struct stat, 0) through path `P`.
    fn fstatat<P: Trap>(path: &std::ffi::CStr) -> i64 {
        let mut buf = [0u64; 32];
        // SAFETY: a NUL-terminated path and a buffer larger than struct stat.
        unsafe {
            P::call4(
                nr::NEWFSTATAT,
                libc::AT_FDCWD as i64,
                path.as_ptr() as i64,
                buf.as_mut_ptr() as i64,
                0,
            )
        }
    }

    /// The shape that failed before r8–r10 were declared clobbered: a loop of inline calls
    /// whose counter and buffer pointer the compiler may keep in any free register.
    #[test]
    fn inline_calls_in_a_loop() {
        let mut total = 0i64;
        for _ in 0..1000 {
            let ret = fstatat::<Inline>(c"/");
            assert_eq!(ret, 0, "fstatat(\"/\"): {}", errno_text(ret));
            // SAFETY: getppid takes no argument and cannot fail.
            total += unsafe { Inline::call0(nr::GETPPID) };
        }
        // SAFETY: as above.
        assert_eq!(total, 1000 * unsafe { libc::getppid() } as i64);
    }

    #[test]
    fn failures_are_negative_errno() {
        let enoent = -(libc::ENOENT as i64);
        assert_eq!(fstatat::<Called>(c"/no/such/oslab/path"), enoent);
        assert_eq!(fstatat::<Inline>(c"/no/such/oslab/path"), enoent);
        // SAFETY: closing a descriptor that is not open touches no memory.
        assert_eq!(
            unsafe { Inline::call1(nr::CLOSE, 1 << 20) },
            -(libc::EBADF as i64)
        );
    }
}

//! System calls made with the architecture's trap instruction directly, without libc, on
//! two paths: inline in the caller's loop (`syscall0`…`syscall4`, [`Inline`]: the floor) or from
//! a function of their own that is never inlined ([`called`], [`Called`]: what a program pays,
//! as through a libc wrapper). The ladder measures both and shows the gap
//! (docs/syscall-path.md).
//!
//! Each function returns the raw kernel result: a negative value is `-errno`.
//!
//! Also here: the numbers of the calls the system-call ladder makes (`nr`), and the vfork
//! whose child exits at once, which must be written in assembly (`vfork_exit0`).

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
    /// The system call the vfork wrapper makes to create the child.
    pub const VFORK_SYSCALL: &str = "vfork";

    /// `xor edi, edi; mov eax, 231 (exit_group); syscall`, in an ELF of the System V ABI.
    pub const EXIT0: Option<super::ExitProgram> = Some(super::ExitProgram {
        osabi: 0,
        code: &[0x31, 0xff, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05],
    });

    /// `vfork()` whose child exits at once, written in assembly so that the child never runs
    /// compiled Rust code on the stack it shares with its suspended parent. Rust has no
    /// `returns_twice` attribute, so the compiler may keep a value in a stack slot that a
    /// child returning from a plain `vfork()` call would overwrite: the libc crate deprecated
    /// its `vfork` for causing memory corruption (rust-lang/libc#1596), and its maintainer's
    /// advice is an assembly wrapper. Here the child executes two instructions and
    /// `exit_group(0)`; it touches no memory at all.
    ///
    /// Returns the child's pid, or `-errno`.
    pub fn vfork_exit0() -> i64 {
        let ret: i64;
        // SAFETY: the vfork system call suspends this thread until the child exits. The child
        // shares our memory and stack; it runs only `test`, `jnz`, `xor`, `mov` and the
        // exit_group system call, all on registers, so it reads and writes no memory and never
        // returns here. The parent resumes after the first `syscall` with rax = pid or -errno;
        // `syscall` clobbers rcx and r11, and rdi is declared clobbered for the child's path.
        unsafe {
            core::arch::asm!(
                "syscall",
                "test rax, rax",
                "jnz 2f",
                "xor edi, edi",
                "mov eax, {exit_group}",
                "syscall",
                "ud2",
                "2:",
                exit_group = const libc::SYS_exit_group,
                inlateout("rax") libc::SYS_vfork => ret,
                out("rdi") _,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
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
    /// The system call the vfork wrapper makes to create the child.
    pub const VFORK_SYSCALL: &str = "clone";

    /// `mov x0, #0; mov x8, #94 (exit_group); svc #0`, little-endian words.
    pub const EXIT0: Option<super::ExitProgram> = Some(super::ExitProgram {
        osabi: 0,
        code: &[
            0x00, 0x00, 0x80, 0xd2, 0xc8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
        ],
    });

    /// `vfork()` whose child exits at once, written in assembly (see the x86_64 version for
    /// why). aarch64 has no vfork system call: glibc's `vfork` is `clone(CLONE_VM |
    /// CLONE_VFORK | SIGCHLD)`, and so is this. The child (x0 = 0) exits with x0 still 0.
    ///
    /// Returns the child's pid, or `-errno`.
    pub fn vfork_exit0() -> i64 {
        const FLAGS: i64 = (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as i64;
        let ret: i64;
        // SAFETY: as on x86_64: clone with CLONE_VM|CLONE_VFORK and a null stack (the child
        // keeps sp) suspends this thread until the child exits; the child runs `cbnz`, `mov`
        // and exit_group on registers only and never returns here.
        unsafe {
            core::arch::asm!(
                "svc #0",
                "cbnz x0, 2f",
                "mov x8, #{exit_group}",
                "svc #0",
                "udf #0",
                "2:",
                exit_group = const libc::SYS_exit_group,
                inlateout("x0") FLAGS => ret,
                in("x1") 0i64,
                in("x2") 0i64,
                in("x3") 0i64,
                in("x4") 0i64,
                inlateout("x8") libc::SYS_clone => _,
                options(nostack),
            );
        }
        ret
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use crate::platform::trap::none as arch;

pub use arch::*;

// The two paths to the trap instruction over this module's calls (`platform::trap`).
pub use crate::platform::trap::*;

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

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;

    #[test]
    fn numbered_calls_answer_as_libc_does() {
        // SAFETY: getpid and getppid take no argument and cannot fail.
        let (pid, ppid) = unsafe { (syscall0(nr::GETPID), syscall0(nr::GETPPID)) };
        // SAFETY: as above.
        let (want_pid, want_ppid) = unsafe { (libc::getpid(), libc::getppid()) };
        assert_eq!(pid, want_pid as i64);
        assert_eq!(ppid, want_ppid as i64);
    }

    #[test]
    fn both_paths_answer_alike() {
        // SAFETY: getppid takes no argument and cannot fail.
        let (inline, called) = unsafe { (Inline::call0(nr::GETPPID), Called::call0(nr::GETPPID)) };
        assert_eq!(inline, called);
        let mut a = [0u64; 32];
        let mut b = [0u64; 32];
        let path = c"/";
        // SAFETY: a NUL-terminated path and buffers larger than struct stat.
        let (ra, rb) = unsafe {
            (
                Inline::call4(
                    nr::NEWFSTATAT,
                    libc::AT_FDCWD as i64,
                    path.as_ptr() as i64,
                    a.as_mut_ptr() as i64,
                    0,
                ),
                Called::call4(
                    nr::NEWFSTATAT,
                    libc::AT_FDCWD as i64,
                    path.as_ptr() as i64,
                    b.as_mut_ptr() as i64,
                    0,
                ),
            )
        };
        assert_eq!((ra, rb), (0, 0));
        assert_eq!(a[..2], b[..2], "same device and inode");
    }

    #[test]
    fn vfork_child_exits_zero() {
        let pid = vfork_exit0();
        assert!(pid > 0, "vfork failed: {}", errno_text(pid));
        let mut status = 0;
        // SAFETY: waiting for our own child, with a writable status.
        let reaped = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        assert_eq!(reaped as i64, pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}

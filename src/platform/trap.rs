//! The two paths to the trap instruction over this system's `raw::syscall0`…`syscall4`, which
//! every Unix backend's `raw` module re-exports: inline in the caller ([`Inline`]) or from a
//! function that is never inlined ([`Called`]).

use super::raw::{syscall0, syscall1, syscall2, syscall3, syscall4};

/// The calls of a backend without a trap instruction of its own: each fails with ENOSYS.
#[cfg(any(
    target_os = "macos",
    all(
        target_os = "linux",
        not(any(target_arch = "x86_64", target_arch = "aarch64"))
    ),
    all(target_os = "freebsd", not(target_arch = "x86_64"))
))]
pub mod none;

/// How the trap instruction is reached: written inline in the caller's loop ([`Inline`], the
/// floor) or from a function of its own that is never inlined ([`Called`], what a program
/// pays: glibc's wrappers are such functions). On CPUs whose return-stack mitigations make
/// every `ret` dearer (AMD's SRSO "Safe RET", retbleed untraining) the kernel's own work costs
/// more when it was entered from inside a call, not only by the call's few instructions: see
/// docs/syscall-path.md.
pub trait Trap: 'static {
    /// Make system call `n` with no argument.
    ///
    /// # Safety
    /// As [`syscall0`].
    unsafe fn call0(n: i64) -> i64;
    /// # Safety
    /// As [`syscall1`].
    unsafe fn call1(n: i64, a1: i64) -> i64;
    /// # Safety
    /// As [`syscall2`].
    unsafe fn call2(n: i64, a1: i64, a2: i64) -> i64;
    /// # Safety
    /// As [`syscall3`].
    unsafe fn call3(n: i64, a1: i64, a2: i64, a3: i64) -> i64;
    /// # Safety
    /// As [`syscall4`].
    unsafe fn call4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64;
}

/// The trap instruction inline in the caller (`#[inline(always)]` all the way down).
pub struct Inline;

/// The trap instruction inside a function that is never inlined: one `call` and one `ret`
/// around every system call, as through any library wrapper.
pub struct Called;

impl Trap for Inline {
    #[inline(always)]
    unsafe fn call0(n: i64) -> i64 {
        // SAFETY: the caller upholds syscall0's contract.
        unsafe { syscall0(n) }
    }
    #[inline(always)]
    unsafe fn call1(n: i64, a1: i64) -> i64 {
        // SAFETY: the caller upholds syscall1's contract.
        unsafe { syscall1(n, a1) }
    }
    #[inline(always)]
    unsafe fn call2(n: i64, a1: i64, a2: i64) -> i64 {
        // SAFETY: the caller upholds syscall2's contract.
        unsafe { syscall2(n, a1, a2) }
    }
    #[inline(always)]
    unsafe fn call3(n: i64, a1: i64, a2: i64, a3: i64) -> i64 {
        // SAFETY: the caller upholds syscall3's contract.
        unsafe { syscall3(n, a1, a2, a3) }
    }
    #[inline(always)]
    unsafe fn call4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
        // SAFETY: the caller upholds syscall4's contract.
        unsafe { syscall4(n, a1, a2, a3, a4) }
    }
}

impl Trap for Called {
    #[inline(always)]
    unsafe fn call0(n: i64) -> i64 {
        // SAFETY: the caller upholds syscall0's contract.
        unsafe { called::syscall0(n) }
    }
    #[inline(always)]
    unsafe fn call1(n: i64, a1: i64) -> i64 {
        // SAFETY: the caller upholds syscall1's contract.
        unsafe { called::syscall1(n, a1) }
    }
    #[inline(always)]
    unsafe fn call2(n: i64, a1: i64, a2: i64) -> i64 {
        // SAFETY: the caller upholds syscall2's contract.
        unsafe { called::syscall2(n, a1, a2) }
    }
    #[inline(always)]
    unsafe fn call3(n: i64, a1: i64, a2: i64, a3: i64) -> i64 {
        // SAFETY: the caller upholds syscall3's contract.
        unsafe { called::syscall3(n, a1, a2, a3) }
    }
    #[inline(always)]
    unsafe fn call4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
        // SAFETY: the caller upholds syscall4's contract.
        unsafe { called::syscall4(n, a1, a2, a3, a4) }
    }
}

/// The system-call functions of the [`Called`] path: each is a real function (never inlined)
/// whose body is the trap instruction, like a libc wrapper without errno handling.
pub mod called {
    /// # Safety
    /// As [`super::syscall0`].
    #[inline(never)]
    pub unsafe fn syscall0(n: i64) -> i64 {
        // SAFETY: the caller upholds syscall0's contract.
        unsafe { super::syscall0(n) }
    }
    /// # Safety
    /// As [`super::syscall1`].
    #[inline(never)]
    pub unsafe fn syscall1(n: i64, a1: i64) -> i64 {
        // SAFETY: the caller upholds syscall1's contract.
        unsafe { super::syscall1(n, a1) }
    }
    /// # Safety
    /// As [`super::syscall2`].
    #[inline(never)]
    pub unsafe fn syscall2(n: i64, a1: i64, a2: i64) -> i64 {
        // SAFETY: the caller upholds syscall2's contract.
        unsafe { super::syscall2(n, a1, a2) }
    }
    /// # Safety
    /// As [`super::syscall3`].
    #[inline(never)]
    pub unsafe fn syscall3(n: i64, a1: i64, a2: i64, a3: i64) -> i64 {
        // SAFETY: the caller upholds syscall3's contract.
        unsafe { super::syscall3(n, a1, a2, a3) }
    }
    /// # Safety
    /// As [`super::syscall4`].
    #[inline(never)]
    pub unsafe fn syscall4(n: i64, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
        // SAFETY: the caller upholds syscall4's contract.
        unsafe { super::syscall4(n, a1, a2, a3, a4) }
    }
}

/// The smallest program that exits with status 0, as this system's kernel runs it from a
/// static ELF file: the machine code and the ELF header's `EI_OSABI` byte, by which FreeBSD's
/// image activator picks its ABI (Linux ignores the byte).
pub struct ExitProgram {
    pub osabi: u8,
    pub code: &'static [u8],
}

//! No raw system calls on macOS: Apple supports the system-call interface only through
//! libSystem, whose numbers and conventions are private and change between releases (and
//! arm64 macOS traps with `svc #0x80`, with the number in x16). The functions fail with
//! ENOSYS and the experiments of the raw path declare the systems that have one.

pub use crate::platform::trap::none::*;

// The two paths to the trap instruction over this module's calls (`platform::trap`).
pub use crate::platform::trap::*;

/// macOS's BSD call numbers (xnu's syscalls.master), for messages and libc's syscall():
/// never trapped into directly here.
pub mod nr {
    pub const CLOCK_GETTIME: i64 = -1;
    pub const CLOSE: i64 = 6;
    pub const FSTAT: i64 = 339;
    pub const GETPID: i64 = 20;
    pub const GETPPID: i64 = 39;
    pub const NEWFSTATAT: i64 = 470;
    pub const OPENAT: i64 = 463;
    pub const READ: i64 = 3;
    pub const WRITE: i64 = 4;
}

/// Why the raw path is unavailable: always, here.
pub fn unsupported_reason() -> Option<String> {
    Some(
        "macOS supports system calls only through libSystem: raw trap numbers are private and \
         change between releases"
            .to_string(),
    )
}

/// Turn a raw result into the errno text, for error messages.
pub fn errno_text(ret: i64) -> String {
    std::io::Error::from_raw_os_error((-ret) as i32).to_string()
}

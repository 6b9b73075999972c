//! What the Unix systems share word for word: signal handling (sigaction), getrusage, whether
//! a process lives (kill(pid, 0)); and, for the BSD-derived systems (FreeBSD, macOS), sysctl
//! by name, clock_gettime by clock id and statfs. Each backend re-exports what it uses; what
//! differs stays in the backend's own folder.

pub mod anon;
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
pub mod fadvise;
pub mod fds;
pub mod interrupt;
pub mod process;
pub mod rusage;

#[cfg(any(target_os = "freebsd", target_os = "macos"))]
pub mod bsd;

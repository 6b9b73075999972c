//! The types of the platform contract that do not depend on the OS: each backend's module
//! re-exports them (`platform::stacks::Task` is the same type on Linux and where sampling is
//! absent), so a backend only writes what differs.

pub mod cgroup;
pub mod clock;
pub mod killed;
pub mod maps;
pub mod memory;
pub mod mount;
pub mod os_error;
#[cfg(unix)]
pub mod pipe;
pub mod stacks;
pub mod swap;
pub mod systrace;
pub mod wakers;

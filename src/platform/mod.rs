//! The platform layer: the only module that knows which operating system oslab runs on.
//!
//! Everything that differs by OS lives in one folder per OS behind one face, as sysinfo and
//! rustix do: clocks, CPU pinning and topology, process resource usage, a worker's process
//! group, counters, memory cgroups, memory maps, the environment description, file-system and
//! cache control, signals, the raw system-call instruction. Callers name
//! `crate::platform::cpu`, never `platform::linux::cpu`, so adding an OS is adding a folder
//! that provides the same modules (`linux/`, `freebsd/`, `macos/`, `windows/`). The contract
//! each backend fulfils is written down in docs/architecture.md.
//!
//! Besides the backends: `unix/` holds what the Unix systems share word for word (signals,
//! getrusage, kill(pid, 0), process groups, mmap, statfs on the BSDs), `absent/` the modules
//! of features a backend does not have (perf counters, stack sampling, system-call tracing,
//! memory cgroups, PSI): the same types and functions as Linux's, every operation refused with
//! the backend's reason, so that the callers build unchanged and say in one line why the
//! feature is missing; `contract/` the OS-neutral types of the contract, and `anon.rs` the
//! experiments' anonymous memory over each system's calls.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "freebsd")]
mod freebsd;
#[cfg(target_os = "freebsd")]
use freebsd as this_os;
#[cfg(target_os = "freebsd")]
pub use freebsd::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as this_os;
#[cfg(target_os = "macos")]
pub use macos::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as this_os;
#[cfg(windows)]
pub use windows::*;

#[cfg(unix)]
mod unix;

#[cfg(unix)]
mod trap;

#[cfg(not(target_os = "linux"))]
mod absent;

pub mod anon;
#[cfg(unix)]
use unix::anon as this_os_anon;
#[cfg(windows)]
use windows::anon as this_os_anon;

mod contract;
pub use contract::os_error::OsError;
mod cpu_list;
#[cfg(not(target_os = "linux"))]
mod cpuid;

/// The permissions a plain create gives a new file (0666 less the umask on Unix), for files
/// written through a temporary one; `None` where the system's defaults already apply
/// (Windows' inherited ACLs).
pub fn new_file_permissions() -> Option<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(std::fs::Permissions::from_mode(0o666))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Write back every file system's dirty data (sync(2)), as UnixBench's `Run` does before each
/// pass and fstime before each of its tests. Nothing on Windows, which has no such call short
/// of flushing each volume as an administrator.
pub fn sync_all() {
    #[cfg(unix)]
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe {
        libc::sync()
    };
}

/// A round trip into the kernel that does no work: getppid(2) on Unix, which every kernel
/// answers from the calling task. The host's kernel canary (`measure::host`) times a few.
/// `None` on Windows, where oslab has not chosen one yet.
pub fn null_call() -> Option<fn()> {
    #[cfg(unix)]
    {
        Some(|| {
            // SAFETY: getppid(2) takes no arguments and cannot fail.
            std::hint::black_box(unsafe { libc::getppid() });
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Sync, sleep `first`, sync, sleep `second`: the "sync and let it settle" with which
/// UnixBench's `Run` starts every pass and fstime each of its tests, so that what came before
/// is written back before what is measured next.
pub fn sync_and_settle(first: std::time::Duration, second: std::time::Duration) {
    sync_all();
    std::thread::sleep(first);
    sync_all();
    std::thread::sleep(second);
}

/// In a test whose subject emulation cannot show (pre-faulting, vfork, fault and switch
/// counts, /proc views): `true`, with the reason on stderr, under an emulator (qemu-user,
/// Rosetta 2, Wine: `env::emulation`), so the test checks what emulation does instead of
/// failing; `false` natively.
#[cfg(test)]
pub fn unsupported_under_emulation(what: &str) -> bool {
    match env::emulation() {
        Some(why) => {
            eprintln!("{what}: unsupported under emulation ({why})");
            true
        }
        None => false,
    }
}

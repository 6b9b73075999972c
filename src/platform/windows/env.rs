//! The machine description on Windows: the version from the registry
//! (`HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion`), the processor's name and clock from
//! `HKLM\HARDWARE\DESCRIPTION\System\CentralProcessor\0` (CPUID where missing), memory from
//! GlobalMemoryStatusEx, caches from GetLogicalProcessorInformation, and Wine when it is the
//! one answering Windows' calls.

use std::ffi::OsStr;

use windows_sys::Win32::Foundation::{CloseHandle, ERROR_SUCCESS};
use windows_sys::Win32::Security::{
    GetTokenInformation, TOKEN_ELEVATION, TOKEN_QUERY, TokenElevation,
};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows_sys::Win32::System::Registry::{
    HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RRF_RT_REG_SZ, RegGetValueW,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use super::text::{from_wide, wide};
use crate::model::env::{Cache, CoreKind, Environment};

const VERSION_KEY: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
const CPU_KEY: &str = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0";

/// A string value under HKEY_LOCAL_MACHINE.
fn reg_string(key: &str, value: &str) -> Option<String> {
    let (key, value) = (wide(OsStr::new(key)), wide(OsStr::new(value)));
    let mut buffer = vec![0u16; 512];
    let mut bytes = (buffer.len() * 2) as u32;
    // SAFETY: NUL-terminated names and a buffer of `bytes` writable bytes.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            buffer.as_mut_ptr().cast(),
            &mut bytes,
        )
    };
    (rc == ERROR_SUCCESS)
        .then(|| from_wide(&buffer).trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A DWORD value under HKEY_LOCAL_MACHINE.
fn reg_dword(key: &str, value: &str) -> Option<u32> {
    let (key, value) = (wide(OsStr::new(key)), wide(OsStr::new(value)));
    let mut number = 0u32;
    let mut bytes = 4u32;
    // SAFETY: NUL-terminated names and a 4-byte buffer.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut number as *mut u32).cast(),
            &mut bytes,
        )
    };
    (rc == ERROR_SUCCESS).then_some(number)
}

/// The caches of CPU `cpu`.
pub fn caches_of(cpu: usize) -> Vec<Cache> {
    super::cpu::caches(cpu)
}

/// Windows names no kinds of core to oslab yet (GetSystemCpuSetInformation's efficiency
/// classes would): one kind.
pub fn core_kinds() -> Vec<CoreKind> {
    Vec::new()
}

/// Wine's version, when Wine answers Windows' calls (its ntdll exports `wine_get_version`).
fn wine_version() -> Option<String> {
    let ntdll = wide(OsStr::new("ntdll.dll"));
    // SAFETY: a NUL-terminated module name; ntdll is loaded in every process.
    let module = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
    if module.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated export name.
    let get = unsafe { GetProcAddress(module, c"wine_get_version".as_ptr().cast()) }?;
    // SAFETY: Wine's `const char *wine_get_version(void)`, a static NUL-terminated string.
    let version = unsafe {
        let get: unsafe extern "C" fn() -> *const std::ffi::c_char = std::mem::transmute(get);
        let text = get();
        (!text.is_null()).then(|| {
            std::ffi::CStr::from_ptr(text)
                .to_string_lossy()
                .into_owned()
        })
    };
    Some(version.unwrap_or_else(|| "unknown version".into()))
}

/// Wine, when it runs oslab: the figures are then of the host's kernel through Wine, not of
/// Windows.
pub fn emulation() -> Option<String> {
    wine_version().map(|v| {
        format!("Wine {v} (Windows calls answered by Wine on another kernel, not by Windows)")
    })
}

/// Whether this process runs elevated (as an administrator): Windows' counterpart of root.
fn elevated() -> bool {
    let mut token = std::ptr::null_mut();
    // SAFETY: this process's pseudo-handle and a pointer to a local; closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return false;
    }
    let mut elevation = TOKEN_ELEVATION { TokenIsElevated: 0 };
    let mut size = 0u32;
    // SAFETY: the token opened above and a sized TOKEN_ELEVATION.
    let asked = unsafe {
        GetTokenInformation(
            token,
            TokenElevation,
            (&mut elevation as *mut TOKEN_ELEVATION).cast(),
            std::mem::size_of::<TOKEN_ELEVATION>() as u32,
            &mut size,
        )
    };
    // SAFETY: closing the token opened above.
    unsafe { CloseHandle(token) };
    asked != 0 && elevation.TokenIsElevated != 0
}

/// `10.0.19045.3803`: major, minor, build and update revision.
fn kernel_release() -> Option<String> {
    let build = reg_string(VERSION_KEY, "CurrentBuildNumber")?;
    let major = reg_dword(VERSION_KEY, "CurrentMajorVersionNumber");
    let minor = reg_dword(VERSION_KEY, "CurrentMinorVersionNumber");
    let revision = reg_dword(VERSION_KEY, "UBR");
    Some(match (major, minor) {
        (Some(major), Some(minor)) => match revision {
            Some(r) => format!("{major}.{minor}.{build}.{r}"),
            None => format!("{major}.{minor}.{build}"),
        },
        _ => reg_string(VERSION_KEY, "CurrentVersion")
            .map_or_else(|| build.clone(), |v| format!("{v}.{build}")),
    })
}

/// Describe this machine. Never fails: unreadable facts are left empty.
pub fn collect() -> Environment {
    let cpuid = crate::platform::cpuid::facts();
    let cpus = super::memory::processors();
    let product = reg_string(VERSION_KEY, "ProductName");
    let display =
        reg_string(VERSION_KEY, "DisplayVersion").or_else(|| reg_string(VERSION_KEY, "CSDVersion"));
    let mut e = Environment {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        os_release: product.map(|p| match display {
            Some(d) => format!("{p} {d}"),
            None => p,
        }),
        kernel_release: kernel_release(),
        kernel_version: reg_string(VERSION_KEY, "BuildLabEx"),
        hostname: std::env::var("COMPUTERNAME").ok(),
        machine: reg_string(r"SOFTWARE\Microsoft\Cryptography", "MachineGuid")
            .and_then(|id| crate::model::identity::machine_hash(&id)),
        cpu_model: reg_string(CPU_KEY, "ProcessorNameString").or(cpuid.model),
        cpu_mhz: reg_dword(CPU_KEY, "~MHz").map(f64::from),
        logical_cpus: Some(cpus),
        online_cpus: Some(super::cpu::format_list(
            &(0..cpus as usize).collect::<Vec<_>>(),
        )),
        cpus_allowed: Some(super::cpu::format_list(&super::cpu::allowed())),
        caches: caches_of(0),
        page_size: Some(super::memory::page_size()),
        tsc_invariant: cpuid.tsc_invariant,
        xsave_bytes: cpuid.xsave_bytes,
        hypervisor: cpuid.hypervisor,
        emulation: emulation(),
        oslab_version: env!("CARGO_PKG_VERSION").to_string(),
        oslab_commit: option_env!("OSLAB_GIT_COMMIT").map(str::to_string),
        rustc_version: option_env!("OSLAB_RUSTC_VERSION").map(str::to_string),
        is_root: elevated(),
        ..Environment::default()
    };
    if let Ok(m) = super::memory::meminfo() {
        e.mem_total_bytes = Some(m.total);
        e.mem_available_bytes = Some(m.available);
        e.swap_total_bytes = Some(m.swap_total);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_this_machine() {
        let e = collect();
        assert_eq!(e.os, "windows");
        assert!(e.logical_cpus.is_some_and(|n| n > 0));
        assert!(e.mem_total_bytes.is_some_and(|m| m > 0));
        assert!(e.kernel_release.is_some());
    }
}

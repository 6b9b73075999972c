//! CPUs on Windows: the process's affinity mask (GetProcessAffinityMask), a thread pinned with
//! SetThreadAffinityMask, GetCurrentProcessorNumber, and the caches from
//! GetLogicalProcessorInformation. Masks are one processor group's: oslab sees at most the 64
//! CPUs of the group it starts in.

pub use crate::platform::cpu_list::{format_list, parse_list};

use crate::model::env::Cache;
use windows_sys::Win32::Foundation::CloseHandle;
use windows_sys::Win32::System::SystemInformation::{
    CacheData, CacheInstruction, CacheUnified, GetLogicalProcessorInformation, RelationCache,
    SYSTEM_LOGICAL_PROCESSOR_INFORMATION,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessorNumber, GetCurrentThread, GetProcessAffinityMask,
    OpenThread, SetThreadAffinityMask, THREAD_QUERY_INFORMATION, THREAD_SET_INFORMATION,
};

/// The CPUs of a mask, ascending.
fn cpus_of(mask: usize) -> Vec<usize> {
    (0..usize::BITS as usize)
        .filter(|&cpu| mask & (1 << cpu) != 0)
        .collect()
}

/// The mask of `cpus`; an error for an empty list or a CPU past the group's 64.
fn mask_of(cpus: &[usize]) -> std::io::Result<usize> {
    let mut mask = 0usize;
    for &cpu in cpus {
        if cpu >= usize::BITS as usize {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is outside the processor group oslab runs in"),
            ));
        }
        mask |= 1 << cpu;
    }
    if mask == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no CPU to pin to",
        ));
    }
    Ok(mask)
}

/// The CPUs this process may run on.
pub fn allowed() -> Vec<usize> {
    let (mut process, mut system) = (0usize, 0usize);
    // SAFETY: the pseudo-handle of this process and pointers to locals.
    let ok = unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut process, &mut system) };
    if ok == 0 || process == 0 {
        return vec![0];
    }
    cpus_of(process)
}

/// Windows can pin threads: no refusal.
pub fn pinning_refusal() -> Option<&'static str> {
    None
}

/// Pin the calling thread to `cpus`.
pub fn pin(cpus: &[usize]) -> std::io::Result<()> {
    let mask = mask_of(cpus)?;
    // SAFETY: the pseudo-handle of the calling thread.
    if unsafe { SetThreadAffinityMask(GetCurrentThread(), mask) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Pin thread `tid` (a thread id; 0 is the calling thread) to `cpus`.
pub fn pin_task(tid: i32, cpus: &[usize]) -> std::io::Result<()> {
    if tid == 0 {
        return pin(cpus);
    }
    let mask = mask_of(cpus)?;
    // SAFETY: OpenThread with plain values; the handle is closed below.
    let thread = unsafe {
        OpenThread(
            THREAD_SET_INFORMATION | THREAD_QUERY_INFORMATION,
            0,
            tid as u32,
        )
    };
    if thread.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a thread handle we own.
    let done = unsafe { SetThreadAffinityMask(thread, mask) };
    let error = std::io::Error::last_os_error();
    // SAFETY: closing the handle opened above.
    unsafe { CloseHandle(thread) };
    if done == 0 { Err(error) } else { Ok(()) }
}

/// Each CPU's device interrupts since boot: `None`, Windows publishes interrupt counts per CPU
/// only through performance counters, which oslab does not read.
pub fn device_interrupts() -> Option<Vec<u64>> {
    None
}

/// The CPU the calling thread runs on (in its processor group).
pub fn current() -> Option<usize> {
    // SAFETY: no preconditions.
    Some(unsafe { GetCurrentProcessorNumber() } as usize)
}

/// The logical processor records of the machine.
fn processor_records() -> Vec<SYSTEM_LOGICAL_PROCESSOR_INFORMATION> {
    let mut bytes = 0u32;
    // SAFETY: a size query: a null buffer and a pointer to a local.
    unsafe { GetLogicalProcessorInformation(std::ptr::null_mut(), &mut bytes) };
    let size = std::mem::size_of::<SYSTEM_LOGICAL_PROCESSOR_INFORMATION>();
    let mut records = vec![SYSTEM_LOGICAL_PROCESSOR_INFORMATION::default(); bytes as usize / size];
    let mut bytes = (records.len() * size) as u32;
    // SAFETY: `records` has `bytes` writable bytes.
    if records.is_empty()
        || unsafe { GetLogicalProcessorInformation(records.as_mut_ptr(), &mut bytes) } == 0
    {
        return Vec::new();
    }
    records.truncate(bytes as usize / size);
    records
}

/// The caches CPU `cpu` uses, from the smallest level up.
pub fn caches(cpu: usize) -> Vec<Cache> {
    let mut caches: Vec<Cache> = processor_records()
        .iter()
        .filter(|r| r.Relationship == RelationCache && r.ProcessorMask & (1 << cpu) != 0)
        .filter_map(|r| {
            // SAFETY: a RelationCache record holds the Cache member of the union.
            let c = unsafe { r.Anonymous.Cache };
            let kind = match c.Type {
                t if t == CacheData => "Data",
                t if t == CacheInstruction => "Instruction",
                t if t == CacheUnified => "Unified",
                _ => return None,
            };
            Some(Cache {
                level: u32::from(c.Level),
                kind: kind.to_string(),
                size_bytes: u64::from(c.Size),
                line_bytes: Some(u32::from(c.LineSize)).filter(|&l| l > 0),
                // 0xFF: fully associative.
                ways: Some(u32::from(c.Associativity)).filter(|&w| w > 0 && w < 0xFF),
                shared_cpus: Some(format_list(&cpus_of(r.ProcessorMask))),
            })
        })
        .collect();
    caches.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    caches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(cpus_of(0b1011), vec![0, 1, 3]);
        assert_eq!(mask_of(&[0, 3]).unwrap(), 0b1001);
        assert!(mask_of(&[]).is_err());
        assert!(mask_of(&[64]).is_err());
    }

    #[test]
    fn pins_the_calling_thread() {
        let cpus = allowed();
        assert!(!cpus.is_empty());
        pin(&cpus[..1]).unwrap();
        pin(&cpus).unwrap();
    }
}

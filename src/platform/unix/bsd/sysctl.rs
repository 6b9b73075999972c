//! sysctl(3) by name: the BSDs' one door to what Linux spreads over /proc and /sys.

use std::ffi::CString;

/// The raw bytes of sysctl `name`; `None` when it does not exist or cannot be read.
pub fn bytes(name: &str) -> Option<Vec<u8>> {
    let cname = CString::new(name).ok()?;
    let mut len: libc::size_t = 0;
    // SAFETY: a null buffer with a length pointer asks for the size only.
    let rc = unsafe {
        libc::sysctlbyname(
            cname.as_ptr(),
            std::ptr::null_mut(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || len == 0 {
        return None;
    }
    // Room for growth between the two calls (a list of processes or mappings).
    len += len / 8 + 64;
    let mut buf = vec![0u8; len];
    // SAFETY: `buf` has `len` writable bytes; the kernel writes at most `len` and says how many.
    let rc = unsafe {
        libc::sysctlbyname(
            cname.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    buf.truncate(len);
    Some(buf)
}

/// A string sysctl (`hw.model`, `kern.osrelease`), trailing NULs and blanks removed.
pub fn string(name: &str) -> Option<String> {
    let raw = bytes(name)?;
    let text = String::from_utf8_lossy(&raw);
    let text = text.trim_end_matches('\0').trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// An integer sysctl of any width the kernel gives (int, long, quad), as u64.
pub fn number(name: &str) -> Option<u64> {
    let raw = bytes(name)?;
    match raw.len() {
        4 => Some(u32::from_ne_bytes(raw.try_into().ok()?) as u64),
        8 => Some(u64::from_ne_bytes(raw.try_into().ok()?)),
        _ => None,
    }
}

/// A list of C longs (`kern.cp_times`).
#[cfg(target_os = "freebsd")]
pub fn longs(name: &str) -> Option<Vec<i64>> {
    let raw = bytes(name)?;
    Some(
        raw.chunks_exact(8)
            .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect(),
    )
}

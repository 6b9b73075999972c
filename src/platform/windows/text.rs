//! UTF-16 strings to and from Windows' wide-character calls (the backend's and the Windows
//! experiments').

use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;

/// `text` as a NUL-terminated UTF-16 string.
pub fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain(std::iter::once(0)).collect()
}

/// The UTF-16 text up to the first NUL (or the whole buffer).
pub fn from_wide(units: &[u16]) -> String {
    let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
    String::from_utf16_lossy(&units[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let w = wide(OsStr::new("C:\\é"));
        assert_eq!(w.last(), Some(&0));
        assert_eq!(from_wide(&w), "C:\\é");
    }
}

//! Parsing smaps (proc(5)): one mapping per header line with its fields, strict about what it cannot read.

use super::*;

/// Why smaps text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct ParseError {
    pub line: usize,
    pub what: String,
}

/// Parse the text of `/proc/PID/smaps` (or `maps`, whose figures are then 0).
///
/// A line whose first word ends with `:` is a field of the mapping above it (`Rss:  12 kB`);
/// any other line starts a mapping. Fields oslab does not show, and ones without a `kB` unit
/// (`THPeligible`, `VmFlags`), are skipped, so fields added by newer kernels do no harm.
pub fn parse_smaps(text: &[u8]) -> Result<Vec<Region>, ParseError> {
    let mut regions: Vec<Region> = Vec::new();
    for (index, raw) in text.split(|&b| b == b'\n').enumerate() {
        if raw.is_empty() {
            continue;
        }
        let line = String::from_utf8_lossy(raw);
        let fail = |what: String| ParseError {
            line: index + 1,
            what,
        };
        let first = line.split(' ').next().unwrap_or_default();
        if let Some(key) = first.strip_suffix(':') {
            let region = regions
                .last_mut()
                .ok_or_else(|| fail(format!("field {key} before the first mapping")))?;
            let slot = match key {
                "Rss" => &mut region.rss_kb,
                "Anonymous" => &mut region.anonymous_kb,
                "Swap" => &mut region.swap_kb,
                "AnonHugePages" => &mut region.anon_huge_pages_kb,
                _ => continue,
            };
            let mut words = line[first.len()..].split_ascii_whitespace();
            *slot = match (words.next(), words.next()) {
                // A figure whose bytes pass u64 is no memory's.
                (Some(value), Some("kB")) => value
                    .parse::<u64>()
                    .ok()
                    .filter(|kb| kb.checked_mul(1024).is_some())
                    .ok_or_else(|| fail(format!("{key}: {value} is not a number of kB")))?,
                _ => return Err(fail(format!("{key}: expected `N kB`"))),
            };
        } else {
            regions.push(parse_header(&line, index + 1)?);
        }
    }
    Ok(regions)
}

/// `start-end perms offset major:minor inode [path]`; the kernel pads before the path with
/// spaces, and everything after the padding is the path, spaces included.
pub(super) fn parse_header(line: &str, number: usize) -> Result<Region, ParseError> {
    let fail = |what: String| ParseError { line: number, what };
    let mut rest = line;
    let mut word = || {
        let trimmed = rest.trim_start_matches(' ');
        let (w, r) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
        rest = r;
        w
    };
    let (range, perms, offset, dev, inode) = (word(), word(), word(), word(), word());
    let hex = |what: &str, text: &str| {
        u64::from_str_radix(text, 16)
            .map_err(|_| fail(format!("{what} {text:?} is not hexadecimal")))
    };
    let (start, end) = range
        .split_once('-')
        .ok_or_else(|| fail(format!("{range:?} is not an address range start-end")))?;
    let (start, end) = (hex("start", start)?, hex("end", end)?);
    if end < start {
        return Err(fail(format!("address range {range} ends before it starts")));
    }
    if perms.len() != 4 || !perms.is_ascii() {
        return Err(fail(format!(
            "permissions {perms:?} are not four characters"
        )));
    }
    let offset = hex("offset", offset)?;
    match dev.split_once(':') {
        Some((major, minor)) if hex("major", major).is_ok() && hex("minor", minor).is_ok() => {}
        _ => return Err(fail(format!("device {dev:?} is not major:minor"))),
    }
    let inode = inode
        .parse()
        .map_err(|_| fail(format!("inode {inode:?} is not a number")))?;
    let path = rest.trim_start_matches(' ');
    Ok(Region {
        start,
        end,
        perms: perms.to_string(),
        offset,
        dev: dev.to_string(),
        inode,
        path: (!path.is_empty()).then(|| path.to_string()),
        rss_kb: 0,
        anonymous_kb: 0,
        swap_kb: 0,
        anon_huge_pages_kb: 0,
    })
}

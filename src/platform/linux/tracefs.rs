//! tracefs: the ids of tracepoints, for perf_event_open, and the layout of their records
//! (`events/CATEGORY/EVENT/format`). Mounted at its standard place when missing and allowed,
//! as `perf` does.

use perf_event::events::Tracepoint;

/// Where tracefs is found: its own mount point, or inside debugfs on older systems.
const ROOTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The text of `events/CATEGORY/EVENT/FILE` in the first tracefs that has it.
fn read(category: &str, event: &str, file: &str) -> Option<String> {
    ROOTS.iter().find_map(|root| {
        std::fs::read_to_string(format!("{root}/events/{category}/{event}/{file}")).ok()
    })
}

/// Why a tracepoint could not be looked up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TracefsError {
    #[error(
        "the {category}:{event} tracepoint is not available (no tracefs, or a kernel built without it)"
    )]
    Missing { category: String, event: String },
    #[error("tracefs is not readable without root (mount it and allow access, or run as root)")]
    NotRoot,
}

/// A tracepoint `category:event`, looked up in tracefs.
pub fn tracepoint(category: &str, event: &str) -> Result<Tracepoint, TracefsError> {
    let read_id = || read(category, event, "id").and_then(|s| s.trim().parse::<u64>().ok());
    if let Some(id) = read_id() {
        return Ok(Tracepoint::with_id(id));
    }
    // perf mounts tracefs itself when it is missing; do the same when allowed to.
    if mount_tracefs()
        && let Some(id) = read_id()
    {
        return Ok(Tracepoint::with_id(id));
    }
    Err(if is_root() {
        TracefsError::Missing {
            category: category.to_string(),
            event: event.to_string(),
        }
    } else {
        TracefsError::NotRoot
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn mount_tracefs() -> bool {
    if !is_root() {
        return false;
    }
    let target = c"/sys/kernel/tracing";
    // SAFETY: all pointers are NUL-terminated constants; mounting tracefs on its standard
    // mount point is what `perf` does when tracefs is absent, and changes nothing else.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EBUSY)
}

/// The byte offset of field `field` in the records of tracepoint `category:event`, from its
/// format file (a line `field:long id;\toffset:8;\tsize:8;\tsigned:1;`).
pub fn field_offset(category: &str, event: &str, field: &str) -> Option<usize> {
    parse_offset(&read(category, event, "format")?, field)
}

/// The byte offset and size of field `field` in the records of tracepoint `category:event`.
pub fn field_layout(category: &str, event: &str, field: &str) -> Option<(usize, usize)> {
    parse_layout(&read(category, event, "format")?, field)
}

fn parse_offset(format: &str, field: &str) -> Option<usize> {
    parse_layout(format, field).map(|(offset, _)| offset)
}

fn parse_layout(format: &str, field: &str) -> Option<(usize, usize)> {
    format.lines().find_map(|line| {
        let mut parts = line.trim().split(';').map(str::trim);
        let declaration = parts.next()?.strip_prefix("field:")?;
        // The name is the declaration's last word, without an array's brackets.
        let name = declaration.rsplit(' ').next()?.split('[').next()?;
        if name != field {
            return None;
        }
        let parts: Vec<&str> = parts.collect();
        let number = |key: &str| {
            parts
                .iter()
                .find_map(|p| p.strip_prefix(key)?.parse::<usize>().ok())
        };
        Some((number("offset:")?, number("size:")?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_read_from_a_format_file() {
        let format = "name: sys_enter\nID: 443\nformat:\n\
            \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
            \tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\
            \tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n";
        assert_eq!(parse_offset(format, "id"), Some(8));
        assert_eq!(parse_offset(format, "args"), Some(16));
        assert_eq!(parse_offset(format, "common_type"), Some(0));
        assert_eq!(parse_offset(format, "ret"), None);
        assert_eq!(parse_layout(format, "id"), Some((8, 8)));
        assert_eq!(parse_layout(format, "common_type"), Some((0, 2)));
    }
}

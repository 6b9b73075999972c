//! What each mapping is: executable or library text, rodata, RELRO, data, bss; heap, stack, vDSO, vvar, vsyscall, anonymous; totals per kind.

use super::*;

/// Classify regions in address order. `exe` is the target of `/proc/PID/exe` (as readlink
/// returns it, ` (deleted)` included, the way smaps prints the same file); without it no
/// mapping is taken as the executable.
pub fn classify(regions: Vec<Region>, exe: Option<&str>) -> Vec<Mapping> {
    let mut mappings: Vec<Mapping> = Vec::with_capacity(regions.len());
    for region in regions {
        let (kind, part) = match region.path.as_deref() {
            None => match mappings.last() {
                Some(prev) if is_bss_of(prev, &region) => (prev.kind, Some(Part::Bss)),
                _ => (Kind::Anonymous, None),
            },
            Some(path) => match kernel_name(path) {
                Some("heap") => (Kind::Heap, None),
                Some(name) if name == "stack" || name.starts_with("stack:") => (Kind::Stack, None),
                Some("vdso") => (Kind::Vdso, None),
                Some(name) if name.starts_with("vvar") => (Kind::Vvar, None),
                Some("vsyscall") => (Kind::Vsyscall, None),
                Some(name) if name.starts_with("anon:") || name.starts_with("anon_shmem:") => {
                    (Kind::Anonymous, None)
                }
                Some(_) => (Kind::Other, None),
                None if Some(path) == exe => (Kind::Executable, Some(file_part(&region))),
                None if is_shared_object(path) => (Kind::Library, Some(file_part(&region))),
                None => (Kind::File, None),
            },
        };
        if part == Some(Part::Data)
            && let Some(prev) = mappings.last_mut()
            && is_relro_before(prev, &region)
        {
            prev.part = Some(Part::Relro);
        }
        mappings.push(Mapping { region, kind, part });
    }
    mappings
}

/// Whether `prev` is the RELRO of the object whose writable data is `data`: linkers place
/// RELRO directly below the data (ld.bfd at the head of the writable segment, which the loader
/// then mprotects; lld as a segment of its own whose last file page the data segment shares),
/// so the two touch in memory. An object linked with `-z norelro` whose read-only segment
/// happens to end where its data starts would have that segment labelled RELRO.
pub(super) fn is_relro_before(prev: &Mapping, data: &Region) -> bool {
    prev.part == Some(Part::Rodata)
        && prev.region.private()
        && prev.region.path == data.path
        && prev.region.end == data.start
}

/// Whether `region` is the bss of the ELF object whose mapping `prev` is: the loader maps the
/// zero-filled rest of the writable segment anonymously, directly after its file-backed data.
/// An unrelated anonymous mapping placed exactly there would be labelled bss too.
pub(super) fn is_bss_of(prev: &Mapping, region: &Region) -> bool {
    matches!(prev.kind, Kind::Executable | Kind::Library)
        && prev.part == Some(Part::Data)
        && prev.region.private()
        && prev.region.end == region.start
        && region.perms == "rw-p"
        && region.inode == 0
}

/// `heap` for `[heap]`: the kernel's names for mappings that are not files.
pub(super) fn kernel_name(path: &str) -> Option<&str> {
    path.strip_prefix('[')?.strip_suffix(']')
}

/// `libc.so.6`, `ld-linux-x86-64.so.2`, `libfoo.so`, also after the file was deleted.
pub(super) fn is_shared_object(path: &str) -> bool {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".so") || name.contains(".so.")
}

/// The part of an ELF object a file mapping holds, from the permissions the loader gave it.
fn file_part(region: &Region) -> Part {
    if region.executable() {
        Part::Text
    } else if region.writable() {
        Part::Data
    } else if region.readable() {
        Part::Rodata
    } else {
        Part::Reserved
    }
}

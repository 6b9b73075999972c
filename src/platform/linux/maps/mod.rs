//! `oslab maps [PID]`: a process's memory map read from `/proc/PID/smaps`, each mapping
//! classified (the executable's text, rodata, RELRO, data and bss, heap, stack, libraries,
//! vDSO, vvar, vsyscall, anonymous and other file mappings), plus what ASLR does to it.
//!
//! Without a PID the target is a fresh child: this binary re-executed as the hidden
//! `oslab maps-child` subcommand, which fills a heap block and then waits on a pipe, so its map
//! is that of a typical dynamically linked program caught mid-run. A second child is started
//! beside it only to compare base addresses: whether ASLR moved each region between two
//! executions is observed, not inferred from a sysctl.
//!
//! smaps is parsed here rather than with the `procfs` crate: procfs 0.18 rejects a whole
//! smaps file when one mapped path is not UTF-8 (`read_line` fails) and panics on a path that
//! starts with `/SYSV` and is shorter than 13 bytes; a map names any file the process mapped.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, anyhow};

use crate::model::error::UserError;

mod parse;
pub use parse::*;
mod classify;
pub use classify::*;
mod inspect;
pub use inspect::*;

/// What the child allocates with malloc: below glibc's 128 KiB mmap threshold
/// (`M_MMAP_THRESHOLD`, mallopt(3)), so the block comes from the brk heap and shows in `[heap]`.
pub const CHILD_BLOCK_BYTES: usize = 64 * 1024;

/// The fixed address of the legacy vsyscall page on x86-64 (the same in every process).
pub const VSYSCALL_ADDRESS: u64 = 0xffff_ffff_ff60_0000;

/// One line of `/proc/PID/maps` with the smaps figures oslab shows, as the kernel reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    /// `rwxp` as printed: read, write, execute, then `p` private (copy-on-write) or `s` shared.
    pub perms: String,
    /// File offset of the first page (0 for anonymous mappings).
    pub offset: u64,
    /// `major:minor` in hex as printed, `00:00` for anonymous and kernel mappings.
    pub dev: String,
    pub inode: u64,
    /// The file or the kernel's `[name]`; `None` for an anonymous mapping. A path that is not
    /// UTF-8 keeps its valid parts, the rest becomes U+FFFD.
    pub path: Option<String>,
    /// Resident in RAM, kB.
    pub rss_kb: u64,
    /// Resident and anonymous (not backed by a file: heap, stack, copy-on-write copies), kB.
    pub anonymous_kb: u64,
    /// Swapped out, kB.
    pub swap_kb: u64,
    /// Anonymous memory backed by transparent huge pages, kB.
    pub anon_huge_pages_kb: u64,
}

impl Region {
    pub fn size_bytes(&self) -> u64 {
        self.end - self.start
    }

    fn readable(&self) -> bool {
        self.perms.as_bytes().first() == Some(&b'r')
    }

    fn writable(&self) -> bool {
        self.perms.as_bytes().get(1) == Some(&b'w')
    }

    fn executable(&self) -> bool {
        self.perms.as_bytes().get(2) == Some(&b'x')
    }

    fn private(&self) -> bool {
        self.perms.as_bytes().get(3) == Some(&b'p')
    }
}

/// What a mapping is, in the order the summary lists kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The program's own file (`/proc/PID/exe`) and its bss.
    Executable,
    /// The brk area malloc grows for small blocks.
    Heap,
    /// The main thread's stack (other threads' stacks are anonymous mappings).
    Stack,
    /// A shared object (`*.so`, `*.so.N`) and its bss.
    Library,
    /// The kernel's virtual shared object: clock_gettime and friends without a system call.
    Vdso,
    /// Kernel data the vDSO reads (`[vvar]`, and `[vvar_vclock]` since Linux 6.13).
    Vvar,
    /// The legacy page of pre-vDSO system call entry points, at a fixed address.
    Vsyscall,
    /// mmap without a file (malloc above its threshold, thread stacks, guard pages, loaders'
    /// scratch), including ones named with PR_SET_VMA_ANON_NAME (`[anon:NAME]`).
    Anonymous,
    /// Any other mapped file: locale archives, caches, shared memory, memfd.
    File,
    /// A kernel `[name]` oslab does not know (e.g. `[uprobes]`).
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Executable => "executable",
            Kind::Heap => "heap",
            Kind::Stack => "stack",
            Kind::Library => "library",
            Kind::Vdso => "vdso",
            Kind::Vvar => "vvar",
            Kind::Vsyscall => "vsyscall",
            Kind::Anonymous => "anonymous",
            Kind::File => "file",
            Kind::Other => "other",
        }
    }
}

/// Which part of an ELF object (the executable or a library) a mapping holds, told by the
/// permissions the loader set from the program headers, and for RELRO and bss by what the
/// mapping borders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Executable code (`r-x`).
    Text,
    /// Read-only: ELF headers, constants, unwind tables (`r--`).
    Rodata,
    /// Read-only after relocation (`-z relro`, every major distribution's default): tables the
    /// loader writes at start-up (GOT, vtables, `.data.rel.ro`), then mprotects read-only. The
    /// `r--` mapping that ends where the object's writable data begins; its pages were written,
    /// so they are anonymous copies of the file's.
    Relro,
    /// Initialised writable data (`rw-`, file-backed).
    Data,
    /// Zero-initialised data past the file's end: the anonymous `rw-p` mapping that starts
    /// exactly where the object's writable file mapping ends.
    Bss,
    /// `---`: address space the loader reserved between segments, not accessible.
    Reserved,
}

impl Part {
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Text => "text",
            Part::Rodata => "rodata",
            Part::Relro => "relro",
            Part::Data => "data",
            Part::Bss => "bss",
            Part::Reserved => "reserved",
        }
    }

    fn of_file_mapping(region: &Region) -> Part {
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
}

/// A region and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub region: Region,
    pub kind: Kind,
    /// Set for [`Kind::Executable`] and [`Kind::Library`] only.
    pub part: Option<Part>,
}

impl Mapping {
    /// `executable text`, `library bss`, `heap`, `vDSO`…
    pub fn label(&self) -> String {
        label(self.kind, self.part)
    }
}

/// The words for a kind and part, shared by the table and the summary.
pub fn label(kind: Kind, part: Option<Part>) -> String {
    let name = match kind {
        Kind::Vdso => "vDSO",
        other => other.as_str(),
    };
    match part {
        Some(part) => format!("{name} {}", part.as_str()),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests;

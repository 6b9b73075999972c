//! A process's memory map as plain records: each mapping ([`Region`]) with what it is
//! ([`Kind`], [`Part`]), totals per kind ([`summarize`]), one process's map ([`Snapshot`]) and
//! everything `oslab maps` shows ([`Report`]): the map and what ASLR moved between two fresh
//! children. Reading and classifying a map is the platform's (`platform::maps`); starting the
//! children is the harness's (`harness::maps`). Nothing here does I/O.

/// What the child allocates with malloc: below glibc's 128 KiB mmap threshold
/// (`M_MMAP_THRESHOLD`, mallopt(3)), so the block comes from the brk heap and shows in `[heap]`.
pub const CHILD_BLOCK_BYTES: usize = 64 * 1024;

/// The fixed address of the legacy vsyscall page on x86-64 (the same in every process).
pub const VSYSCALL_ADDRESS: u64 = 0xffff_ffff_ff60_0000;

/// One mapping of a process's address space with the memory figures oslab shows, as the
/// kernel reported it.
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

    pub fn readable(&self) -> bool {
        self.perms.as_bytes().first() == Some(&b'r')
    }

    pub fn writable(&self) -> bool {
        self.perms.as_bytes().get(1) == Some(&b'w')
    }

    pub fn executable(&self) -> bool {
        self.perms.as_bytes().get(2) == Some(&b'x')
    }

    pub fn private(&self) -> bool {
        self.perms.as_bytes().get(3) == Some(&b'p')
    }
}

/// What a mapping is, in the order the summary lists kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The program's own file (the process's executable) and its bss.
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

/// Mappings, size and memory of one kind and part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: usize,
    pub size_bytes: u64,
    pub rss_kb: u64,
    pub anonymous_kb: u64,
    pub swap_kb: u64,
}

impl Totals {
    /// Saturating: the figures come from text that may be garbled, whose sum can pass u64.
    fn add(&mut self, region: &Region) {
        self.count += 1;
        self.size_bytes = self.size_bytes.saturating_add(region.size_bytes());
        self.rss_kb = self.rss_kb.saturating_add(region.rss_kb);
        self.anonymous_kb = self.anonymous_kb.saturating_add(region.anonymous_kb);
        self.swap_kb = self.swap_kb.saturating_add(region.swap_kb);
    }
}

/// Totals per kind and part, in [`Kind`] then [`Part`] order, and over everything.
pub fn summarize(mappings: &[Mapping]) -> (Vec<(Kind, Option<Part>, Totals)>, Totals) {
    let mut groups: std::collections::BTreeMap<(Kind, Option<Part>), Totals> = Default::default();
    let mut all = Totals::default();
    for m in mappings {
        groups.entry((m.kind, m.part)).or_default().add(&m.region);
        all.add(&m.region);
    }
    let rows = groups.into_iter().map(|((k, p), t)| (k, p, t)).collect();
    (rows, all)
}

/// One process's classified memory map.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub pid: u32,
    /// The command line (arguments joined by spaces), else the short name from `comm`.
    pub command: String,
    /// The path of the process's executable, when it could be read.
    pub exe: Option<String>,
    /// `ADDR_NO_RANDOMIZE` in the process's personality (set by `setarch -R` and debuggers):
    /// this process's addresses are not randomized whatever the sysctl says.
    pub no_randomize: Option<bool>,
    pub mappings: Vec<Mapping>,
}

impl Snapshot {
    /// The base address of a region that ASLR may move: the lowest executable mapping, the
    /// top of the stack (its start moves as it grows), the start of the others.
    pub fn base(&self, region: AslrRegion) -> Option<u64> {
        let mut of_kind = self.mappings.iter().filter(|m| m.kind == region.kind());
        match region {
            AslrRegion::Stack => of_kind.map(|m| m.region.end).max(),
            _ => of_kind.next().map(|m| m.region.start),
        }
    }

    /// The mapping holding `address`.
    pub fn containing(&self, address: u64) -> Option<&Mapping> {
        self.mappings
            .iter()
            .find(|m| m.region.start <= address && address < m.region.end)
    }
}

/// The regions whose base addresses the ASLR note compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AslrRegion {
    Executable,
    Heap,
    Stack,
    Vdso,
    Vsyscall,
}

impl AslrRegion {
    pub const ALL: [AslrRegion; 5] = [
        AslrRegion::Executable,
        AslrRegion::Heap,
        AslrRegion::Stack,
        AslrRegion::Vdso,
        AslrRegion::Vsyscall,
    ];

    pub fn kind(self) -> Kind {
        match self {
            AslrRegion::Executable => Kind::Executable,
            AslrRegion::Heap => Kind::Heap,
            AslrRegion::Stack => Kind::Stack,
            AslrRegion::Vdso => Kind::Vdso,
            AslrRegion::Vsyscall => Kind::Vsyscall,
        }
    }
}

/// One region's base in the shown child and in a second fresh child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseComparison {
    pub region: AslrRegion,
    pub first: Option<u64>,
    pub second: Option<u64>,
}

/// What oslab knows about address-space randomization for the target.
#[derive(Debug, Clone)]
pub struct Aslr {
    /// The `kernel.randomize_va_space` sysctl: 0 off, 1 stack, mmap area, vDSO and PIE
    /// executable, 2 also the heap (brk).
    pub randomize_va_space: Option<u8>,
    /// Bases in two fresh children; empty when a PID was given (that process cannot be
    /// started again).
    pub comparison: Vec<BaseComparison>,
}

/// Everything `oslab maps` shows.
#[derive(Debug, Clone)]
pub struct Report {
    pub snapshot: Snapshot,
    /// The address of the fresh child's malloc block ([`CHILD_BLOCK_BYTES`]); `None` when a
    /// PID was given.
    pub child_block: Option<u64>,
    pub aslr: Aslr,
    /// The user-mode emulator oslab runs under (`Environment::emulation`), which also runs the
    /// fresh child: the kernel then maps the emulator's process, not the program's.
    pub emulation: Option<String>,
}

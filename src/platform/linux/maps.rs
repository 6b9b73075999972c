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
                (Some(value), Some("kB")) => value
                    .parse()
                    .map_err(|_| fail(format!("{key}: {value} is not a number of kB")))?,
                _ => return Err(fail(format!("{key}: expected `N kB`"))),
            };
        } else {
            regions.push(parse_header(&line).map_err(fail)?);
        }
    }
    Ok(regions)
}

/// `start-end perms offset major:minor inode [path]`; the kernel pads before the path with
/// spaces, and everything after the padding is the path, spaces included.
fn parse_header(line: &str) -> Result<Region, String> {
    let mut rest = line;
    let mut word = || {
        let trimmed = rest.trim_start_matches(' ');
        let (w, r) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
        rest = r;
        w
    };
    let (range, perms, offset, dev, inode) = (word(), word(), word(), word(), word());
    let hex = |what: &str, text: &str| {
        u64::from_str_radix(text, 16).map_err(|_| format!("{what} {text:?} is not hexadecimal"))
    };
    let (start, end) = range
        .split_once('-')
        .ok_or_else(|| format!("{range:?} is not an address range start-end"))?;
    let (start, end) = (hex("start", start)?, hex("end", end)?);
    if end < start {
        return Err(format!("address range {range} ends before it starts"));
    }
    if perms.len() != 4 || !perms.is_ascii() {
        return Err(format!("permissions {perms:?} are not four characters"));
    }
    let offset = hex("offset", offset)?;
    match dev.split_once(':') {
        Some((major, minor)) if hex("major", major).is_ok() && hex("minor", minor).is_ok() => {}
        _ => return Err(format!("device {dev:?} is not major:minor")),
    }
    let inode = inode
        .parse()
        .map_err(|_| format!("inode {inode:?} is not a number"))?;
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

/// The mapping of this process that holds `address`, from `/proc/self/smaps` (an experiment
/// asking what the kernel put behind its region: AnonHugePages after a touch).
pub fn own_region_containing(address: u64) -> Result<Region, String> {
    const SMAPS: &str = "/proc/self/smaps";
    let text = std::fs::read(SMAPS).map_err(|e| format!("{SMAPS}: {e}"))?;
    parse_smaps(&text)
        .map_err(|e| format!("{SMAPS}: {e}"))?
        .into_iter()
        .find(|r| (r.start..r.end).contains(&address))
        .ok_or_else(|| format!("{SMAPS}: no mapping holds {address:#x}"))
}

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
                None if Some(path) == exe => {
                    (Kind::Executable, Some(Part::of_file_mapping(&region)))
                }
                None if is_shared_object(path) => {
                    (Kind::Library, Some(Part::of_file_mapping(&region)))
                }
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
fn is_relro_before(prev: &Mapping, data: &Region) -> bool {
    prev.part == Some(Part::Rodata)
        && prev.region.private()
        && prev.region.path == data.path
        && prev.region.end == data.start
}

/// Whether `region` is the bss of the ELF object whose mapping `prev` is: the loader maps the
/// zero-filled rest of the writable segment anonymously, directly after its file-backed data.
/// An unrelated anonymous mapping placed exactly there would be labelled bss too.
fn is_bss_of(prev: &Mapping, region: &Region) -> bool {
    matches!(prev.kind, Kind::Executable | Kind::Library)
        && prev.part == Some(Part::Data)
        && prev.region.private()
        && prev.region.end == region.start
        && region.perms == "rw-p"
        && region.inode == 0
}

/// `heap` for `[heap]`: the kernel's names for mappings that are not files.
fn kernel_name(path: &str) -> Option<&str> {
    path.strip_prefix('[')?.strip_suffix(']')
}

/// `libc.so.6`, `ld-linux-x86-64.so.2`, `libfoo.so`, also after the file was deleted.
fn is_shared_object(path: &str) -> bool {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".so") || name.contains(".so.")
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
    fn add(&mut self, region: &Region) {
        self.count += 1;
        self.size_bytes += region.size_bytes();
        self.rss_kb += region.rss_kb;
        self.anonymous_kb += region.anonymous_kb;
        self.swap_kb += region.swap_kb;
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
    /// The target of `/proc/PID/exe`, when it could be read.
    pub exe: Option<String>,
    /// `ADDR_NO_RANDOMIZE` from `/proc/PID/personality` (set by `setarch -R` and debuggers):
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

/// Read and classify the memory map of `pid`. A process that does not exist, cannot be read
/// by this user or has no address space is a [`UserError`] naming the fix.
pub fn read(pid: u32) -> Result<Snapshot> {
    let dir = format!("/proc/{pid}");
    let smaps = match std::fs::read(format!("{dir}/smaps")) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UserError::BadOption(format!(
                "no process {pid}; pass the PID of a running process (`ps -e` lists them), or no \
                 PID to map a fresh child of oslab"
            ))
            .into());
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(UserError::BadOption(format!(
                "cannot read {dir}/smaps (permission denied): another user's memory map needs \
                 ptrace access; run oslab as that process's user or as root"
            ))
            .into());
        }
        Err(e) => return Err(anyhow!(e).context(format!("cannot read {dir}/smaps"))),
    };
    let regions = parse_smaps(&smaps).with_context(|| format!("cannot parse {dir}/smaps"))?;
    let comm = std::fs::read_to_string(format!("{dir}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default();
    if regions.is_empty() {
        return Err(UserError::BadOption(format!(
            "process {pid} ({comm}) has no memory map: it is a kernel thread or has exited; pass \
             the PID of a user process"
        ))
        .into());
    }
    let exe = std::fs::read_link(format!("{dir}/exe"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let command = std::fs::read(format!("{dir}/cmdline"))
        .ok()
        .map(|c| {
            c.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(String::from_utf8_lossy)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or(comm);
    let no_randomize = std::fs::read_to_string(format!("{dir}/personality"))
        .ok()
        .and_then(|p| u64::from_str_radix(p.trim(), 16).ok())
        .map(|p| p & libc::ADDR_NO_RANDOMIZE as u64 != 0);
    Ok(Snapshot {
        pid,
        command,
        mappings: classify(regions, exe.as_deref()),
        exe,
        no_randomize,
    })
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
    /// `/proc/sys/kernel/randomize_va_space`: 0 off, 1 stack, mmap area, vDSO and PIE
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
}

/// `oslab maps PID`.
pub fn inspect_pid(pid: u32) -> Result<Report> {
    Ok(Report {
        snapshot: read(pid)?,
        child_block: None,
        aslr: Aslr {
            randomize_va_space: randomize_va_space(),
            comparison: Vec::new(),
        },
    })
}

/// `oslab maps`: map a fresh child, and a second one to see what ASLR moved.
pub fn inspect_child() -> Result<Report> {
    let (first, block) = ChildProcess::spawn()?;
    let (second, _) = ChildProcess::spawn()?;
    let snapshot = read(first.pid())?;
    let other = read(second.pid())?;
    first.finish()?;
    second.finish()?;
    let comparison = AslrRegion::ALL
        .iter()
        .map(|&region| BaseComparison {
            region,
            first: snapshot.base(region),
            second: other.base(region),
        })
        .collect();
    Ok(Report {
        snapshot,
        child_block: Some(block),
        aslr: Aslr {
            randomize_va_space: randomize_va_space(),
            comparison,
        },
    })
}

fn randomize_va_space() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A running `oslab maps-child`, killed and reaped when dropped before [`finish`].
///
/// [`finish`]: ChildProcess::finish
struct ChildProcess {
    child: std::process::Child,
}

impl ChildProcess {
    /// Start the child and wait until it says its heap block is filled; returns the block's
    /// address with it.
    fn spawn() -> Result<(ChildProcess, u64)> {
        let exe = std::env::current_exe().context("cannot find the oslab binary")?;
        let child = Command::new(&exe)
            .arg("maps-child")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {} maps-child", exe.display()))?;
        let mut running = ChildProcess { child };
        let stdout = running
            .child
            .stdout
            .take()
            .context("oslab maps-child has no stdout pipe")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("cannot read from oslab maps-child")?;
        let address = line
            .strip_prefix("ready ")
            .and_then(|a| u64::from_str_radix(a.trim(), 16).ok())
            .ok_or_else(|| {
                anyhow!(
                    "oslab maps-child did not report its heap block (it said {:?})",
                    line.trim_end()
                )
            })?;
        Ok((running, address))
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Close the child's stdin, which ends it, and reap it.
    fn finish(mut self) -> Result<()> {
        drop(self.child.stdin.take());
        let status = self
            .child
            .wait()
            .context("cannot wait for oslab maps-child")?;
        if !status.success() {
            return Err(anyhow!("oslab maps-child ended with {status}"));
        }
        Ok(())
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // After finish() the child is reaped: std neither signals nor waits for it again.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Entry point of `oslab maps-child`: fill a heap block, print `ready ADDRESS` (hex), and
/// wait for stdin to close, which happens when the parent is done or dies.
pub fn child_main() -> i32 {
    // A non-zero fill touches every page: calloc-style zeroing could skip fresh heap pages
    // and leave them out of RSS.
    let block = std::hint::black_box(vec![0xa5_u8; CHILD_BLOCK_BYTES]);
    let mut out = std::io::stdout().lock();
    if writeln!(out, "ready {:x}", block.as_ptr() as u64)
        .and_then(|()| out.flush())
        .is_err()
    {
        return 1;
    }
    let drained = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    std::hint::black_box(&block);
    i32::from(drained.is_err())
}

#[cfg(test)]
mod tests;

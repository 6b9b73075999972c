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
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A Rust PIE program's smaps as Linux 6.18 prints it, shortened to the fields that matter
    /// plus ones that must be skipped.
    const SAMPLE: &str = "\
55d0c0a00000-55d0c0a40000 r--p 00000000 fe:00 1234                       /opt/bin/prog
Size:                256 kB
Rss:                 200 kB
Anonymous:             0 kB
Swap:                  0 kB
THPeligible:           0
VmFlags: rd mr mw me
55d0c0a40000-55d0c0b00000 r-xp 00040000 fe:00 1234                       /opt/bin/prog
Rss:                 700 kB
55d0c0b00000-55d0c0b10000 r--p 00100000 fe:00 1234                       /opt/bin/prog
Rss:                  64 kB
Anonymous:            64 kB
55d0c0b10000-55d0c0b11000 rw-p 0010f000 fe:00 1234                       /opt/bin/prog
Rss:                   4 kB
Anonymous:             4 kB
55d0c0b11000-55d0c0b13000 rw-p 00000000 00:00 0 
Rss:                   8 kB
Anonymous:             8 kB
55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]
Rss:                  72 kB
Anonymous:            72 kB
Swap:                  4 kB
7f6b25b4c000-7f6b25b4f000 rw-p 00000000 00:00 0 
Rss:                  12 kB
Anonymous:            12 kB
7f6b25b4f000-7f6b25b75000 r--p 00000000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25b75000-7f6b25ccb000 r-xp 00026000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25ccb000-7f6b25d1e000 r--p 0017c000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25d1e000-7f6b25d22000 r--p 001cf000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25d22000-7f6b25d24000 rw-p 001d3000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f6b25d24000-7f6b25d31000 rw-p 00000000 00:00 0 
7f6b25d31000-7f6b25d32000 r--p 00000000 fe:00 316543                     /usr/lib/locale/C.utf8/LC_TELEPHONE
7f6b25d32000-7f6b25d33000 rw-p 00000000 00:00 0 
7f6b25d33000-7f6b25d3a000 r--s 00000000 fe:00 325745                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache
7f6b25d3a000-7f6b25d3b000 rw-p 00000000 00:00 0                          [anon:glibc.malloc]
7f6b25d3d000-7f6b25d41000 r--p 00000000 00:00 0                          [vvar]
7f6b25d41000-7f6b25d43000 r--p 00000000 00:00 0                          [vvar_vclock]
7f6b25d43000-7f6b25d45000 r-xp 00000000 00:00 0                          [vdso]
7f6b25d45000-7f6b25d46000 r--p 00000000 fe:00 325843                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7f6b25d46000-7f6b25d47000 ---p 00001000 fe:00 325843                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7f6b25e00000-7f6b25e01000 rw-p 00000000 00:00 0                          [uprobes]
7ffd4bd5f000-7ffd4bd80000 rw-p 00000000 00:00 0                          [stack]
Rss:                  16 kB
Anonymous:            16 kB
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    fn sample() -> Vec<Mapping> {
        let regions = parse_smaps(SAMPLE.as_bytes()).expect("the sample parses");
        classify(regions, Some("/opt/bin/prog"))
    }

    #[test]
    fn parses_the_figures_and_skips_other_fields() {
        let regions = parse_smaps(SAMPLE.as_bytes()).unwrap();
        assert_eq!(regions.len(), 25);
        let first = &regions[0];
        assert_eq!(
            (first.start, first.end),
            (0x55d0_c0a0_0000, 0x55d0_c0a4_0000)
        );
        assert_eq!(first.perms, "r--p");
        assert_eq!(first.offset, 0);
        assert_eq!(first.dev, "fe:00");
        assert_eq!(first.inode, 1234);
        assert_eq!(first.path.as_deref(), Some("/opt/bin/prog"));
        assert_eq!(
            (first.rss_kb, first.anonymous_kb, first.swap_kb),
            (200, 0, 0)
        );
        assert_eq!(regions[1].offset, 0x40000);
        // lld: the data segment shares the RELRO segment's last file page.
        assert_eq!(regions[3].offset, 0x10f000);
        assert_eq!(regions[4].path, None, "a trailing space is no path");
        assert_eq!((regions[5].rss_kb, regions[5].swap_kb), (72, 4));
    }

    #[test]
    fn classifies_every_kind() {
        let got: Vec<(String, String)> = sample()
            .iter()
            .map(|m| (format!("{:x}", m.region.start), m.label()))
            .collect();
        let want = [
            ("55d0c0a00000", "executable rodata"),
            ("55d0c0a40000", "executable text"),
            ("55d0c0b00000", "executable relro"),
            ("55d0c0b10000", "executable data"),
            ("55d0c0b11000", "executable bss"),
            ("55d0c1000000", "heap"),
            ("7f6b25b4c000", "anonymous"),
            ("7f6b25b4f000", "library rodata"),
            ("7f6b25b75000", "library text"),
            // Touches the next r-- mapping, but that one is not writable: rodata.
            ("7f6b25ccb000", "library rodata"),
            ("7f6b25d1e000", "library relro"),
            ("7f6b25d22000", "library data"),
            ("7f6b25d24000", "library bss"),
            ("7f6b25d31000", "file"),
            // After a read-only file mapping: not a bss.
            ("7f6b25d32000", "anonymous"),
            ("7f6b25d33000", "file"),
            ("7f6b25d3a000", "anonymous"),
            ("7f6b25d3d000", "vvar"),
            ("7f6b25d41000", "vvar"),
            ("7f6b25d43000", "vDSO"),
            ("7f6b25d45000", "library rodata"),
            ("7f6b25d46000", "library reserved"),
            ("7f6b25e00000", "other"),
            ("7ffd4bd5f000", "stack"),
            ("ffffffffff600000", "vsyscall"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, l)| (a.to_string(), l.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn without_the_executable_its_files_are_plain_files() {
        let regions = parse_smaps(SAMPLE.as_bytes()).unwrap();
        let mappings = classify(regions, None);
        assert_eq!(mappings[0].kind, Kind::File);
        assert_eq!(mappings[4].kind, Kind::Anonymous, "no object, no bss");
        assert_eq!(mappings[7].kind, Kind::Library);
    }

    #[test]
    fn summary_adds_up() {
        let mappings = sample();
        let (rows, all) = summarize(&mappings);
        assert_eq!(all.count, mappings.len());
        assert_eq!(rows.iter().map(|r| r.2.count).sum::<usize>(), all.count);
        assert_eq!(
            rows.iter().map(|r| r.2.size_bytes).sum::<u64>(),
            mappings.iter().map(|m| m.region.size_bytes()).sum::<u64>()
        );
        let executable: Vec<_> = rows.iter().filter(|r| r.0 == Kind::Executable).collect();
        assert_eq!(
            executable.iter().map(|r| r.1).collect::<Vec<_>>(),
            [
                Some(Part::Text),
                Some(Part::Rodata),
                Some(Part::Relro),
                Some(Part::Data),
                Some(Part::Bss)
            ]
        );
        let (rodata, relro) = (executable[1].2, executable[2].2);
        assert_eq!(
            (rodata.count, rodata.rss_kb, rodata.anonymous_kb),
            (1, 200, 0)
        );
        assert_eq!((relro.count, relro.rss_kb, relro.anonymous_kb), (1, 64, 64));
        assert_eq!(all.swap_kb, 4);
        assert!(rows.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    }

    #[test]
    fn bases_for_aslr() {
        let snapshot = Snapshot {
            pid: 1,
            command: "prog".into(),
            exe: Some("/opt/bin/prog".into()),
            no_randomize: Some(false),
            mappings: sample(),
        };
        assert_eq!(
            snapshot.base(AslrRegion::Executable),
            Some(0x55d0_c0a0_0000)
        );
        assert_eq!(snapshot.base(AslrRegion::Heap), Some(0x55d0_c100_0000));
        assert_eq!(snapshot.base(AslrRegion::Stack), Some(0x7ffd_4bd8_0000));
        assert_eq!(snapshot.base(AslrRegion::Vdso), Some(0x7f6b_25d4_3000));
        assert_eq!(snapshot.base(AslrRegion::Vsyscall), Some(VSYSCALL_ADDRESS));
        assert_eq!(
            snapshot.containing(0x55d0_c100_0010).map(|m| m.kind),
            Some(Kind::Heap)
        );
        assert!(snapshot.containing(0x10).is_none());
    }

    #[test]
    fn shared_objects_by_name() {
        assert!(is_shared_object("/usr/lib/libc.so.6"));
        assert!(is_shared_object("/usr/lib/libfoo.so"));
        assert!(is_shared_object("/tmp/libbar.so.1.2 (deleted)"));
        assert!(!is_shared_object("/usr/lib/locale/locale-archive"));
        assert!(!is_shared_object("/tmp/something.sock"));
        assert!(!is_shared_object("/srv/so.data"));
    }

    #[test]
    fn odd_paths_survive() {
        let text = b"1000-2000 rw-s 00000000 00:05 77    /SYSV\n\
                     3000-4000 r--p 00000000 fe:00 9       /tmp/caf\xe9 with  spaces \n";
        let regions = parse_smaps(text).unwrap();
        assert_eq!(regions[0].path.as_deref(), Some("/SYSV"));
        assert_eq!(
            regions[1].path.as_deref(),
            Some("/tmp/caf\u{fffd} with  spaces ")
        );
    }

    #[test]
    fn rejects_what_is_not_smaps() {
        let bad: [&[u8]; 7] = [
            b"Rss: 4 kB\n",
            b"1000-2000 rw-p 0 00:00\n",
            b"1000 rw-p 00000000 00:00 0\n",
            b"2000-1000 rw-p 00000000 00:00 0\n",
            b"1000-2000 rw-p 00000000 0000 0\n",
            b"1000-2000 rw-p 00000000 00:00 0\nRss: many kB\n",
            b"1000-2000 rwxps 00000000 00:00 0\n",
        ];
        for text in bad {
            assert!(
                parse_smaps(text).is_err(),
                "{:?} is rejected",
                String::from_utf8_lossy(text)
            );
        }
        let err = parse_smaps(b"1000-2000 rw-p 00000000 00:00 0\nRss: x kB\n").unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn reads_this_process() {
        let snapshot = read(std::process::id()).expect("this process's map is readable");
        let exe = std::env::current_exe().unwrap();
        assert_eq!(snapshot.exe.as_deref(), exe.to_str());
        let kinds: Vec<Kind> = snapshot.mappings.iter().map(|m| m.kind).collect();
        for kind in [Kind::Executable, Kind::Stack, Kind::Vdso] {
            assert!(kinds.contains(&kind), "{kind:?} in {kinds:?}");
        }
        let local = 0_u8;
        let on_stack = snapshot
            .containing(std::ptr::from_ref(&local) as u64)
            .map(|m| m.kind);
        // Test threads run on thread stacks (anonymous mappings), not the main stack.
        assert!(matches!(on_stack, Some(Kind::Anonymous | Kind::Stack)));
    }

    #[test]
    fn a_missing_process_is_a_user_error() {
        let err = read(u32::MAX).unwrap_err();
        let user = err.downcast_ref::<UserError>().expect("a user error");
        assert!(user.to_string().contains("no process"), "{user}");
    }

    fn region_strategy() -> impl Strategy<Value = Region> {
        let path = prop_oneof![
            Just(None),
            Just(Some("[heap]".to_string())),
            Just(Some("[vdso]".to_string())),
            // Any path the kernel can print: no newline (escaped as \012), not starting with
            // a space (indistinguishable from the padding).
            "/[^\n]{0,40}".prop_map(Some),
        ];
        (
            (0_u64..1 << 47, 0_u64..1 << 30),
            "[r-][w-][x-][ps]",
            0_u64..1 << 40,
            (0_u32..4096, 0_u32..1 << 20),
            0_u64..u64::MAX,
            path,
            (0_u64..1 << 30, 0_u64..1 << 30, 0_u64..1 << 30),
        )
            .prop_map(
                |((start, len), perms, offset, (major, minor), inode, path, (rss, anon, swap))| {
                    Region {
                        start,
                        end: start + len,
                        perms,
                        offset,
                        dev: format!("{major:02x}:{minor:02x}"),
                        inode,
                        path,
                        rss_kb: rss,
                        anonymous_kb: anon,
                        swap_kb: swap,
                        anon_huge_pages_kb: anon / 2048 * 2048,
                    }
                },
            )
    }

    /// smaps as the kernel writes it (fs/proc/task_mmu.c, show_map_vma and
    /// show_smap_vma_flags): padded path column, a fixed set of fields, THPeligible and VmFlags.
    fn render(regions: &[Region]) -> String {
        let mut text = String::new();
        for r in regions {
            let head = format!(
                "{:08x}-{:08x} {} {:08x} {} {} ",
                r.start, r.end, r.perms, r.offset, r.dev, r.inode
            );
            text.push_str(&head);
            if let Some(path) = &r.path {
                text.push_str(&" ".repeat(73_usize.saturating_sub(head.len())));
                text.push_str(path);
            }
            text.push('\n');
            let kb = |name: &str, v: u64| format!("{:<16}{v:>8} kB\n", format!("{name}:"));
            text.push_str(&kb("Size", (r.end - r.start) / 1024));
            text.push_str(&kb("Rss", r.rss_kb));
            text.push_str(&kb("Pss", r.rss_kb / 2));
            text.push_str(&kb("Anonymous", r.anonymous_kb));
            text.push_str(&kb("AnonHugePages", r.anon_huge_pages_kb));
            text.push_str(&kb("Swap", r.swap_kb));
            text.push_str(&kb("SwapPss", r.swap_kb));
            text.push_str("THPeligible:    1\nVmFlags: rd wr mr mw me ac sd \n");
        }
        text
    }

    proptest! {
        #[test]
        fn parse_inverts_the_kernel_format(regions in prop::collection::vec(region_strategy(), 0..20)) {
            let parsed = parse_smaps(render(&regions).as_bytes()).unwrap();
            prop_assert_eq!(parsed, regions);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_smaps(&bytes);
        }

        #[test]
        fn classification_keeps_every_region(regions in prop::collection::vec(region_strategy(), 0..20)) {
            let mappings = classify(regions.clone(), Some("/x"));
            prop_assert_eq!(mappings.len(), regions.len());
            for (m, r) in mappings.iter().zip(&regions) {
                prop_assert_eq!(&m.region, r);
                prop_assert_eq!(m.part.is_some(), matches!(m.kind, Kind::Executable | Kind::Library));
            }
        }
    }
}

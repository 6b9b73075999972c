//! The equivalence table: what each experiment calls on each operating system, or why it does
//! not run there. One experiment name means one operation on every system; this table says
//! how each system performs it, so that a comparison across systems (`oslab compare` of a
//! Linux run with a FreeBSD one) can label every row whose two sides took different paths —
//! a vDSO read against a system call, a private futex against `_umtx_op` — and `oslab list`
//! and docs/os-support.md print the same table.
//!
//! A cell's `how` names the mechanism, and only the mechanism: two systems with the same `how`
//! do the same thing (the system-call numbers and calling details differ and go in `note`). An
//! experiment runs on a system exactly when its cell there is [`Cell::Runs`]: this table is the
//! one place that says so (`ExperimentInfo::os` reads it; the harness marks an experiment
//! `unsupported` elsewhere). Model data: `analysis::compare` reads it for stored runs,
//! `oslab list` for the experiments.

use super::Os;

/// What one experiment does on one system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// It runs: the mechanism, and details that do not change it (call numbers, flags).
    Runs {
        how: &'static str,
        note: &'static str,
    },
    /// It does not run there: why ("not available: …" when the system lacks the mechanism,
    /// "not enabled: …" when oslab has not made it mean the same thing there yet).
    No(&'static str),
}

impl Cell {
    /// The mechanism, when it runs.
    pub fn how(&self) -> Option<&'static str> {
        match self {
            Cell::Runs { how, .. } => Some(how),
            Cell::No(_) => None,
        }
    }

    /// The whole cell as one line: the mechanism and its note, or why not.
    pub fn text(&self) -> String {
        match self {
            Cell::Runs { how, note: "" } => how.to_string(),
            Cell::Runs { how, note } => format!("{how} ({note})"),
            Cell::No(why) => why.to_string(),
        }
    }
}

/// One row: the experiments it covers (a name, or `family.*` for the rest of a family) and
/// a cell per system.
pub struct Row {
    pub experiments: &'static [&'static str],
    pub linux: Cell,
    pub freebsd: Cell,
    pub macos: Cell,
    pub windows: Cell,
}

impl Row {
    /// The cell of system `os`.
    pub fn cell(&self, os: Os) -> Cell {
        match os {
            Os::Linux => self.linux,
            Os::FreeBsd => self.freebsd,
            Os::MacOs => self.macos,
            Os::Windows => self.windows,
        }
    }

    /// The systems it runs on (its cell there is `Runs`), in column order.
    pub fn systems(&self) -> Vec<Os> {
        SYSTEMS
            .into_iter()
            .filter(|os| self.cell(*os).how().is_some())
            .collect()
    }

    pub fn covers(&self, experiment: &str) -> bool {
        self.experiments.iter().any(|e| match e.strip_suffix('*') {
            Some(family) => experiment.starts_with(family),
            None => *e == experiment,
        })
    }
}

/// The systems of the table, in column order.
pub const SYSTEMS: [Os; 4] = Os::ALL;

const fn runs(how: &'static str) -> Cell {
    Cell::Runs { how, note: "" }
}

const fn noted(how: &'static str, note: &'static str) -> Cell {
    Cell::Runs { how, note }
}

const RAW: &str = "raw system call (called or inline) or libc";
const NO_RAW_MACOS: &str = "raw system calls are private to libSystem: entry=call and \
                            entry=inline are unsupported";

const NOT_WINDOWS: Cell = Cell::No(
    "not available: a Windows call; ctxswitch.yield and ctxswitch.nanosleep0 are the nearest",
);
const NOT_WINDOWS_HAND_OVER: Cell = Cell::No(
    "not available: Windows' events; ctxswitch.pipe and ctxswitch.futex are the hand-overs here",
);

const NOT_WINDOWS_PROCESS: Cell =
    Cell::No("not available: a Windows call; process.fork_exec and process.posix_spawn here");
const NOT_WINDOWS_MEMORY: Cell =
    Cell::No("not available: a Windows call; pagefault.anon is mmap and a first touch here");

const NOT_WINDOWS_UNIXBENCH: Cell =
    Cell::No("not available: UnixBench's tests are POSIX programs (fork, pipes, /bin/sh)");

/// The table. Rows are matched in order: a `family.*` row after the family's named rows.
pub const TABLE: &[Row] = &[
    Row {
        experiments: &["syscall.function_call"],
        linux: runs("no call"),
        freebsd: runs("no call"),
        macos: runs("no call"),
        windows: runs("no call"),
    },
    Row {
        experiments: &["syscall.vdso_clock_gettime"],
        linux: runs("clock_gettime in the vDSO"),
        freebsd: Cell::No(
            "not enabled: FreeBSD reads its clock from a shared page too, but the experiment \
             is about Linux's vDSO",
        ),
        macos: Cell::No("not enabled: the same, through the commpage"),
        windows: Cell::No(
            "not enabled: Windows reads its clock in user space too (QueryPerformanceCounter), \
             but the experiment is about Linux's vDSO",
        ),
    },
    Row {
        experiments: &["syscall.clock_gettime"],
        linux: noted(RAW, "clock_gettime, 228 on x86-64; libc: syscall()"),
        freebsd: noted(RAW, "clock_gettime (232); libc: syscall()"),
        macos: Cell::No(
            "not available: macOS's clock_gettime is a libSystem function, with no system \
             call of that name",
        ),
        windows: Cell::No(
            "not available: Windows has no clock_gettime system call, and its system-call \
             numbers change with every build",
        ),
    },
    Row {
        experiments: &["syscall.getpid", "syscall.getppid"],
        linux: noted(RAW, "getpid, getppid: `syscall` or `svc`"),
        freebsd: noted(
            RAW,
            "getpid (20), getppid (39): `syscall`, errors by the carry flag, turned into -errno",
        ),
        macos: noted("libc", NO_RAW_MACOS),
        windows: Cell::No(
            "not available: GetCurrentProcessId reads the thread's environment block without \
             entering the kernel, and there is no getppid",
        ),
    },
    Row {
        experiments: &["syscall.getppid_libc"],
        linux: runs("getppid through libc"),
        freebsd: runs("getppid through libc"),
        macos: runs("getppid through libc"),
        windows: Cell::No("not available: Windows has no getppid"),
    },
    Row {
        experiments: &["syscall.read", "syscall.write"],
        linux: noted(RAW, "read, write"),
        freebsd: noted(RAW, "read (3), write (4)"),
        macos: noted("libc", NO_RAW_MACOS),
        windows: Cell::No("not enabled yet: ReadFile and WriteFile would be the analogues"),
    },
    Row {
        experiments: &["syscall.fstat", "syscall.stat"],
        linux: noted(RAW, "fstat, newfstatat"),
        freebsd: noted(RAW, "fstat (551), fstatat (552)"),
        macos: noted("libc", NO_RAW_MACOS),
        windows: Cell::No(
            "not enabled yet: GetFileInformationByHandle and GetFileAttributesExW would be the \
             analogues",
        ),
    },
    Row {
        experiments: &["syscall.open_close"],
        linux: noted(RAW, "openat + close"),
        freebsd: noted(RAW, "openat (499) + close (6)"),
        macos: noted(
            "libc",
            "open + close; raw system calls are private to libSystem",
        ),
        windows: Cell::No(
            "not available as such: syscall.create_file is CreateFileW + CloseHandle",
        ),
    },
    Row {
        experiments: &["syscall.create_file"],
        linux: Cell::No("not available: a Windows call; syscall.open_close is openat + close"),
        freebsd: Cell::No("not available: a Windows call; syscall.open_close is openat + close"),
        macos: Cell::No("not available: a Windows call; syscall.open_close is open + close"),
        windows: runs("CreateFileW + CloseHandle"),
    },
    Row {
        experiments: &["ctxswitch.pipe", "ctxswitch.pipe_noswitch"],
        linux: noted("pipes", "pinned with sched_setaffinity"),
        freebsd: noted("pipes", "pinned with cpuset_setaffinity"),
        macos: noted(
            "pipes",
            "placements that need pinning are unsupported: no CPU affinity",
        ),
        windows: Cell::No(
            "not enabled yet: anonymous pipes between two processes need a partner process \
             of their own; ctxswitch.event is Windows' hand-over",
        ),
    },
    Row {
        experiments: &["ctxswitch.yield"],
        linux: runs("sched_yield"),
        freebsd: runs("sched_yield"),
        macos: runs("sched_yield"),
        windows: noted(
            "SwitchToThread",
            "yields only to a thread ready on the same CPU; Sleep(0) is ctxswitch.sleep",
        ),
    },
    Row {
        experiments: &["ctxswitch.nanosleep0"],
        linux: runs("nanosleep with prctl timer slack"),
        freebsd: Cell::No("not available: timer slack is a Linux prctl"),
        macos: Cell::No("not available: timer slack is a Linux prctl"),
        windows: Cell::No("not available: timer slack is a Linux prctl"),
    },
    Row {
        experiments: &["ctxswitch.futex"],
        linux: runs("futex(2) FUTEX_WAIT / FUTEX_WAKE"),
        freebsd: runs("_umtx_op UMTX_OP_WAIT_UINT / UMTX_OP_WAKE"),
        macos: Cell::No("not available: `__ulock_wait`/`__ulock_wake` are private"),
        windows: Cell::No(
            "not enabled yet: WaitOnAddress and WakeByAddressSingle work between the threads \
             of one process only",
        ),
    },
    Row {
        experiments: &["ctxswitch.sleep"],
        linux: NOT_WINDOWS,
        freebsd: NOT_WINDOWS,
        macos: NOT_WINDOWS,
        windows: runs("Sleep(0), Sleep(1)"),
    },
    Row {
        experiments: &["ctxswitch.event"],
        linux: NOT_WINDOWS_HAND_OVER,
        freebsd: NOT_WINDOWS_HAND_OVER,
        macos: NOT_WINDOWS_HAND_OVER,
        windows: noted(
            "auto-reset events between two threads",
            "SetEvent / WaitForSingleObject",
        ),
    },
    Row {
        experiments: &["ipc.unix_latency"],
        linux: runs("AF_UNIX socketpair"),
        freebsd: runs("AF_UNIX socketpair"),
        macos: noted(
            "AF_UNIX socketpair",
            "close-on-exec set by fcntl: no SOCK_CLOEXEC",
        ),
        windows: Cell::No("not available: Windows has AF_UNIX sockets but no socketpair"),
    },
    Row {
        experiments: &["ipc.pipe_bandwidth"],
        linux: runs("pipe sized with F_SETPIPE_SZ"),
        freebsd: Cell::No("not available: a pipe's capacity cannot be set"),
        macos: Cell::No("not available: a pipe's capacity cannot be set"),
        windows: Cell::No("not available: CreatePipe's size is only a hint"),
    },
    Row {
        experiments: &["process.fork", "process.fork_exec", "process.posix_spawn"],
        linux: runs("fork, fork+execve, posix_spawn"),
        freebsd: runs("fork, fork+execve, posix_spawn"),
        macos: runs("fork, fork+execve, posix_spawn"),
        windows: Cell::No(
            "not available: Windows has no fork or posix_spawn; process.create_process is \
             CreateProcessW",
        ),
    },
    Row {
        experiments: &["process.thread"],
        linux: runs("pthread_create + pthread_join"),
        freebsd: runs("pthread_create + pthread_join"),
        macos: runs("pthread_create + pthread_join"),
        windows: runs("CreateThread + WaitForSingleObject"),
    },
    Row {
        experiments: &["process.create_process"],
        linux: NOT_WINDOWS_PROCESS,
        freebsd: NOT_WINDOWS_PROCESS,
        macos: NOT_WINDOWS_PROCESS,
        windows: noted("CreateProcessW", "of oslab.exe --version, waited for"),
    },
    Row {
        experiments: &["process.vfork"],
        linux: noted(
            "raw vfork in assembly",
            "x86-64: vfork; arm64: clone with CLONE_VM and CLONE_VFORK",
        ),
        freebsd: noted("raw vfork in assembly", "vfork (66), x86-64"),
        macos: Cell::No("not available: no raw system calls"),
        windows: Cell::No("not available: Windows has no fork"),
    },
    Row {
        experiments: &["fs.*"],
        linux: runs("O_DIRECT, posix_fadvise, syncfs, mountinfo"),
        freebsd: Cell::No(
            "not enabled yet: FreeBSD has posix_fadvise and O_DIRECT (used by the backend), \
             but the cold-cache and sync expectations were written for Linux's page cache",
        ),
        macos: Cell::No(
            "not enabled yet: F_NOCACHE/F_FULLFSYNC are in the backend; the cold-cache and \
             sync expectations were written for Linux's page cache",
        ),
        windows: Cell::No(
            "not enabled yet: FILE_FLAG_NO_BUFFERING and FlushFileBuffers are Windows' means, \
             but the cold-cache and sync expectations were written for Linux's page cache",
        ),
    },
    Row {
        experiments: &["filemicro.*"],
        linux: runs("fs's routines: pwrite/pread, O_DSYNC, fsync, posix_fadvise, syncfs"),
        freebsd: Cell::No(
            "not enabled yet: the personalities run fs's routines, whose cold-cache and sync \
             expectations were written for Linux's page cache",
        ),
        macos: Cell::No(
            "not enabled yet: the personalities run fs's routines, whose cold-cache and sync \
             expectations were written for Linux's page cache",
        ),
        windows: Cell::No(
            "not enabled yet: the personalities run fs's POSIX routines (pwrite, fsync, \
             posix_fadvise)",
        ),
    },
    Row {
        experiments: &["pagefault.virtual_alloc"],
        linux: NOT_WINDOWS_MEMORY,
        freebsd: NOT_WINDOWS_MEMORY,
        macos: NOT_WINDOWS_MEMORY,
        windows: runs("VirtualAlloc, then a first write per page"),
    },
    Row {
        experiments: &["pagefault.anon"],
        linux: noted(
            "first write to each page of a fresh private anonymous mapping",
            "THP advice, prctl; MAP_POPULATE and MADV_POPULATE_WRITE for populate",
        ),
        freebsd: noted(
            "first write to each page of a fresh private anonymous mapping",
            "no THP advice: a filled 2 MiB reservation is promoted afterwards, one fault per \
             4 KiB page still; thp=on and populate are unsupported",
        ),
        macos: Cell::No("not enabled yet: run on FreeBSD and Linux only so far"),
        windows: Cell::No(
            "not enabled: those flags are Linux's; pagefault.virtual_alloc is Windows' first \
             touch",
        ),
    },
    Row {
        experiments: &["pagefault.cow"],
        linux: runs("fork, then the child's first write to each page (copy-on-write)"),
        freebsd: runs("fork, then the child's first write to each page (copy-on-write)"),
        macos: Cell::No("not enabled yet: run on FreeBSD and Linux only so far"),
        windows: Cell::No("not available: Windows has no fork"),
    },
    Row {
        experiments: &["pagefault.file"],
        linux: noted(
            "first access to each page of a fresh mapping of a file",
            "cache=cold: posix_fadvise(DONTNEED) drops the pages",
        ),
        freebsd: Cell::No(
            "not enabled yet: on FreeBSD 13.2 (tmpfs, in emulation) mincore(2) called 2.3% of \
             a cached file's pages resident at the start of a pass, so the warm claims cannot \
             be checked; and posix_fadvise(DONTNEED) only deactivates pages, so cache=cold \
             cannot be made",
        ),
        macos: Cell::No("not enabled yet: run on FreeBSD and Linux only so far"),
        windows: Cell::No(
            "not enabled: those flags are Linux's; pagefault.virtual_alloc is Windows' first \
             touch",
        ),
    },
    Row {
        experiments: &["pagefault.prefault_sweep"],
        linux: runs("madvise(MADV_POPULATE_WRITE) of N pages per call, then a touch"),
        freebsd: runs(
            "mlock(2) + munlock(2) of N pages per call (the wiring faults them in writable), \
             then a touch",
        ),
        macos: Cell::No("not enabled yet: run on FreeBSD and Linux only so far"),
        windows: Cell::No(
            "not enabled: those flags are Linux's; pagefault.virtual_alloc is Windows' first \
             touch",
        ),
    },
    Row {
        experiments: &["mmap.*", "pagefault.*"],
        linux: runs("MAP_POPULATE, MADV_POPULATE_*, THP advice and prctl"),
        freebsd: Cell::No(
            "not enabled yet: the mmap lab's flags (MAP_POPULATE, MADV_POPULATE_READ, THP \
             advice) are Linux's",
        ),
        macos: Cell::No(
            "not enabled: those flags are Linux's; a POSIX-only variant is future work",
        ),
        windows: Cell::No(
            "not enabled: those flags are Linux's; pagefault.virtual_alloc is Windows' first \
             touch",
        ),
    },
    Row {
        experiments: &["scale.mmap_munmap"],
        linux: runs("mmap and munmap of an anonymous region"),
        freebsd: runs("mmap and munmap of an anonymous region"),
        macos: runs("mmap and munmap of an anonymous region"),
        windows: Cell::No(
            "not enabled yet: VirtualAlloc and VirtualFree would be Windows' means, under the \
             process's address-space lock",
        ),
    },
    Row {
        experiments: &["scale.open_close"],
        linux: runs("open and close of a file"),
        freebsd: runs("open and close of a file"),
        macos: runs("open and close of a file"),
        windows: Cell::No(
            "not enabled yet: CreateFileW and CloseHandle would be Windows' means \
             (syscall.create_file measures them alone)",
        ),
    },
    Row {
        experiments: &["unixbench.execl"],
        linux: noted(
            "execve chain of a dynamically linked C program",
            "variant=static: a static helper, x86-64 machine code with Linux's call numbers",
        ),
        freebsd: Cell::No(
            "not enabled yet: build.rs links the dynamic program for Linux targets, and the \
             static helper is Linux x86-64 machine code",
        ),
        macos: Cell::No(
            "not enabled yet: build.rs links the dynamic program for Linux targets, and macOS \
             runs no static ELF programs",
        ),
        windows: NOT_WINDOWS_UNIXBENCH,
    },
    Row {
        experiments: &["unixbench.shell"],
        linux: runs("/bin/sh scripts with coreutils (sort, od, grep, tee, wc, rm)"),
        freebsd: runs("/bin/sh scripts with the base system's tools (sort, od, grep, tee, wc, rm)"),
        macos: runs("/bin/sh scripts with the base system's tools (sort, od, grep, tee, wc, rm)"),
        windows: NOT_WINDOWS_UNIXBENCH,
    },
    Row {
        experiments: &["unixbench.*"],
        linux: runs("POSIX calls"),
        freebsd: runs("POSIX calls"),
        macos: noted(
            "POSIX calls",
            "unixbench.context1 placement=same or cross needs pinning, unsupported without CPU \
             affinity; placement=free, the default, runs",
        ),
        windows: NOT_WINDOWS_UNIXBENCH,
    },
    Row {
        experiments: &["synthetic.*"],
        linux: noted("user space only", "known cost, for tests"),
        freebsd: noted("user space only", "known cost, for tests"),
        macos: noted("user space only", "known cost, for tests"),
        windows: noted("user space only", "known cost, for tests"),
    },
];

/// The row of `experiment`, if the table has one (every registered experiment has).
pub fn row(experiment: &str) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.covers(experiment))
}

/// What `experiment` does on system `os` (named as `Environment::os` names it: `linux`,
/// `freebsd`…); `None` for an experiment or a system the table does not know.
pub fn cell(experiment: &str, os: &str) -> Option<Cell> {
    let os = Os::from_name(os)?;
    Some(row(experiment)?.cell(os))
}

/// The table as Markdown, as docs/os-support.md shows it: a cell whose mechanism is Linux's
/// reads "the same".
pub fn markdown() -> String {
    let mut out = String::from(
        "| experiment | Linux | FreeBSD | macOS | Windows |\n| --- | --- | --- | --- | --- |\n",
    );
    for row in TABLE {
        let names: Vec<String> = row.experiments.iter().map(|e| format!("`{e}`")).collect();
        let cells: Vec<String> = SYSTEMS
            .iter()
            .map(|&os| match (row.cell(os), row.linux) {
                (c @ Cell::Runs { how, note }, Cell::Runs { how: linux, .. })
                    if os != Os::Linux =>
                {
                    match (how == linux, note) {
                        (true, "") => "the same".to_string(),
                        (true, note) => format!("the same ({note})"),
                        (false, _) => c.text(),
                    }
                }
                (c, _) => c.text(),
            })
            .collect();
        out.push_str(&format!(
            "| {} | {} |\n",
            names.join(", "),
            cells.join(" | ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/os-support.md holds the table as `markdown` makes it; `OSLAB_BLESS=1 cargo test
    /// the_docs_show_this_table` writes it there (the table's lines, from its header row to
    /// the first line that is not a row, are replaced).
    #[test]
    fn the_docs_show_this_table() {
        // Embedded when built: the test executable also runs where the checkout is not (the
        // FreeBSD guest).
        let doc = include_str!("../../docs/os-support.md");
        if std::env::var("OSLAB_BLESS").as_deref() == Ok("1") {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/os-support.md");
            std::fs::write(path, with_table(doc, &markdown())).expect("docs/os-support.md written");
            return;
        }
        assert!(
            doc.contains(&markdown()),
            "docs/os-support.md's table is not the code's: OSLAB_BLESS=1 cargo test \
             the_docs_show_this_table writes it; it should read:\n{}",
            markdown()
        );
    }

    /// `doc` with its table (from the `| experiment |` header row to the first line that is not
    /// a row) replaced by `table`.
    fn with_table(doc: &str, table: &str) -> String {
        let lines: Vec<&str> = doc.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.starts_with("| experiment |"))
            .expect("docs/os-support.md has the table's header row");
        let end = lines[start..]
            .iter()
            .position(|l| !l.starts_with('|'))
            .map_or(lines.len(), |n| start + n);
        let mut out: Vec<&str> = lines[..start].to_vec();
        out.extend(table.lines());
        out.extend(&lines[end..]);
        out.join("\n") + "\n"
    }

    #[test]
    fn the_table_is_written_in_place_of_the_old_one() {
        let doc = "intro\n| experiment | a |\n| --- | --- |\n| x | y |\n\nafter\n";
        let table = "| experiment | a |\n| --- | --- |\n| z | w |\n";
        assert_eq!(
            with_table(doc, table),
            "intro\n| experiment | a |\n| --- | --- |\n| z | w |\n\nafter\n"
        );
    }

    #[test]
    fn cells_are_found_by_the_environment_name_of_the_system() {
        assert_eq!(
            cell("ctxswitch.futex", "freebsd").and_then(|c| c.how()),
            Some("_umtx_op UMTX_OP_WAIT_UINT / UMTX_OP_WAKE")
        );
        assert_eq!(
            cell("fs.read", "linux").and_then(|c| c.how()),
            row("fs.write").unwrap().linux.how()
        );
        assert_eq!(cell("syscall.getppid", "plan9"), None);
        assert_eq!(cell("no.such", "linux"), None);
    }
}

//! The command line as clap sees it: the commands, their arguments, help texts and examples.

use super::*;

#[derive(Parser, Debug)]
#[command(
    name = "oslab",
    version,
    about = "Measure what the operating system costs a program",
    long_about = "Measure what the operating system costs a program: system calls against \
                  function calls, context switches, process creation, pipes and sockets, file \
                  I/O that does or does not reach the disk. Each experiment runs in a fresh \
                  pinned process, with perf counters and getrusage checking that it measured \
                  what it claims; every run is stored with a description of the machine, and \
                  runs can be compared, exported and reported as HTML.",
    after_help = "Exit codes: 0 ok (unsupported experiments included), 1 internal error, \
                  2 usage, database or fleet-store error or output that cannot be written (a \
                  full disk), \
                  3 an experiment failed, 4 a result is suspect; `compare \
                  --fail-on-regression`: 1 when something got slower; `trace --experiment`: 5 \
                  when the traced calls differ from the experiment's claims; `push`, `run --push`: 6 \
                  when some run could not be pushed (it stays in the local database); 130 interrupted by \
                  Ctrl-C (a run keeps what it finished; import, export -o and report -o leave \
                  nothing half-done)."
)]
pub struct Cli {
    /// The results database [default: $XDG_DATA_HOME/oslab/oslab.db]
    #[arg(long, global = true, env = "OSLAB_DB", value_name = "PATH")]
    pub(super) db: Option<PathBuf>,

    /// Colour in help and error messages: auto (a terminal, and NO_COLOR unset or empty),
    /// always or never
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub(super) color: ColorWhen,

    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Measure experiments (default: the default suite), print them and store the run
    #[command(after_help = "Examples:\n  oslab run --quick\n  \
                            oslab run syscall.getppid --load io --dir /mnt/disk\n  \
                            oslab run pagefault.anon --copies 1,2,4,N --copy-mode threads\n  \
                            oslab run syscall ctxswitch --cpu-turns 0,1   # do the CPUs differ?\n  \
                            oslab run --suite unixbench --quick\n  \
                            oslab run --suite unixbench --passes 3   # UnixBench's -i 3\n  \
                            oslab run --suite unixbench unixbench.file_copy   # its three File Copy tests\n  \
                            oslab run --suite unixbench fsdisk syscall   # UnixBench's names, as ./Run takes them\n  \
                            oslab run --suite reclaim --quick --swap 1G\n  \
                            oslab run --suite filemicro --dir /mnt/ssd")]
    Run(RunArgs),
    /// Measure experiments as `run` does, then sample where their time goes: the functions,
    /// user and kernel, split into entry/exit, the call's own work, scheduler, page faults and
    /// file systems; one flame graph (SVG) per configuration. With --runs, draw stored
    /// profiles again, or the differential flame graphs between two runs
    #[command(after_help = "Examples:\n  oslab profile syscall.getppid\n  \
                            oslab profile syscall --quick -o profiles\n  \
                            oslab profile --runs 12 15 syscall.getppid   # B against A: red grew")]
    Profile(ProfileArgs),
    /// Run a command and report every system call it and the processes it starts make:
    /// count, errors by errno, time inside (total, median, log2 histogram), by phase
    /// (dynamic loader, program, exit), with what well-known start-up calls are for. With
    /// --experiment, trace one pass of an experiment's measured loop in its real worker and
    /// check that it makes exactly the system calls the experiment claims (exit code 5 when
    /// it does not). The command and everything it starts end with oslab: on Ctrl-C, SIGTERM
    /// or SIGHUP (exit 130), when oslab is killed, and when the command ends (what it left
    /// running is killed, and said)
    #[command(after_help = "Examples:\n  oslab trace -- /bin/true\n  \
                            oslab trace --json -- sh -c 'ls | wc -l' | jq '.calls[] | {syscall, calls}'\n  \
                            oslab trace --json -o ls.json -- ls -la /usr/lib   # ls keeps stdout\n  \
                            oslab trace --experiment syscall.getppid\n  \
                            oslab trace --experiment ctxswitch.pipe --param placement=cross --ops 1000")]
    Trace(TraceArgs),
    /// List the experiments, their parameters and what they exercise (the system calls one op
    /// makes at the parameters' defaults)
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Show a stored run as tables (default: the latest)
    Show {
        /// A run id, UUID or tag (the latest run with that tag; `tag:1` for a tag that is a
        /// number)
        run: Option<String>,
        /// Print the run as one JSON document (the same as `run --json`)
        #[arg(long)]
        json: bool,
        /// List the stored runs instead
        #[arg(long, conflicts_with_all = ["run", "json"])]
        list: bool,
        /// Read from this fleet store instead of the local database (docs/fleet.md)
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Compare two stored runs: per experiment A, B, B/A with its CI, a significance test and
    /// a verdict; first the environment and settings that differ. Runs of two operating
    /// systems (a run imported from FreeBSD, say) are said first, and every experiment the two
    /// systems perform differently is marked ≠ with how each does it. Two sets of runs (runs
    /// separated by commas) are compared by their runs' medians, each run one observation: the
    /// way to call a change smaller than this machine's runs spread
    #[command(after_help = "Examples:\n  oslab compare 1 2\n  \
                            oslab compare before after --fail-on-regression\n  \
                            oslab compare 1,3,5,7,9 2,4,6,8,10   # five runs a side, alternated\n  \
                            oslab compare 3 4 --profile flames   # and differential flame graphs\n  \
                            oslab import freebsd-run.json && oslab compare linux freebsd")]
    Compare(CompareArgs),
    /// One configuration's pooled median across the stored runs, oldest first: each run's
    /// rerun interval, its kernel, and what changed in the machine's description and the
    /// run's settings since the run before. By default the runs of the host that measured it
    /// last
    #[command(
        after_help = "Examples:\n  oslab history syscall.getppid --param entry=call\n  \
                            oslab history fs.write --param size=4K --json | jq '.runs[].median'\n  \
                            oslab history syscall.getppid -p entry=call --html getppid.html   # a chart\n  \
                            oslab history syscall.getppid -p entry=call --store \"$OSLAB_STORE\" --all-machines"
    )]
    History(HistoryArgs),
    /// Write a stored run as a versioned JSON document (for `import`) or as CSV, one row per
    /// sample
    Export {
        /// A run id, UUID or tag (the latest run with that tag; `tag:1` for a tag that is a
        /// number)
        run: String,
        /// json: the whole run, for `oslab import` elsewhere; csv: one row per sample
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
        /// Write to FILE instead of stdout
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Read from this fleet store instead of the local database (docs/fleet.md)
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Write stored runs as one self-contained HTML page with charts (default: the latest
    /// run); with two or more, the first is compared with each other. With --store and --by,
    /// the fleet view instead: each configuration across the store's machines, grouped, with
    /// the machines outside the fleet's noise band flagged
    #[command(after_help = "Examples:\n  oslab report -o today.html\n  \
                            oslab report before after -o change.html\n  \
                            oslab report --store postgres://lab@db/oslab --by kernel -o fleet.html\n  \
                            oslab report --store \"$OSLAB_STORE\" --by cpu --json | jq '.configurations[].outliers'")]
    Report {
        /// Run ids or tags (a tag names the latest run with it; `tag:1` for a tag that is a
        /// number)
        runs: Vec<String>,
        /// Read from this fleet store instead of the local database (docs/fleet.md)
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// The fleet view, grouped by this (needs --store)
        #[arg(
            long,
            value_enum,
            value_name = "KEY",
            requires = "store",
            conflicts_with = "runs"
        )]
        by: Option<FleetKey>,
        /// With --by: print the fleet view as one JSON document instead of writing the page
        #[arg(long, requires = "by")]
        json: bool,
        /// The HTML file to write
        #[arg(
            short = 'o',
            long,
            value_name = "FILE",
            default_value = "oslab-report.html"
        )]
        output: PathBuf,
    },
    /// Send stored runs to a fleet store (PostgreSQL) that many machines share: each run once,
    /// whole or not at all. Without RUN, every run not yet pushed to that store. The URL comes
    /// from --store, else OSLAB_STORE, else the libpq variables (PGHOST, PGPORT, PGUSER,
    /// PGDATABASE, PGPASSWORD); exit code 6 when some run could not be pushed
    #[command(
        after_help = "Examples:\n  oslab push --store postgres://lab@db.example/oslab\n  \
                            OSLAB_STORE=postgres://lab@db/oslab oslab push 12 baseline\n  \
                            PGHOST=db PGUSER=lab PGDATABASE=oslab oslab push --json"
    )]
    Push {
        /// Run ids, tags (`tag:1` for a tag that is a number) or UUIDs [default: every run
        /// not yet in the store]
        runs: Vec<String>,
        /// The fleet store: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=require],
        /// or libpq's key=value form ('host=HOST user=USER dbname=DATABASE …')
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// Print what was pushed as one JSON document
        #[arg(long)]
        json: bool,
    },
    /// Store a run exported (`oslab export --format json`) on another machine; importing the
    /// same run again does nothing
    Import {
        /// The exported JSON document
        file: PathBuf,
    },
    /// Describe this machine as oslab sees it, including which counters work
    Env {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// The annotated memory map of a process: each mapping with its RSS, anonymous and swap
    /// memory and what it is (text, data, bss, heap, stack, library, vDSO…), a summary per
    /// kind, and what ASLR moves between runs
    Maps {
        /// The process to map [default: a fresh child of oslab, a typical dynamically linked
        /// program]
        pid: Option<u32>,
        /// Print one JSON document (docs/maps.md)
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script to stdout
    #[command(
        after_help = "Examples:\n  oslab completions bash > /etc/bash_completion.d/oslab\n  \
                            oslab completions zsh > \"${fpath[1]}/_oslab\"\n  \
                            oslab completions fish > ~/.config/fish/completions/oslab.fish"
    )]
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to stdout, or write one page per command to a directory
    #[command(after_help = "Examples:\n  oslab man > oslab.1 && man ./oslab.1\n  \
                            oslab man -o /usr/local/share/man/man1")]
    Man {
        /// Write oslab.1 and a page per command (oslab-run.1, …) into DIR instead of stdout
        #[arg(short = 'o', long, value_name = "DIR")]
        output: Option<PathBuf>,
    },
    /// Fill a heap block and wait on stdin, for `oslab maps` to read (internal)
    #[command(hide = true)]
    MapsChild,
    /// Run one experiment for a parent oslab (internal)
    #[command(hide = true)]
    Worker,
    /// Background load for a parent oslab (internal): a busy loop on CPU `--cpu`, or with
    /// `--memory` a competitor that fills and rewrites that many bytes inside the cgroup
    /// whose cgroup.procs is `--cgroup`
    #[command(hide = true)]
    Load {
        #[arg(long, required_unless_present_any = ["memory", "io"])]
        cpu: Option<usize>,
        #[arg(long, value_name = "BYTES", conflicts_with = "io")]
        memory: Option<u64>,
        #[arg(long, value_name = "DIR")]
        io: Option<PathBuf>,
        #[arg(long, value_name = "CGROUP_PROCS", requires = "memory")]
        cgroup: Option<PathBuf>,
        #[arg(long)]
        parent: u32,
    },
}

#[derive(clap::Args, Debug)]
pub(super) struct HistoryArgs {
    /// The experiment (family.variant), as `oslab list` names it
    pub(super) experiment: String,
    /// A parameter of the configuration (repeatable), as `run` takes it: needed where the
    /// stored runs measured the experiment at several values
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    pub(super) params: Vec<String>,
    /// The configuration's label in a suite (shown in parentheses by `show`)
    #[arg(long, value_name = "LABEL")]
    pub(super) label: Option<String>,
    /// Every machine's runs [default: those of the host that measured it last]
    #[arg(long)]
    pub(super) all_machines: bool,
    /// Print one JSON document
    #[arg(long)]
    pub(super) json: bool,
    /// Also write the history as a self-contained HTML page with a chart to FILE
    #[arg(long, value_name = "FILE")]
    pub(super) html: Option<PathBuf>,
    /// Read from this fleet store instead of the local database (docs/fleet.md)
    #[arg(long, value_name = "URL")]
    pub(super) store: Option<String>,
}

#[derive(clap::Args, Debug)]
pub(super) struct RunArgs {
    /// Experiments (family.variant) or families; none means the default suite. With
    /// --suite, they pick that suite's configurations of them; with --suite unixbench,
    /// UnixBench's names of its tests pick one each (fsdisk, shell8; as its `./Run fsdisk`)
    pub(super) targets: Vec<String>,
    /// Looser precision and a small time budget: the default suite in well under a minute
    #[arg(long)]
    pub(super) quick: bool,
    /// Target half-width of the 95% CI of each median, in percent [default: 1, quick: 5]
    #[arg(long, value_name = "PERCENT")]
    pub(super) precision: Option<String>,
    /// Sampling time budget per experiment, in seconds [default: 5, quick: 0.7]
    #[arg(long, value_name = "SECONDS")]
    pub(super) budget: Option<f64>,
    /// Kill a worker after this many seconds, from 1 to 604800 (a week); a duet's worker
    /// (--duet) gets twice it [default: twice the budget plus 20; four times that under a
    /// user-mode emulator such as qemu-user]
    #[arg(long, value_name = "SECONDS")]
    pub(super) timeout: Option<f64>,
    /// The CPU to pin workers to, then optionally the one for the other side of cross-CPU
    /// experiments, e.g. 3 or 1,0 [default: of the fastest kind of core this process may use,
    /// the CPU with the fewest device interrupts since boot (/proc/interrupts), every process
    /// on it; the other side: the highest other one]
    #[arg(long, value_name = "LIST")]
    pub(super) cpu: Option<String>,
    /// Pin the processes of each configuration to these CPUs in turn (two or more, e.g. 0,1),
    /// two processes per CPU unless --repeat says otherwise, and test whether the CPUs differ:
    /// where they do, `show` and the report give the figure per CPU
    #[arg(long, value_name = "LIST", conflicts_with = "cpu")]
    pub(super) cpu_turns: Option<String>,
    /// Set an experiment parameter (repeatable); `oslab list` shows them. A comma-separated
    /// list sweeps it: one result per value, e.g. --param size=1,64,4K
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    pub(super) params: Vec<String>,
    /// Run a named set of configurations instead of experiments: mmap-lab, reclaim (the mmap
    /// lab under three memory pressures, with what reclaim did), unixbench (its index for 1
    /// copy and one per CPU), filemicro (`oslab list` shows the suites)
    #[arg(long, value_name = "NAME")]
    pub(super) suite: Option<String>,
    /// Background load beside every experiment: `cpu` (a busy loop on the measured CPU),
    /// `cpu:all` (one on every CPU), `memory` (a process filling and rewriting memory, in a
    /// memory cgroup with the experiment, limited from its size and MemAvailable;
    /// `memory:headroom=10` sizes a competitor as large as the experiment and leaves 10% of
    /// the experiment's size free, `,swap=off` forbids the cgroup swap) or `io`
    /// (buffered writes with fsync and reads of a file in --dir, on the other CPU; the run
    /// records the rates it achieved)
    #[arg(long, value_name = "KIND")]
    pub(super) load: Option<String>,
    /// Swap for this run only (root): a swap file of SIZE in /var/tmp, or `zram:SIZE` for a
    /// zram device, switched on before the first experiment and removed when the run ends
    /// (also after Ctrl-C; after a kill -9, by the next run). Without swap, anonymous memory
    /// cannot be reclaimed under a memory load. E.g. --swap 1G --suite reclaim
    #[arg(long, value_name = "SIZE")]
    pub(super) swap: Option<String>,
    /// Directory for experiments that work on files: each gets a private directory in it,
    /// removed afterwards [default: the current directory]
    #[arg(long, value_name = "PATH")]
    pub(super) dir: Option<PathBuf>,
    /// Measure each configuration in this many worker processes, interleaved across the
    /// experiments, each with its own memory layout (and, with --cpu-turns, the CPUs in
    /// turn); the time budget is shared among them. The interval of a median is where a rerun's
    /// median falls, 95%: it covers the spread between the processes, and between this
    /// machine's earlier runs of the same configuration [default: 3; with --cpu-turns, 2 per
    /// CPU]
    #[arg(long, visible_alias = "processes", value_name = "N")]
    pub(super) repeat: Option<u32>,
    /// Add worker processes to a configuration, one at a time up to N, while the spread
    /// between its processes is what makes its interval widest, the interval is wider than
    /// the precision target and another process fits the time budget (the budget is shared
    /// among the N; a process's setup counts), or while its processes so far sat in a slow
    /// kernel phase of the host against this machine's earlier runs; `show` says why each
    /// configuration stopped, e.g. --max-processes 10. Give --repeat's count for none
    /// [default: 6; with --quick, --repeat, --cpu-turns, copies or a suite: none]
    #[arg(long, value_name = "N", conflicts_with_all = ["cpu_turns", "copies", "scale"])]
    pub(super) max_processes: Option<u32>,
    /// Measure each pair of configurations made to be compared (entry=inline and call,
    /// thp=off and on, placement=same and cross) in one worker that takes their samples in
    /// turn (a duet: their ratio shares the process's layout and every second of the host's),
    /// instead of in workers of their own one after the other; such a worker measures two
    /// configurations, and may run for twice --timeout
    #[arg(long)]
    pub(super) duet: bool,
    /// Measure each configuration with this many copies at once, one per CPU: does this
    /// kernel path scale across cores? A comma-separated list, N for the CPUs this process
    /// may use, e.g. --copies 1,2,4,N; each count is a configuration of its own, and the
    /// scaling table shows per-copy and total throughput and the efficiency against one
    /// copy. More copies than CPUs is allowed and labelled
    #[arg(long, value_name = "LIST")]
    pub(super) copies: Option<String>,
    /// --copies 1, the powers of two below N, and N (the CPUs this process may use)
    #[arg(long, conflicts_with = "copies")]
    pub(super) scale: bool,
    /// With --suite unixbench, UnixBench's `-i N`: N timed passes of the tests it repeats ten
    /// times (Dhrystone, Whetstone, syscall, pipe, context1), (N+1)/3 of the others, at
    /// least one [default: 10, as UnixBench; with --quick 3]
    #[arg(long, value_name = "N")]
    pub(super) passes: Option<u32>,
    /// How copies run: `processes` (each a worker with its own address space; the default)
    /// or `threads` of one worker (one address space, one directory: what contends on the
    /// mmap lock or a directory), for the experiments that run as threads
    #[arg(long, value_name = "MODE")]
    pub(super) copy_mode: Option<String>,
    /// A label stored with the run; `show` accepts it instead of a run id (`tag:NAME` when
    /// it reads as a number)
    #[arg(long)]
    pub(super) tag: Option<String>,
    /// Which clock times the samples
    #[arg(long, value_enum, default_value_t = ClockArg::Auto)]
    pub(super) clock: ClockArg,
    /// Print the run as one JSON document on stdout (progress stays on stderr)
    #[arg(long)]
    pub(super) json: bool,
    /// When the run is stored, push it to the fleet store (see `oslab push`)
    #[arg(long)]
    pub(super) push: bool,
    /// The fleet store for --push [default: OSLAB_STORE, else the libpq variables]
    #[arg(long, value_name = "URL", requires = "push")]
    pub(super) store: Option<String>,
}

#[derive(clap::Args, Debug)]
pub(super) struct ProfileArgs {
    #[command(flatten)]
    pub(super) run: RunArgs,
    /// Stack samples per second (hardware cycles where a PMU counts them, else cpu-clock),
    /// 1 to the kernel's perf_event_max_sample_rate
    #[arg(long, value_name = "HZ", default_value_t = 4000)]
    pub(super) frequency: u64,
    /// Seconds of profiled batches per configuration, taken after its timed samples (which
    /// the sampling would slow) [default: 1, quick: 0.3]
    #[arg(long, value_name = "SECONDS")]
    pub(super) seconds: Option<f64>,
    /// Directory for the flame graphs, one SVG per configuration
    #[arg(short = 'o', long, value_name = "DIR", default_value = "oslab-profile")]
    pub(super) output: PathBuf,
    /// Measure nothing: draw the stored profiles of run A again, or with two runs the
    /// differential flame graphs from A to B (red where B spends a larger share) and the
    /// functions that moved; ids or tags (`tag:1` for a tag that is a number)
    #[arg(long, num_args = 1..=2, value_names = ["A", "B"], visible_alias = "diff")]
    pub(super) runs: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub(super) struct CompareArgs {
    /// Run A, the baseline: a run id, UUID or tag (the latest run with that tag; `tag:1`
    /// for a tag that is a number); or two or more separated by commas, a set of runs
    pub(super) a: String,
    /// Run B, compared against A; or a set of runs, as A
    pub(super) b: String,
    /// Half-width of the noise band around B/A = 1, in percent: a change whose CI touches the
    /// band is "within noise" [default: 2, or the runs' --precision when larger (5 for
    /// --quick runs)]
    #[arg(long, value_name = "PCT")]
    pub(super) noise: Option<String>,
    /// What to compare per operation: time, a getrusage field (minflt, nvcsw, stime_us, …) or
    /// a counter name (cycles, syscalls, …)
    #[arg(long, value_name = "NAME", default_value = "time")]
    pub(super) metric: String,
    /// Print one JSON document for scripts
    #[arg(long)]
    pub(super) json: bool,
    /// Read both runs from this fleet store instead of the local database (docs/fleet.md)
    #[arg(long, value_name = "URL")]
    pub(super) store: Option<String>,
    /// Exit with code 1 when some experiment got slower (for CI)
    #[arg(long)]
    pub(super) fail_on_regression: bool,
    /// Also draw the differential flame graph of every configuration both runs profiled
    /// (`oslab profile`) into DIR, red where B spends a larger share, with the functions that
    /// moved most
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "oslab-profile")]
    pub(super) profile: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FleetKey {
    /// The kernel release
    Kernel,
    /// The machine's host name
    Host,
    /// The operating system and its release
    Os,
    /// The CPU model
    Cpu,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ExportFormat {
    /// The whole run as one versioned JSON document
    Json,
    /// One row per sample
    Csv,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClockArg {
    /// The CPU's counter when it can be trusted, else CLOCK_MONOTONIC_RAW
    Auto,
    /// The CPU's counter (x86-64: the TSC; aarch64: CNTVCT_EL0), or an error if it cannot be
    /// trusted here
    #[value(alias = "tsc", alias = "cntvct")]
    Counter,
    /// CLOCK_MONOTONIC_RAW
    Monotonic,
}

/// `--color`: when help and error messages may use colour.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug)]
pub(super) struct TraceArgs {
    /// Print one JSON document (on standard output the traced command's own output then goes
    /// to standard error, so the document stays whole; with -o it keeps standard output)
    #[arg(long)]
    pub(super) json: bool,
    /// Write the tables (or the JSON document) to FILE, whole or not at all, instead of
    /// standard output, which the traced command then keeps
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(super) output: Option<PathBuf>,
    /// Trace one pass of this experiment's measured loop (`oslab list` shows them) instead of
    /// a command, and compare its calls with what the experiment claims
    #[arg(long, value_name = "NAME", conflicts_with = "command")]
    pub(super) experiment: Option<String>,
    /// Set a parameter of the experiment (repeatable; one value each; swept parameters take
    /// their default)
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    pub(super) params: Vec<String>,
    /// Operations in the traced pass [default: 10000]; an experiment whose pass is fixed by
    /// its parameters runs that many instead, and one whose parameters bound a batch (the
    /// appends' file limit) no more than that
    #[arg(long, value_name = "N")]
    pub(super) ops: Option<u64>,
    /// Record every call (perf_event records: exact medians, but several times slower)
    /// instead of counting in the kernel with eBPF
    #[arg(long)]
    pub(super) records: bool,
    /// The command and its arguments, after `--`
    #[arg(last = true, value_name = "COMMAND")]
    pub(super) command: Vec<std::ffi::OsString>,
}

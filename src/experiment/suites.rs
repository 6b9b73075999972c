//! Suites: named lists of configurations run together (`oslab run --suite NAME`): an
//! experiment, the parameters that define each configuration, optionally a load, and for some
//! the counts of copies every configuration is measured with. `selection::expand_suite` turns one
//! into planned runs.

use crate::model::passes::Passes;

/// A named list of configurations run together.
pub struct Suite {
    pub name: &'static str,
    pub summary: &'static str,
    pub configs: &'static [Config],
    /// The counts of copies every configuration is measured with when the user gives no
    /// `--copies` (`1,N`: one copy, then one per CPU, as UnixBench reports), if any.
    pub copies: Option<&'static str>,
    /// How each configuration is sampled in timed passes (`model::passes`), if it is: from
    /// the experiment's name, `--quick` and `--passes`.
    pub passes: Option<fn(experiment: &str, timing: Timing) -> Passes>,
}

/// One configuration of a suite.
#[derive(Debug)]
pub struct Config {
    pub label: &'static str,
    pub experiment: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    pub load: Option<&'static str>,
}

/// Every suite oslab knows.
pub static SUITES: &[&Suite] = &[&MMAP_LAB, &RECLAIM, &UNIXBENCH, &FILEMICRO];

/// The classic mmap lab: six configurations of `mmap.access`, and three of them again under
/// memory pressure.
pub static MMAP_LAB: Suite = Suite {
    name: "mmap-lab",
    summary: "mmap.access in the nine configurations of the classic mmap lab: anonymous, \
              anonymous shared, file shared (sequential, random, populated, memset+msync), and \
              three of them again under --load memory",
    configs: &[
        Config {
            label: "anonymous",
            experiment: "mmap.access",
            params: &[("backing", "anon_private")],
            load: None,
        },
        Config {
            label: "anonymous shared",
            experiment: "mmap.access",
            params: &[("backing", "anon_shared")],
            load: None,
        },
        Config {
            label: "file shared",
            experiment: "mmap.access",
            params: &[("backing", "file_shared")],
            load: None,
        },
        Config {
            label: "file shared random",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("pattern", "random")],
            load: None,
        },
        Config {
            label: "file shared populate",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("populate", "true")],
            load: None,
        },
        Config {
            label: "file shared memset+msync",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("prepare", "memset_msync")],
            load: None,
        },
        Config {
            label: "anonymous, memory load",
            experiment: "mmap.access",
            params: &[("backing", "anon_private")],
            load: Some("memory"),
        },
        Config {
            label: "file shared, memory load",
            experiment: "mmap.access",
            params: &[("backing", "file_shared")],
            load: Some("memory"),
        },
        Config {
            label: "file shared populate, memory load",
            experiment: "mmap.access",
            params: &[("backing", "file_shared"), ("populate", "true")],
            load: Some("memory"),
        },
    ],
    copies: None,
    passes: None,
};

/// One configuration of the reclaim suite: `mmap.access` with `params`, beside a memory load
/// of headroom `level` percent, with swap or not.
macro_rules! reclaim_config {
    ($label:literal, $params:expr, $level:literal) => {
        Config {
            label: concat!($label, ", headroom ", $level, "%"),
            experiment: "mmap.access",
            params: $params,
            load: Some(concat!("memory:headroom=", $level)),
        }
    };
    ($label:literal, $params:expr, $level:literal, no swap) => {
        Config {
            label: concat!($label, ", headroom ", $level, "%, no swap"),
            experiment: "mmap.access",
            params: $params,
            load: Some(concat!("memory:headroom=", $level, ",swap=off")),
        }
    };
}

/// Every pressure level of the reclaim suite for each backing, with swap and then without:
/// 50% headroom (no pressure: the baseline), 0% (the experiment fits beside the competitor
/// but for the worker's own memory: light pressure) and −25% (a quarter of it does not fit).
macro_rules! reclaim_configs {
    ($(($label:literal, $params:expr)),* $(,)?) => {
        &[$(
            reclaim_config!($label, $params, "50"),
            reclaim_config!($label, $params, "0"),
            reclaim_config!($label, $params, "-25"),
            reclaim_config!($label, $params, "50", no swap),
            reclaim_config!($label, $params, "0", no swap),
            reclaim_config!($label, $params, "-25", no swap),
        )*]
    };
}

/// The mmap lab's reclaim section: four of its configurations beside a competitor as large as
/// the experiment, in a memory cgroup leaving 50%, 0% and −25% of the experiment's size free,
/// with swap and (when the machine has swap) without; each result carries what reclaim did.
pub static RECLAIM: Suite = Suite {
    name: "reclaim",
    summary: "mmap.access (anonymous, anonymous shared, file shared, file shared populated) \
              beside a competitor for memory at three pressure levels (50%, 0%, -25% headroom \
              in the cgroup), with swap and without when there is swap (--swap SIZE makes some): \
              time per access, faults and the kernel's reclaim counters side by side",
    configs: reclaim_configs![
        ("anonymous", &[("backing", "anon_private")]),
        ("anonymous shared", &[("backing", "anon_shared")]),
        ("file shared", &[("backing", "file_shared")]),
        (
            "file shared populated",
            &[("backing", "file_shared"), ("populate", "true")]
        ),
    ],
    copies: None,
    passes: None,
};

/// UnixBench's System Benchmarks Index: its twelve tests, labelled as its report names them
/// (byte-unixbench's `Run`, the `index` set), in the order of its report.
pub static UNIXBENCH: Suite = Suite {
    name: "unixbench",
    summary: "UnixBench's System Benchmarks Index (byte-unixbench 5.1.3): its twelve tests with \
              its workloads, units and SPARCstation 20-61 baselines, and the index score",
    configs: &[
        Config {
            label: "Dhrystone 2 using register variables",
            experiment: "unixbench.dhrystone",
            params: &[("language", "c"), ("placement", "free")],
            load: None,
        },
        Config {
            label: "Double-Precision Whetstone",
            experiment: "unixbench.whetstone",
            params: &[("language", "c"), ("placement", "free")],
            load: None,
        },
        Config {
            label: "Execl Throughput",
            experiment: "unixbench.execl",
            params: &[("variant", "dynamic"), ("placement", "free")],
            load: None,
        },
        Config {
            label: "File Copy 1024 bufsize 2000 maxblocks",
            experiment: "unixbench.file_copy",
            params: &[
                ("bufsize", "1024"),
                ("maxblocks", "2000"),
                ("placement", "free"),
            ],
            load: None,
        },
        Config {
            label: "File Copy 256 bufsize 500 maxblocks",
            experiment: "unixbench.file_copy",
            params: &[
                ("bufsize", "256"),
                ("maxblocks", "500"),
                ("placement", "free"),
            ],
            load: None,
        },
        Config {
            label: "File Copy 4096 bufsize 8000 maxblocks",
            experiment: "unixbench.file_copy",
            params: &[
                ("bufsize", "4096"),
                ("maxblocks", "8000"),
                ("placement", "free"),
            ],
            load: None,
        },
        Config {
            label: "Pipe Throughput",
            experiment: "unixbench.pipe",
            params: &[("placement", "free")],
            load: None,
        },
        Config {
            label: "Pipe-based Context Switching",
            experiment: "unixbench.context1",
            params: &[("placement", "free")],
            load: None,
        },
        Config {
            label: "Process Creation",
            experiment: "unixbench.spawn",
            params: &[("placement", "free")],
            load: None,
        },
        Config {
            label: "Shell Scripts (1 concurrent)",
            experiment: "unixbench.shell",
            params: &[("concurrency", "1"), ("placement", "free")],
            load: None,
        },
        Config {
            label: "Shell Scripts (8 concurrent)",
            experiment: "unixbench.shell",
            params: &[("concurrency", "8"), ("placement", "free")],
            load: None,
        },
        Config {
            label: "System Call Overhead",
            experiment: "unixbench.syscall",
            params: &[("placement", "free")],
            load: None,
        },
    ],
    copies: Some("1,N"),
    passes: Some(unixbench_passes),
};

/// Filebench's filemicro personalities at Filebench's defaults, one configuration each,
/// labelled with the workload file's name (docs/filemicro.md).
pub static FILEMICRO: Suite = Suite {
    name: "filemicro",
    summary: "Filebench's filemicro personalities (workloads/filemicro_*.f and openfiles.f) \
              at Filebench's defaults, one thread each; the report adds a Filebench-like \
              summary (ops/s, MB/s, ms/op, blocks read and written per op)",
    configs: &[
        Config {
            label: "filemicro_create (createandalloc)",
            experiment: "filemicro.create",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_createfiles",
            experiment: "filemicro.createfiles",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_createrand",
            experiment: "filemicro.createrand",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_delete",
            experiment: "filemicro.delete",
            params: &[],
            load: None,
        },
        Config {
            label: "openfiles",
            experiment: "filemicro.openfiles",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rread",
            experiment: "filemicro.rread",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rwrite",
            experiment: "filemicro.rwrite",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rwritedsync",
            experiment: "filemicro.rwritedsync",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_rwritefsync",
            experiment: "filemicro.rwritefsync",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqread",
            experiment: "filemicro.seqread",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwrite",
            experiment: "filemicro.seqwrite",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwriterand",
            experiment: "filemicro.seqwriterand",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwriterandvargam",
            experiment: "filemicro.seqwriterandvargam",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_seqwriterandvartab",
            experiment: "filemicro.seqwriterandvartab",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_statfile",
            experiment: "filemicro.statfile",
            params: &[],
            load: None,
        },
        Config {
            label: "filemicro_writefsync",
            experiment: "filemicro.writefsync",
            params: &[],
            load: None,
        },
    ],
    copies: None,
    passes: None,
};

pub fn find_suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().copied().find(|s| s.name == name)
}

/// What the user said of a suite's timed passes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    /// `--quick`: shorter passes.
    pub quick: bool,
    /// `--passes N`: how many (the suite says what N means).
    pub passes: Option<u32>,
}

/// UnixBench's passes (its `Run`): ten of 10 s for the tests it repeats "long" (Dhrystone,
/// Whetstone, the system call, pipe and context-switch loops), three of 30 s for the "short"
/// ones (execl, spawn, the file copies) and three of 60 s for the shell scripts (`looper
/// 60`). `--passes N` is UnixBench's `-i N`: N of the long ones, (N+1)/3 of the short ones
/// (at least one). `--quick`: passes of 0.1 s, three and one unless `--passes` says.
pub fn unixbench_passes(experiment: &str, timing: Timing) -> Passes {
    let (long, seconds) = match experiment {
        "unixbench.execl" | "unixbench.spawn" | "unixbench.file_copy" => (false, 30.0),
        "unixbench.shell" => (false, 60.0),
        _ => (true, 10.0),
    };
    let iterations = timing.passes.unwrap_or(if timing.quick { 3 } else { 10 });
    Passes {
        count: if long {
            iterations
        } else {
            ((iterations + 1) / 3).max(1)
        },
        seconds: if timing.quick { 0.1 } else { seconds },
    }
}

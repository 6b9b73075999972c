//! unixbench.shell: UnixBench's "Shell Scripts" tests (`looper` running `multi.sh N` for a
//! minute): per loop, /bin/sh runs `concurrency` copies of `tst.sh` in the background and
//! waits for them. Each copy sorts an input text, dumps the sorted text with od and sorts
//! that numerically, greps it for "the" through tee into wc, and removes its files:
//!
//! ```text
//! sort > sort.$$ < sort.src
//! od sort.$$ | sort -n -k 1 > od.$$
//! grep the sort.$$ | tee grep.$$ | wc > wc.$$
//! rm sort.$$ grep.$$ od.$$ wc.$$
//! ```
//!
//! UnixBench's input, `testdir/sort.src`, is not shipped (UnixBench is GPL); [`sort_input`]
//! generates a text of the same shape deterministically: 362 lines, 8,546 bytes as sort.src,
//! 35 of the lines holding "the". The scripts run in the worker's private work directory with
//! `PATH=/usr/bin:/bin` and UnixBench's `LANG=en_US.utf8` (the locale changes sort's speed a
//! lot; where it is not installed, the C library falls back to C as it does for UnixBench).
//! The worker and the shells run where the scheduler puts them, as UnixBench's do
//! (`placement=free`, the default; `same` keeps them all on the worker's CPU). Differences:
//! looper execs `multi.sh` through its `#!` line, oslab runs `/bin/sh multi.sh` (one
//! interpreter lookup fewer), and oslab spawns it with posix_spawn where looper forks.

use crate::experiment::RoutineError;
use crate::model::equivalence as eq;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::*;

pub(super) const CONCURRENCY_PARAM: ParamSpec = ParamSpec {
    name: "concurrency",
    kind: ParamKind::Int { min: 1, max: 64 },
    default: "1",
    help: "copies of the script run at once per loop (UnixBench's index: 1 and 8)",
};

/// The per-copy script, UnixBench's tst.sh's four lines.
const TST_SH: &str = "sort > sort.$$ < $1\n\
                      od sort.$$ | sort -n -k 1 > od.$$\n\
                      grep the sort.$$ | tee grep.$$ | wc > wc.$$\n\
                      rm sort.$$ grep.$$ od.$$ wc.$$\n";

/// The loop, multi.sh's: `$1` copies in the background, then wait.
const MULTI_SH: &str = "instance=1\n\
                        while [ $instance -le $1 ]; do\n\
                        \t/bin/sh ./tst.sh sort.src &\n\
                        \tinstance=$(($instance + 1))\n\
                        done\n\
                        wait\n";

/// Words for the generated input; none contains "the", which is placed on chosen lines.
const WORDS: &[&str] = &[
    "system",
    "benchmark",
    "process",
    "file",
    "shell",
    "index",
    "score",
    "copy",
    "pipe",
    "test",
    "program",
    "result",
    "kernel",
    "memory",
    "buffer",
    "report",
    "time",
    "run",
    "loop",
    "value",
    "count",
    "output",
    "input",
    "sort",
    "line",
    "word",
    "unix",
    "disk",
    "cache",
    "page",
    "call",
    "switch",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "by",
    "as",
    "at",
    "or",
];

/// The lines of the generated input, how many of them hold "the", and its size: sort.src's.
/// The size matters: `sh tst.sh` on this generator's text before it was padded (6,863 bytes)
/// took 0.973 and 0.980 times as long as on sort.src (8,546), padded 0.994 and 1.009 (the
/// median of paired ratios over 800 rounds of the three in random order, twice).
pub const SORT_LINES: usize = 362;
pub const LINES_WITH_THE: usize = 35;
pub const SORT_BYTES: usize = 8546;

/// A text of UnixBench's sort.src's shape: 362 lines of words (a fixed linear congruential
/// sequence picks them), 35 of them with the word "the", 8,546 bytes.
pub fn sort_input() -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % bound as u64) as usize
    };
    let mut lines: Vec<String> = Vec::with_capacity(SORT_LINES);
    for line in 0..SORT_LINES {
        let words = 1 + next(6);
        let mut text: Vec<&str> = (0..words).map(|_| WORDS[next(WORDS.len())]).collect();
        // Lines 5, 15, 25, … (35 of 362) hold "the".
        if line % 10 == 5 && line / 10 < LINES_WITH_THE {
            text.push("the");
        }
        lines.push(text.join(" "));
    }
    // To sort.src's size: a word more on every seventh line, round and round (about 6.9 KB
    // before), the last one cut to fit. No word holds "the".
    let mut total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut at = 0;
    while total < SORT_BYTES {
        let word = WORDS[next(WORDS.len())];
        let room = SORT_BYTES - total;
        let word = &word[..word.len().min(room - 1)];
        let line = &mut lines[at % SORT_LINES];
        line.push(' ');
        line.push_str(word);
        total += 1 + word.len();
        at += 7;
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

struct Shell {
    dir: PathBuf,
    concurrency: String,
}

impl Shell {
    fn once(&self) -> Result<(), RoutineError> {
        let status = Command::new("/bin/sh")
            .arg("./multi.sh")
            .arg(&self.concurrency)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LANG", "en_US.utf8")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|source| RoutineError::Os {
                call: "starting /bin/sh".into(),
                source,
            })?;
        if status.success() {
            Ok(())
        } else {
            Err(RoutineError::Check(format!(
                "/bin/sh multi.sh ended with {status}"
            )))
        }
    }
}

impl Routine for Shell {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            self.once()?;
        }
        Ok(())
    }
}

fn setup(params: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let dir = ctx.work_dir.clone().ok_or_else(|| {
        SetupError::Failed("the shell scripts need a work directory, and none was created".into())
    })?;
    for (name, text) in [
        ("tst.sh", TST_SH.to_string()),
        ("multi.sh", MULTI_SH.to_string()),
        ("sort.src", sort_input()),
    ] {
        std::fs::write(dir.join(name), text).map_err(|e| {
            SetupError::Failed(format!("cannot write {}: {e}", dir.join(name).display()))
        })?;
    }
    place(params, ctx)?;
    let shell = Shell {
        dir,
        concurrency: params.u64("concurrency").to_string(),
    };
    shell.once().map_err(|e| {
        SetupError::Unsupported(format!(
            "the script does not run here (it needs /bin/sh, sort, od, grep, tee, wc, rm): {e}"
        ))
    })?;
    Ok(Box::new(shell))
}

fn expectations(_: &Params) -> Vec<Expectation> {
    vec![children_fault(), no_major_faults()]
}

pub static SHELL: ExperimentInfo = ExperimentInfo::new(
    "unixbench.shell",
    "UnixBench's Shell Scripts: /bin/sh runs `concurrency` copies of tst.sh (sort, od, \
     grep, tee, wc on a generated text) at once and waits, per loop",
    "loop",
    "posix_spawn of /bin/sh, which forks and execs the coreutils of the script",
    setup,
)
.params(&[CONCURRENCY_PARAM, PLACEMENT_FREE_SAME])
// The worker's spawn and wait of /bin/sh, and the shell's exec and exit; the script's
// programs make many more, which are the system's (sh, sort, od, grep, tee, wc).
.syscalls(|_| crate::experiment::each(&["clone3", "execve", "exit_group", "wait4"]))
.outside_default_suite()
.work_dir()
.expectations(expectations)
.cells(eq::Cells {
    linux: eq::runs("/bin/sh scripts with coreutils (sort, od, grep, tee, wc, rm)"),
    freebsd: eq::runs("/bin/sh scripts with the base system's tools (sort, od, grep, tee, wc, rm)"),
    macos: eq::runs("/bin/sh scripts with the base system's tools (sort, od, grep, tee, wc, rm)"),
    windows: eq::NOT_WINDOWS_UNIXBENCH,
});

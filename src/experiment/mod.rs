//! What is measured. Each family lives in one file and describes its experiments as data
//! ([`ExperimentInfo`]) plus the code of one timed routine ([`Routine`]). Experiments never
//! print, never parse command lines and never time themselves: the harness in `measure` does.
//!
//! Adding an experiment is one entry in its family file and one line in the family's
//! `EXPERIMENTS` list there; [`REGISTRY`] is the families' lists.

// Every family's declarations are built on every system, so the registry is the same
// everywhere and `oslab list` names every experiment. A family whose code is POSIX's (fork,
// pipes, mmap, raw system calls) keeps its routines in `#[cfg(unix)]` modules beside its
// declarations, and `unix_setups!` hands the declarations their setups (elsewhere:
// [`elsewhere`], never reached: the harness stores such an experiment `unsupported`).
mod builder;
pub mod ctxswitch;
pub mod filemicro;
pub mod fs;
pub mod ipc;
#[cfg(unix)]
mod linux_only;
pub mod mapping;
pub mod mmap;
pub mod pagefault;
pub mod params;
mod pingpong;
pub mod process;
pub mod refusal;
pub mod scale;
pub mod selection;
pub mod suites;
pub mod synthetic;
pub mod syscall;
pub mod unixbench;
pub mod winapi;

pub use params::{ParamKind, ParamSpec, Params};

use std::sync::LazyLock;

pub use crate::analysis::trace::claims::{Claim, each};
use crate::analysis::validate::Expectation;
pub use crate::model::routine::{Partner, Routine, RoutineError};
pub use crate::model::{Fact, Os, SetupError};

/// Whether `info` runs on this system: the unit tests of an experiment that is not enabled
/// here (its cell says why) have nothing to test here and return at once.
#[cfg(all(test, unix))]
pub(crate) fn enabled_here(info: &ExperimentInfo) -> bool {
    info.runs_here()
}

/// The environment variable that tells a worker which of its configuration's `--repeat`
/// processes it is (from 0), set by the harness on every worker. Only the synthetic
/// experiment's `spread` reads it, to give each process a known, different cost in tests.
pub const PROCESS_VAR: &str = "OSLAB_PROCESS";

/// Where an experiment may run, decided by the harness before setup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The CPU the worker is pinned to (none when pinning is unavailable).
    pub cpu: Option<usize>,
    /// Another CPU this process may use, for experiments with a `cross` placement.
    pub other_cpu: Option<usize>,
    /// The CPUs an experiment that runs unpinned (`placement=free`) spreads over: the worker
    /// unpins itself to them and what it starts inherits them (empty: leave the pinning).
    pub free_cpus: Vec<usize>,
    /// A private directory for the experiment's files, created and removed by the parent
    /// (also when the worker is killed). `None` when it could not be created.
    pub scratch_dir: Option<std::path::PathBuf>,
    /// For experiments with `work_dir`: their private directory on the file system under
    /// test (see `ExperimentInfo::work_dir`).
    pub work_dir: Option<std::path::PathBuf>,
    /// For experiments with `work_dir`: a directory every copy of the configuration shares
    /// (`--copies`; one worker's copies share its work directory). What a scaling experiment
    /// puts there must be named per thread.
    pub shared_dir: Option<std::path::PathBuf>,
}

/// Builds an experiment's routine from its parameters and placement.
pub type Setup = fn(&Params, &Context) -> Result<Box<dyn Routine>, SetupError>;

/// Checks, before a run, that an experiment can work where the user asked: `Err` says what
/// does not fit, in the experiment's parameter names (the command line words the fix).
pub type Preflight = fn(&Params, &Context) -> Result<(), refusal::Refusal>;

/// One experiment, described as data.
pub struct ExperimentInfo {
    /// Stable `family.variant` name: stored in every run, used by compare across versions.
    pub name: &'static str,
    pub summary: &'static str,
    /// The unit of one operation (`call`, `round trip`, `page`).
    pub op: &'static str,
    /// How the operation reaches the kernel, so figures from different paths are not confused.
    pub path: &'static str,
    pub params: &'static [ParamSpec],
    /// The system calls the measured loop makes, given the parameters: each at least its
    /// claimed rate per operation, over the worker and its partners (threads, processes, the
    /// children it forks). Calls made once per pass or per batch (an fsync at the end of a
    /// pass, one fork per batch) are not claimed. `oslab trace --experiment` checks them.
    pub syscalls: fn(&Params) -> Vec<Claim>,
    /// Subtract the per-operation cost of the empty loop, as lmbench does.
    pub subtract_loop_overhead: bool,
    /// Part of the default suite (`oslab run` with no argument). Test-only experiments are not.
    pub default_suite: bool,
    /// A headline figure: it joins the cost ladder `oslab run` prints. Other results are
    /// shown in their family's table.
    pub ladder: bool,
    /// Count the perf groups (software and hardware) around every timed sample. `false` for
    /// experiments that switch context: a task with open perf events pays for them at every
    /// switch (measured here: a C pipe ping-pong from 5.0 to 7.4 µs per round trip with six
    /// software events open). Their groups are then counted over the untimed batches after
    /// sampling, like the probe counters; getrusage stays per sample.
    pub counters_in_samples: bool,
    /// The experiment works on files: the parent creates a private directory under `--dir`
    /// (default: the current directory, so the current file system is measured) for each
    /// worker, passes it as `Context::work_dir`, and removes it after the worker has gone —
    /// also when the worker crashed, was killed, or oslab was interrupted.
    pub work_dir: bool,
    /// Its timed operation enters the kernel: a system call, a page fault, a context switch.
    /// `false` for one that stays in user space (an empty call, the vDSO's clock, Dhrystone),
    /// whose figures the host's kernel phases do not move, so none of its samples is left out
    /// for them (`phase_bound`).
    pub enters_kernel: bool,
    /// What the counters must show per operation, given the parameters.
    pub expectations: fn(&Params) -> Vec<Expectation>,
    /// Build the routine (open files, map memory, start a partner). Runs in the worker,
    /// untimed.
    pub setup: Setup,
    /// Checked by the parent before any worker starts, with the directory the experiment
    /// would work in (`--dir` or the current directory) in `Context::work_dir`: a mistake the
    /// user can fix (too little free space, say) is one error line and exit code 2 instead of
    /// a failed result. `None`: nothing to check.
    pub preflight: Option<Preflight>,
    /// How many operations a sample holds.
    pub batch: Batch,
    /// Parameters the experiment is measured across when the user does not set them: one
    /// result per value (per combination, with several), shown as a curve. `--param` with
    /// one value pins a parameter; with a comma-separated list it sweeps it.
    pub sweep: &'static [(&'static str, &'static [&'static str])],
    /// Parameter defaults that `--quick` replaces (a smaller region, say), unless the user
    /// set the parameter.
    pub quick_params: &'static [(&'static str, &'static str)],
    /// Its row of the equivalence table: how each system performs it, or why it does not run
    /// there. It runs exactly where its cell is `Cell::Runs`.
    pub cells: crate::model::equivalence::Cells,
}

/// How many operations a sample holds.
#[derive(Debug, Clone, Copy)]
pub enum Batch {
    /// Chosen by the harness: the batch grows until a sample lasts long enough for the clock
    /// (see `measure::sampler`).
    Sized,
    /// Fixed by the parameters: one sample is one whole pass of the experiment (every page of
    /// a region, say), prepared and torn down around it.
    Fixed(fn(&Params) -> u64),
}

impl ExperimentInfo {
    /// The operating systems it runs on: those whose cell ([`ExperimentInfo::cells`], the
    /// one place that says where an experiment runs and how) is
    /// [`Cell::Runs`](crate::model::equivalence::Cell::Runs). Most experiments name Linux-only
    /// mechanisms (raw system-call numbers, THP, futex, MADV_POPULATE_WRITE, procfs views);
    /// the harness marks an experiment `unsupported` on any other system and `oslab list`
    /// prints the list.
    pub fn os(&self) -> Vec<Os> {
        self.cells.systems()
    }

    /// Whether it runs on system `os` (its cell there is `Runs`).
    pub fn runs_on(&self, os: Os) -> bool {
        self.cells.cell(os).how().is_some()
    }

    /// Whether it runs on the system this build is for.
    pub fn runs_here(&self) -> bool {
        self.runs_on(crate::platform::CURRENT)
    }

    /// Why it does not run here, when it does not, with its cell's reason: "runs on linux
    /// only, not on freebsd: not enabled: …".
    pub fn not_here(&self) -> Option<String> {
        let here = crate::platform::CURRENT;
        (!self.runs_here()).then(|| {
            let list: Vec<&str> = self.os().iter().map(|o| o.name()).collect();
            format!(
                "runs on {} only, not on {here}: {}",
                list.join(", "),
                self.cells.cell(here).text()
            )
        })
    }

    pub fn family(&self) -> &'static str {
        self.name
            .split_once('.')
            .map_or(self.name, |(family, _)| family)
    }

    /// The unit the median is stored in.
    pub fn unit(&self) -> String {
        format!("ns/{}", self.op)
    }

    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The system calls claimed at the parameters' defaults (what `oslab list` shows).
    pub fn default_claims(&self) -> Vec<Claim> {
        (self.syscalls)(&Params::resolve(self.name, self.params, &[]).unwrap_or_default())
    }
}

/// The system calls of an experiment that claims none (the default of `syscalls`).
pub fn no_claims(_: &Params) -> Vec<Claim> {
    Vec::new()
}

/// The expectations of an experiment that states none (the default of `expectations`).
pub fn no_expectations(_: &Params) -> Vec<Expectation> {
    Vec::new()
}

/// The setup of an experiment whose code is another system's: never reached (the runner
/// marks an experiment unsupported where its cell says it does not run), refused if it is.
pub fn elsewhere(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    Err(SetupError::Unsupported(format!(
        "this experiment's code is not built for {}",
        crate::platform::CURRENT.title()
    )))
}

/// Brings the setups (and preflights) of a family whose code is POSIX's into scope for its
/// declarations: on Unix from the module that holds the routines; elsewhere each setup is
/// [`elsewhere`] and each preflight [`elsewhere_preflight`], so the declarations (names,
/// parameters, claims, expectations) are built on every system and `oslab list` names them
/// there.
macro_rules! unix_setups {
    ($vis:vis $($module:ident)::+ => $($setup:ident),* $(; preflights: $($pre:ident),+)? $(,)?) => {
        #[cfg(unix)]
        $vis use $($module)::+::{$($setup,)* $($($pre),+)?};
        $(
            #[cfg(not(unix))]
            $vis use $crate::experiment::elsewhere as $setup;
        )*
        $($(
            #[cfg(not(unix))]
            $vis use $crate::experiment::elsewhere_preflight as $pre;
        )+)?
    };
}
pub(crate) use unix_setups;

/// The preflight of an experiment whose code is another system's: nothing to check, since it
/// does not run here (the command line checks only the experiments that run here).
pub fn elsewhere_preflight(_: &Params, _: &Context) -> Result<(), refusal::Refusal> {
    Ok(())
}

/// Every family's experiments, in the order the default suite runs them: each family's module
/// lists its own (`EXPERIMENTS`; the system calls' rungs are `syscall::RUNGS`), and `winapi`
/// those of Windows by the family they belong to (`ctxswitch.yield` and `process.thread`
/// have a build of their own on Windows, so the Unix declarations of those two are listed on
/// Unix only).
fn families() -> Vec<&'static [&'static ExperimentInfo]> {
    vec![
        syscall::EXPERIMENTS,
        syscall::RUNGS,
        winapi::SYSCALL,
        ctxswitch::EXPERIMENTS,
        winapi::CTXSWITCH,
        ipc::EXPERIMENTS,
        process::EXPERIMENTS,
        winapi::PROCESS,
        pagefault::EXPERIMENTS,
        winapi::PAGEFAULT,
        mmap::EXPERIMENTS,
        fs::EXPERIMENTS,
        // scale: for --copies; filemicro: Filebench's personalities (--suite filemicro);
        // unixbench: --suite unixbench.
        scale::EXPERIMENTS,
        filemicro::EXPERIMENTS,
        unixbench::EXPERIMENTS,
        synthetic::EXPERIMENTS,
    ]
}

/// Every experiment oslab knows, in the order the default suite runs them: the families'
/// lists one after the other.
pub static REGISTRY: LazyLock<Vec<&'static ExperimentInfo>> = LazyLock::new(|| families().concat());

/// The experiments whose copies may run as threads of one worker (`--copy-mode threads`):
/// several instances of their routine live side by side in one process, touch nothing
/// process-wide that a sample reads (no children reaped, no partner process), and what the
/// threads share is the point: one address space (faults, mmap and munmap under one mmap
/// lock) or one directory.
pub const THREAD_COPIES: &[&str] = &[
    "syscall.function_call",
    "syscall.getpid",
    "syscall.getppid",
    "pagefault.anon",
    "scale.mmap_munmap",
    "scale.open_close",
];

/// Why `info`'s copies cannot run as threads here, if they cannot.
pub fn thread_copies_refusal(info: &ExperimentInfo) -> Option<String> {
    if crate::platform::rusage::this_thread().is_none() {
        return Some(format!(
            "{} keeps no thread's own resource usage (getrusage RUSAGE_THREAD), which each \
             copy's samples need",
            crate::platform::CURRENT.title()
        ));
    }
    (!THREAD_COPIES.contains(&info.name)).then(|| {
        format!(
            "{} does not run as threads (those that do: {})",
            info.name,
            THREAD_COPIES.join(", ")
        )
    })
}

pub fn find(name: &str) -> Option<&'static ExperimentInfo> {
    REGISTRY.iter().copied().find(|e| e.name == name)
}

/// Whether `experiment`'s figures move with the host's kernel phases alone
/// (`analysis::host::PhaseBound`): it enters the kernel ([`ExperimentInfo::enters_kernel`])
/// and works on no files, whose writeback and journal can slow its kernel canaries. Not one
/// this build does not know.
pub fn phase_bound(experiment: &str) -> bool {
    find(experiment).is_some_and(|info| info.enters_kernel && !info.work_dir)
}

/// What a comparison needs from the declarations (`analysis::compare::Declared`).
pub const DECLARED: crate::analysis::compare::Declared =
    crate::analysis::compare::Declared { cell, phase_bound };

/// What the experiment of `result` expects of its counters at the result's parameters (what
/// `analysis::pool` checks again over a configuration's pooled processes); `None` for an
/// experiment this build does not know.
pub fn expectations_of(result: &crate::model::ExperimentResult) -> Option<Vec<Expectation>> {
    let info = find(&result.experiment)?;
    Some((info.expectations)(&Params::from_map(
        result.params.clone(),
    )))
}

/// Resolve command-line targets (experiment names or family names) to experiments, in
/// registry order without duplicates. No target means the default suite.
pub fn select(
    targets: &[String],
) -> Result<Vec<&'static ExperimentInfo>, crate::model::error::UserError> {
    // The default suite and a family's members are those that run on this system; an
    // experiment named on its own is run anyway, and marked unsupported with the reason.
    let suite = |e: &&ExperimentInfo| e.default_suite && e.runs_here();
    if targets.is_empty() {
        return Ok(REGISTRY.iter().copied().filter(suite).collect());
    }
    let mut chosen: Vec<&'static ExperimentInfo> = Vec::new();
    for target in targets {
        let matches: Vec<_> = if target.contains('.') {
            REGISTRY
                .iter()
                .copied()
                .filter(|e| e.name == target)
                .collect()
        } else {
            // A family selects its default-suite members; a hidden experiment must be named.
            let family: Vec<_> = REGISTRY
                .iter()
                .copied()
                .filter(|e| e.family() == target)
                .collect();
            let visible: Vec<_> = family.iter().copied().filter(suite).collect();
            if visible.is_empty() { family } else { visible }
        };
        if matches.is_empty() {
            return Err(not_found(target));
        }
        for e in matches {
            if !chosen.iter().any(|c| c.name == e.name) {
                chosen.push(e);
            }
        }
    }
    chosen.sort_by_key(|e| REGISTRY.iter().position(|r| r.name == e.name));
    Ok(chosen)
}

/// What `experiment` does on system `os` (named as `Environment::os` names it: `linux`,
/// `freebsd`…), from its declaration; `None` for an experiment or a system oslab does not know
/// (a stored run of a renamed experiment, say).
pub fn cell(experiment: &str, os: &str) -> Option<crate::model::equivalence::Cell> {
    Some(find(experiment)?.cells.cell(Os::from_name(os)?))
}

/// The equivalence table as docs/os-support.md shows it: one row per set of cells, with the
/// experiments that share it, in the registry's order of first appearance.
pub fn equivalence_markdown() -> String {
    let mut rows: Vec<(Vec<&str>, crate::model::equivalence::Cells)> = Vec::new();
    for e in REGISTRY.iter() {
        match rows.iter_mut().find(|(_, cells)| *cells == e.cells) {
            Some((names, _)) if names.contains(&e.name) => {}
            Some((names, _)) => names.push(e.name),
            None => rows.push((vec![e.name], e.cells)),
        }
    }
    crate::model::equivalence::markdown(&rows)
}

/// The error for a target that names no experiment (every system's build declares every
/// experiment, so such a name is unknown everywhere).
pub(crate) fn not_found(target: &str) -> crate::model::error::UserError {
    crate::model::error::UserError::UnknownExperiment(target.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_says_where_it_runs() {
        for e in REGISTRY.iter() {
            assert!(!e.os().is_empty(), "{} runs nowhere", e.name);
        }
        let on = |name| find(name).unwrap().os();
        assert_eq!(on("syscall.vdso_clock_gettime"), [Os::Linux]);
        assert_eq!(on("syscall.function_call"), Os::ALL);
        assert_eq!(on("syscall.create_file"), [Os::Windows]);
        // Two builds of one experiment (Unix's and Windows') say the same.
        #[cfg(windows)]
        assert_eq!(winapi::same_names::YIELD.cells, ctxswitch::YIELD_CELLS);
    }

    #[test]
    fn only_experiments_that_enter_the_kernel_and_leave_nothing_there_are_phase_bound() {
        assert!(phase_bound("syscall.getppid") && phase_bound("pagefault.anon"));
        assert!(phase_bound("ctxswitch.pipe") && phase_bound("process.fork"));
        // Work on files leaves writeback behind; user space is not moved by the phases.
        assert!(!phase_bound("fs.copy") && !phase_bound("filemicro.createfiles"));
        for user in [
            "syscall.function_call",
            "syscall.vdso_clock_gettime",
            "unixbench.dhrystone",
            "unixbench.whetstone",
            "synthetic.spin",
        ] {
            assert!(!phase_bound(user), "{user}");
        }
        assert!(!phase_bound("no.such_experiment"));
    }

    #[test]
    fn an_experiment_that_stays_in_user_space_says_so_in_its_path() {
        for info in REGISTRY.iter() {
            let user = info.path.starts_with("user space only") || info.path.contains("vDSO");
            assert_eq!(!info.enters_kernel, user, "{}: {}", info.name, info.path);
        }
    }

    #[test]
    fn cells_are_found_by_the_environment_name_of_the_system() {
        assert_eq!(
            cell("ctxswitch.futex", "freebsd").and_then(|c| c.how()),
            Some("_umtx_op UMTX_OP_WAIT_UINT / UMTX_OP_WAKE")
        );
        assert_eq!(
            cell("fs.read", "linux").and_then(|c| c.how()),
            cell("fs.write", "linux").and_then(|c| c.how())
        );
        assert_eq!(cell("syscall.getppid", "plan9"), None);
        assert_eq!(cell("no.such", "linux"), None);
    }

    #[test]
    fn the_default_suite_runs_here() {
        use crate::model::error::UserError;
        let here = crate::platform::CURRENT;
        let suite = select(&[]).unwrap();
        assert!(!suite.is_empty());
        assert!(suite.iter().all(|e| e.runs_on(here)));
        assert!(matches!(
            not_found("no.such"),
            UserError::UnknownExperiment(_)
        ));
    }

    /// docs/os-support.md holds the table as `equivalence_markdown` makes it; `OSLAB_BLESS=1
    /// cargo test the_docs_show_this_table` writes it there (the table's lines, from its
    /// header row to the first line that is not a row, are replaced). The rows follow the Unix
    /// registry's order; a Windows build registers its own `ctxswitch.yield` and
    /// `process.thread` later in its order (`families`), so the page is checked on Unix.
    #[cfg(unix)]
    #[test]
    fn the_docs_show_this_table() {
        // Embedded when built: the test executable also runs where the checkout is not (the
        // FreeBSD guest).
        let doc = include_str!("../../docs/os-support.md");
        let table = equivalence_markdown();
        if std::env::var("OSLAB_BLESS").as_deref() == Ok("1") {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/os-support.md");
            std::fs::write(path, with_table(doc, &table)).expect("docs/os-support.md written");
            return;
        }
        assert!(
            doc.contains(&table),
            "docs/os-support.md's table is not the code's: OSLAB_BLESS=1 cargo test \
             the_docs_show_this_table writes it; it should read:\n{table}"
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
    fn names_are_unique_and_well_formed() {
        for (i, e) in REGISTRY.iter().enumerate() {
            let (family, variant) = e.name.split_once('.').expect("family.variant");
            assert!(!family.is_empty() && !variant.is_empty(), "{}", e.name);
            assert!(
                REGISTRY[i + 1..].iter().all(|o| o.name != e.name),
                "duplicate {}",
                e.name
            );
            for p in e.params {
                assert!(
                    p.kind.check(p.default).is_ok(),
                    "{}: default of {} invalid",
                    e.name,
                    p.name
                );
            }
        }
    }

    // Of the POSIX experiments, which Windows builds leave out.
    #[cfg(unix)]
    #[test]
    fn select_family_and_names() {
        let all = select(&["syscall".into()]).unwrap();
        assert!(all.len() >= 10);
        assert!(all.iter().all(|e| e.family() == "syscall"));
        let one = select(&["syscall.getppid".into(), "syscall".into()]).unwrap();
        assert_eq!(one.len(), all.len(), "no duplicates");
        assert!(select(&["nosuch".into()]).is_err());
        assert!(select(&["syscall.nosuch".into()]).is_err());
        let default = select(&[]).unwrap();
        assert!(default.iter().all(|e| e.default_suite));
        assert!(
            select(&["synthetic".into()]).unwrap().len() == 1,
            "hidden family by name"
        );
    }
}

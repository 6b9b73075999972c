//! The equivalence table's vocabulary: what an experiment calls on each operating system, or
//! why it does not run there ([`Cells`], a row of the table). One experiment name means one
//! operation on every system; its cells say how each system performs it, so that a comparison
//! across systems (`oslab compare` of a Linux run with a FreeBSD one) can label every row whose
//! two sides took different paths — a vDSO read against a system call, a private futex
//! against `_umtx_op` — and `oslab list` and docs/os-support.md print the same table.
//!
//! A cell's `how` names the mechanism, and only the mechanism: two systems with the same `how`
//! do the same thing (the system-call numbers and calling details differ and go in `note`). An
//! experiment runs on a system exactly when its cell there is [`Cell::Runs`]. Each experiment's
//! declaration carries its cells (`ExperimentInfo::cells`, written in its family file), so the
//! table is the registry's; here are the types, the wording the families share and the
//! table's Markdown.

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

/// One experiment's row: a cell per system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cells {
    pub linux: Cell,
    pub freebsd: Cell,
    pub macos: Cell,
    pub windows: Cell,
}

impl Cells {
    /// The row of an experiment that states none: it runs nowhere (experiment's tests keep
    /// every registered experiment running somewhere).
    pub const NOWHERE: Cells = Cells {
        linux: Cell::No(NO_ROW),
        freebsd: Cell::No(NO_ROW),
        macos: Cell::No(NO_ROW),
        windows: Cell::No(NO_ROW),
    };

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
}

const NO_ROW: &str = "not in oslab's equivalence table";

/// The systems of the table, in column order.
pub const SYSTEMS: [Os; 4] = Os::ALL;

pub const fn runs(how: &'static str) -> Cell {
    Cell::Runs { how, note: "" }
}

pub const fn noted(how: &'static str, note: &'static str) -> Cell {
    Cell::Runs { how, note }
}

pub const RAW: &str = "raw system call (called or inline) or libc";
pub const NO_RAW_MACOS: &str = "raw system calls are private to libSystem: entry=call and \
                            entry=inline are unsupported";

pub const NOT_WINDOWS: Cell = Cell::No(
    "not available: a Windows call; ctxswitch.yield and ctxswitch.nanosleep0 are the nearest",
);
pub const NOT_WINDOWS_HAND_OVER: Cell = Cell::No(
    "not available: Windows' events; ctxswitch.pipe and ctxswitch.futex are the hand-overs here",
);

pub const NOT_WINDOWS_PROCESS: Cell =
    Cell::No("not available: a Windows call; process.fork_exec and process.posix_spawn here");
pub const NOT_WINDOWS_MEMORY: Cell =
    Cell::No("not available: a Windows call; pagefault.anon is mmap and a first touch here");

pub const NOT_WINDOWS_UNIXBENCH: Cell =
    Cell::No("not available: UnixBench's tests are POSIX programs (fork, pipes, /bin/sh)");

/// The table as Markdown, as docs/os-support.md shows it, from its rows in order (the
/// experiments of each, and their cells): a cell whose mechanism is Linux's reads "the same".
pub fn markdown(rows: &[(Vec<&str>, Cells)]) -> String {
    let mut out = String::from(
        "| experiment | Linux | FreeBSD | macOS | Windows |\n| --- | --- | --- | --- | --- |\n",
    );
    for (experiments, row) in rows {
        let names: Vec<String> = experiments.iter().map(|e| format!("`{e}`")).collect();
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

    #[test]
    fn a_row_runs_where_its_cells_say() {
        let row = Cells {
            linux: runs("a"),
            freebsd: Cell::No("no"),
            macos: noted("a", "b"),
            windows: NOT_WINDOWS,
        };
        assert_eq!(row.systems(), [Os::Linux, Os::MacOs]);
        assert_eq!(Cells::NOWHERE.systems(), []);
        let table = markdown(&[(vec!["x.y", "x.z"], row)]);
        assert!(
            table.contains("| `x.y`, `x.z` | a | no | the same (b) |"),
            "{table}"
        );
    }
}

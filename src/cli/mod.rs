//! The command line: parse, dispatch, and map outcomes to exit codes.
//!
//! Exit codes: 0 everything measured (unsupported experiments included), 1 internal error,
//! 2 a mistake in the command line or the database named, or output that cannot be written
//! (one line says the fix), 3 an experiment failed, 4 a result is suspect (its counters
//! contradict what it measures), 130 interrupted (Ctrl-C, SIGTERM, SIGHUP: one line says what
//! was kept), 5 `trace --experiment`: the traced pass differs from the experiment's claims,
//! 6 `push` (`run --push`): some run could not be pushed to the fleet store.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::experiment::selection::{self, Planned};
use crate::experiment::{self, ExperimentInfo, params::parse_assignment};
use crate::harness::plan::Plan;
use crate::harness::runner;
use crate::measure::clock::{self, ClockChoice};
use crate::measure::load::Load;
use crate::measure::sampler::SamplerConfig;
use crate::model::error::UserError;
use crate::model::{Run, RunSettings, Status};
use crate::platform::counters;
use crate::platform::cpu;
use crate::report;
use crate::store::Store;

mod args;
pub use args::*;
mod run;
use run::*;
mod list;
use list::*;
mod profile;
use profile::*;
mod trace;
use trace::*;
mod show;
use show::*;
mod compare;
use compare::*;
mod export;
use export::*;
mod history;
use history::*;
mod html_report;
use html_report::*;
mod fleet;
use fleet::*;
mod source;
use source::Source;
mod import;
pub use import::read_import;
use import::*;
mod env;
use env::*;
mod maps;
use maps::*;
mod shell;
use shell::*;

/// Parse the command line and run it.
pub fn main() -> ExitCode {
    crate::platform::interrupt::ignore_file_size_limit_signal();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let command = Cli::command().color(color_choice(&argv));
    let cli = match command
        .try_get_matches_from(&argv)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(err) => return usage_error(err, &argv),
    };
    match cli.command {
        Command::Worker => return ExitCode::from(crate::harness::worker::main() as u8),
        Command::MapsChild => return ExitCode::from(crate::harness::maps::child_main() as u8),
        Command::Load {
            cpu,
            memory,
            io,
            cgroup,
            parent,
        } => {
            let loads = (memory, io.as_deref());
            let code = crate::measure::load::main(cpu, loads, cgroup.as_deref(), parent);
            return ExitCode::from(code as u8);
        }
        _ => {}
    }
    match dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            let (line, code) = if let Some(stop) = err.downcast_ref::<Interrupted>() {
                (stop.to_string(), 130)
            } else if let Some(user) = err.downcast_ref::<UserError>() {
                (user.to_string(), 2)
            } else if let Some(store) = err.downcast_ref::<crate::store::StoreError>() {
                (store.to_string(), 2)
            } else if let Some(fleet) = err.downcast_ref::<crate::store::fleet::FleetError>() {
                (fleet.to_string(), 2)
            } else {
                (format!("error: {err:#}"), 1)
            };
            // Names in it may come from anywhere: escaped, and a 100 kB one cut.
            crate::say!("oslab: {}", report::text::error_line(&line));
            ExitCode::from(code)
        }
    }
}

/// Ctrl-C (or SIGTERM, SIGHUP) stopped a command before it changed anything the user sees:
/// one line says what was kept, and oslab exits with 130 as a shell does for Ctrl-C.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {}; {kept}", crate::platform::interrupt::signal_name(*.signal))]
pub(super) struct Interrupted {
    pub signal: i32,
    pub kept: String,
}

/// `Err(Interrupted)` if Ctrl-C (SIGTERM, SIGHUP) came since the handlers were installed.
pub(super) fn check_interrupt(kept: impl FnOnce() -> String) -> Result<()> {
    match crate::platform::interrupt::requested() {
        Some(signal) => Err(Interrupted {
            signal,
            kept: kept(),
        }
        .into()),
        None => Ok(()),
    }
}

/// Parse `argv` (the program name first) as `oslab` does and check the numbers and names in
/// it as the command would before it does anything: for `run` every option but `--dir` (whose
/// check creates a directory), for `compare` the `--noise`. Nothing is measured, read,
/// stored or written; help and version requests come back as clap's errors. The fuzz target
/// `cli_numbers` and its regression tests call this on arbitrary argument vectors, so it
/// must return, never panic.
pub fn check_command_line<I, T>(argv: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::try_parse_from(argv)?;
    match &cli.command {
        Command::Run(args) => {
            run::check_options(args)?;
        }
        Command::Profile(args) => {
            run::check_options(&args.run)?;
            profile::request(args)?;
        }
        Command::Compare(args) => {
            if let Some(noise) = &args.noise {
                parse_noise(noise)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// clap's tip for a value that looks like an option (`--precision -1`) says to put it after
/// `--`, where oslab would read it as an experiment name: name the option's own form instead.
fn value_tip(tip: &str, argv: &[std::ffi::OsString]) -> String {
    let Some(value) = tip
        .strip_prefix("to pass '")
        .and_then(|rest| rest.split_once('\''))
        .map(|(v, _)| v)
    else {
        return tip.to_string();
    };
    let option = argv
        .windows(2)
        .find(|w| w[1] == value)
        .and_then(|w| w[0].to_str())
        .filter(|o| o.starts_with("--"));
    match option {
        Some(option) => {
            format!("to pass '{value}' as the value of {option}, write {option}={value}")
        }
        None => format!("to pass '{value}' as an option's value, write it as --OPTION={value}"),
    }
}

/// Help and version go to stdout as clap prints them; a mistake becomes one line on stderr
/// that names the fix, like every other user error.
fn usage_error(err: clap::Error, argv: &[std::ffi::OsString]) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = err.print();
        return ExitCode::from(2);
    }
    let text = err.to_string();
    let first = usage_first(&text);
    let tip = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("tip: "))
        .map(|t| format!("; {}", value_tip(t, argv)))
        .unwrap_or_default();
    let line = format!("{first}{tip}; {}", usage_help(argv));
    crate::say!("oslab: {}", report::text::error_line(&line));
    ExitCode::from(2)
}

/// clap's first line, with the list it announces when it ends in a colon ("the following
/// required arguments were not provided:" and the arguments on the lines below).
fn usage_first(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid command line");
    let first = first.trim().trim_start_matches("error:").trim();
    if !first.ends_with(':') {
        return first.to_string();
    }
    let listed: Vec<&str> = lines
        .take_while(|l| l.starts_with(' ') && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    format!("{first} {}", listed.join(", "))
}

/// Where the help for the command the user typed is: the first word of the command line
/// that names one of oslab's commands (`oslab --db x.db export` → `oslab export --help`).
fn usage_help(argv: &[std::ffi::OsString]) -> String {
    let cli = Cli::command();
    let command = argv.iter().skip(1).find_map(|word| {
        let word = word.to_str()?;
        cli.get_subcommands()
            .any(|c| c.get_name() == word)
            .then_some(word)
    });
    match command {
        Some(name) => format!("`oslab {name} --help` says what it takes"),
        None => "`oslab --help` lists the commands and options".to_string(),
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run(cli.db, args),
        Command::Profile(args) => profile(cli.db, args),
        Command::Trace(args) => trace(&args),
        Command::List { json } => list(json),
        Command::Show {
            run,
            json,
            list,
            store,
        } => show(Source::open(cli.db, store)?, run, json, list),
        Command::Compare(args) => compare(Source::open(cli.db, args.store.clone())?, args),
        Command::History(args) => history(Source::open(cli.db, args.store.clone())?, &args),
        Command::Export {
            run,
            format,
            output,
            store,
        } => export(Source::open(cli.db, store)?, &run, format, output),
        Command::Report {
            output,
            store,
            by: Some(by),
            json,
            ..
        } => fleet_report(store, by, json, &output),
        Command::Report {
            runs,
            output,
            store,
            ..
        } => html_report(Source::open(cli.db, store)?, &runs, &output),
        Command::Push { runs, store, json } => push(cli.db, &runs, store, json),
        Command::Import { file } => import(cli.db, &file),
        Command::Env { json } => env(json),
        Command::Maps { pid, json } => maps(pid, json),
        Command::Completions { shell } => completions(shell),
        Command::Man { output } => man(output.as_deref()),
        Command::Worker | Command::Load { .. } | Command::MapsChild => {
            unreachable!("handled before dispatch")
        }
    }
}

fn db_path(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    UserError::BadOption(
                        "neither XDG_DATA_HOME nor HOME is set; pass --db PATH".into(),
                    )
                })?;
            PathBuf::from(home).join(".local/share")
        }
    };
    let dir = base.join("oslab");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.join("oslab.db"))
}

/// Write to stdout; a closed pipe (`| head`) is not an error, any other failure (a full disk,
/// the file-size limit) is the one output error every command gives.
pub(super) fn write_stdout(text: &str) -> Result<()> {
    // Stored strings may come from a foreign document: no terminal escape gets through.
    let text = report::text::printable(text);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(UserError::output("stdout".into(), &e).into()),
        Ok(()) => Ok(()),
    }
}

/// Refuse an output path whose directory does not exist (or is not a directory) before any
/// work is done, in the line [`write_file`] would give after it.
pub(super) fn check_output_dir(path: &std::path::Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => return Ok(()),
    };
    if std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
    Err(UserError::output(path.display().to_string(), &missing).into())
}

/// Write `text` to `path` whole or not at all: into a temporary file in the same directory,
/// renamed into place once complete, so Ctrl-C, a full disk or the file-size limit never
/// leave a truncated file at the user's path (the temporary one is removed: Ctrl-C, SIGTERM
/// and SIGHUP are only noted while it exists, and end the write between two chunks; one a
/// killed oslab left is removed by the next write into the same directory). The
/// file gets the mode a plain create would give (0666 less the umask). A symbolic link is
/// followed; a path that is not a regular file (a device, a pipe: `-o /dev/stdout`) is
/// written directly, since it cannot be replaced.
pub(super) fn write_file(path: &std::path::Path, text: &str) -> Result<()> {
    let nothing = || format!("nothing was written to {}", path.display());
    write_file_with(path, &mut |out| {
        for chunk in text.as_bytes().chunks(1 << 20) {
            check_interrupt(nothing)?;
            out.write_all(chunk)?;
        }
        Ok(())
    })
}

/// [`write_file`] of what `write` writes, as it writes it (`export` streams a run): an
/// `std::io::Error` it returns is the output's, said as [`write_file`] says it.
pub(super) fn write_file_with(
    path: &std::path::Path,
    write: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let fail = |e: &std::io::Error| {
        // Without the temporary file's name that some errors carry: the user named `path`.
        let bare = e.raw_os_error().map_or_else(
            || std::io::Error::from(e.kind()),
            std::io::Error::from_raw_os_error,
        );
        UserError::output(path.display().to_string(), &bare)
    };
    let output_error = |e: anyhow::Error| match e.downcast::<std::io::Error>() {
        Ok(io) => anyhow::Error::from(fail(&io)),
        Err(other) => other,
    };
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if std::fs::metadata(&target).is_ok_and(|m| !m.file_type().is_file()) {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .map_err(|e| fail(&e))?;
        let written = write(&mut file).and_then(|()| Ok(file.flush()?));
        return match written {
            Err(e)
                if e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
            {
                Ok(())
            }
            other => other.map_err(output_error),
        };
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    crate::platform::interrupt::install();
    let nothing = || format!("nothing was written to {}", path.display());
    check_interrupt(nothing)?;
    // Named after this oslab, so that the next one removes it if this one is killed.
    crate::harness::scratch::remove_orphans(dir, crate::harness::scratch::OUTPUT_PREFIX);
    let prefix = crate::harness::scratch::own_prefix(crate::harness::scratch::OUTPUT_PREFIX);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    if let Some(permissions) = crate::platform::new_file_permissions() {
        builder.permissions(permissions);
    }
    let mut tmp = builder.tempfile_in(dir).map_err(|e| fail(&e))?;
    // Dropping `tmp` on any early return removes the temporary file.
    write(&mut tmp).map_err(output_error)?;
    tmp.as_file().sync_all().map_err(|e| fail(&e))?;
    check_interrupt(nothing)?;
    tmp.persist(&target).map_err(|e| fail(&e.error))?;
    Ok(())
}

//! `oslab import`: a run exported elsewhere, stored once.

use super::*;
use report::export::{Sink, StreamError};

/// Everything that can refuse the file is decided before the database is opened, so a bad
/// file leaves the database exactly as it was. The file is read as a stream, twice: once to
/// check every result and fingerprint the run, once to store it (one transaction), so memory
/// holds one result at a time whatever the file's size.
pub(super) fn import(db: Option<PathBuf>, file: &std::path::Path) -> Result<ExitCode> {
    use crate::store::{Begin, Imported};
    let name = file.display().to_string();
    let (header, print) = check_file(file, &name)?;
    let path = db_path(db)?;
    // Ctrl-C during the import rolls it back and says so, instead of killing oslab mid-write.
    crate::platform::interrupt::install();
    let nothing = || format!("nothing was imported into {}", path.display());
    check_interrupt(nothing)?;
    let mut store = Store::open(&path)?;
    let stop = || crate::platform::interrupt::requested().is_some();
    let done = match store.import_begin(&header, &print)? {
        Begin::Done(done) => done,
        Begin::Importing(importing) => {
            let mut sink = Storing {
                importing,
                judge: report::plausible::Judge::new(),
                print: crate::store::Fingerprinting::new(&header),
                stop: &stop,
            };
            match report::export::read_stream(open(file, &name)?, &mut sink) {
                Ok(_) => {}
                Err(StreamError::Sink(Stopped::Interrupted)) => return stopped(nothing),
                Err(StreamError::Sink(Stopped::Store(e))) => return Err(e.into()),
                Err(StreamError::Read(e)) => return Err(changed(&name, &e.to_string()).into()),
            }
            let problems = sink.judge.finish();
            if sink.print.finish() != print || !problems.is_empty() {
                return Err(changed(&name, "it is not the file checked a moment ago").into());
            }
            if stop() {
                return stopped(nothing);
            }
            Imported::New(sink.importing.commit()?)
        }
    };
    match done {
        Imported::Stopped => return stopped(nothing),
        Imported::New(id) => crate::say!(
            "imported {name} (run {} where it was measured) as run {id} in {}",
            header.id,
            path.display()
        ),
        Imported::AlreadyImported(id) => crate::say!(
            "{name} was already imported as run {id} in {}; nothing changed",
            path.display()
        ),
        Imported::AlreadyStored(id) => crate::say!(
            "{name} holds run {id} of {}, which is already there; nothing changed",
            path.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn stopped(nothing: impl Fn() -> String) -> Result<ExitCode> {
    check_interrupt(&nothing)?;
    // `stop` said yes, so an interrupt was requested: not reached.
    Ok(ExitCode::SUCCESS)
}

/// The file changed between the check and the storing: nothing is stored.
fn changed(name: &str, why: &str) -> UserError {
    UserError::BadOption(format!(
        "{name} changed while it was imported ({why}); nothing was imported, import it again \
         once nothing writes it"
    ))
}

/// The file, buffered for the JSON reader (which otherwise reads a byte at a time).
fn open(file: &std::path::Path, name: &str) -> Result<impl std::io::Read, UserError> {
    let f = std::fs::File::open(file).map_err(|e| {
        UserError::BadOption(format!(
            "cannot read {name}: {e}; pass a file written by `oslab export --format json`"
        ))
    })?;
    Ok(std::io::BufReader::with_capacity(1 << 16, f))
}

/// The first pass: every result judged and fingerprinted, none kept. Returns the run without
/// its results and the run's fingerprint.
fn check_file(file: &std::path::Path, name: &str) -> Result<(Run, String), UserError> {
    let mut sink = Checking {
        judge: report::plausible::Judge::new(),
        print: None,
    };
    let streamed = read_checked(open(file, name)?, name, &mut sink)?;
    let mut judge = sink.judge;
    judge.header(streamed.header.started_at, streamed.header.finished_at);
    refuse(judge.finish(), name)?;
    let print = match sink.print {
        Some(print) if streamed.results_last => print.finish(),
        // The run's fields came after its results: fingerprinted in a pass of its own.
        _ => {
            let mut print = crate::store::Fingerprinting::new(&streamed.header);
            read_checked(open(file, name)?, name, &mut Fingerprint(&mut print))?;
            print.finish()
        }
    };
    Ok((streamed.header, print))
}

fn read_checked<S: Sink<Error = std::convert::Infallible>>(
    reader: impl std::io::Read,
    name: &str,
    sink: &mut S,
) -> Result<report::export::Streamed, UserError> {
    report::export::read_stream(reader, sink).map_err(|e| match e {
        StreamError::Read(e) => UserError::BadOption(format!("{name} {e}")),
        StreamError::Sink(never) => match never {},
    })
}

/// One line per problem; the last one also says what happened.
fn refuse(problems: Vec<String>, name: &str) -> Result<(), UserError> {
    if problems.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = problems.iter().map(|p| format!("{name}: {p}")).collect();
    Err(UserError::BadOption(format!(
        "{}; no measurement gives that, so nothing was imported (export the run again from \
         the database that holds it)",
        lines.join("\n")
    )))
}

/// The checking pass's sink.
struct Checking {
    judge: report::plausible::Judge,
    print: Option<crate::store::Fingerprinting>,
}

impl Sink for Checking {
    type Error = std::convert::Infallible;
    fn results_begin(&mut self, before: Option<&Run>) {
        self.print = before.map(crate::store::Fingerprinting::new);
    }
    fn result(&mut self, r: crate::model::ExperimentResult) -> Result<(), Self::Error> {
        self.judge.result(&r);
        if let Some(print) = &mut self.print {
            print.result(&r);
        }
        Ok(())
    }
}

/// A pass that only fingerprints, from a header known beforehand.
struct Fingerprint<'a>(&'a mut crate::store::Fingerprinting);

impl Sink for Fingerprint<'_> {
    type Error = std::convert::Infallible;
    fn results_begin(&mut self, _: Option<&Run>) {}
    fn result(&mut self, r: crate::model::ExperimentResult) -> Result<(), Self::Error> {
        self.0.result(&r);
        Ok(())
    }
}

/// Why the storing pass stopped.
enum Stopped {
    Interrupted,
    Store(crate::store::StoreError),
}

/// The storing pass's sink: each result judged and fingerprinted again (the file could have
/// changed since it was checked), then stored.
struct Storing<'a, 's> {
    importing: crate::store::Importing<'s>,
    judge: report::plausible::Judge,
    print: crate::store::Fingerprinting,
    stop: &'a dyn Fn() -> bool,
}

impl Sink for Storing<'_, '_> {
    type Error = Stopped;
    fn results_begin(&mut self, _: Option<&Run>) {}
    fn result(&mut self, r: crate::model::ExperimentResult) -> Result<(), Stopped> {
        if (self.stop)() {
            return Err(Stopped::Interrupted);
        }
        self.judge.result(&r);
        self.print.result(&r);
        self.importing.result(&r).map_err(Stopped::Store)
    }
}

/// An exported run checked as strictly as `oslab import` checks it before it opens the
/// database: UTF-8, the versioned JSON document of `oslab export`, and every value one a
/// measurement can produce ([`report::plausible::problems`]). `name` (the file) starts each
/// line of the error. Nothing is stored; the fuzz target `import_json` and its regression
/// tests call this on arbitrary bytes, so it must return, never panic.
pub fn read_import(bytes: &[u8], name: &str) -> Result<Run, UserError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        UserError::BadOption(format!(
            "{name} is not UTF-8 text ({e}); pass a file written by `oslab export --format json`"
        ))
    })?;
    let run = report::export::read_document(text)
        .map_err(|e| UserError::BadOption(format!("{name} {e}")))?;
    refuse(report::plausible::problems(&run), name)?;
    Ok(run)
}

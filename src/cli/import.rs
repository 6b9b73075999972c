//! `oslab import`: a run exported elsewhere, stored once.

use super::*;

/// Everything that can refuse the file is decided before the database is opened, so a bad
/// file leaves the database exactly as it was.
pub(super) fn import(db: Option<PathBuf>, file: &std::path::Path) -> Result<ExitCode> {
    use crate::store::Imported;
    let bytes = std::fs::read(file).map_err(|e| {
        UserError::BadOption(format!(
            "cannot read {}: {e}; pass a file written by `oslab export --format json`",
            file.display()
        ))
    })?;
    let run = read_import(&bytes, &file.display().to_string())?;
    let path = db_path(db)?;
    // Ctrl-C during the import rolls it back and says so, instead of killing oslab mid-write.
    crate::platform::interrupt::install();
    let nothing = || format!("nothing was imported into {}", path.display());
    check_interrupt(nothing)?;
    let mut store = Store::open(&path)?;
    let stop = || crate::platform::interrupt::requested().is_some();
    match store.import_run(&run, &stop)? {
        Imported::Stopped => check_interrupt(nothing)?,
        Imported::New(id) => eprintln!(
            "imported {} (run {} where it was measured) as run {id} in {}",
            file.display(),
            run.id,
            path.display()
        ),
        Imported::AlreadyImported(id) => eprintln!(
            "{} was already imported as run {id} in {}; nothing changed",
            file.display(),
            path.display()
        ),
        Imported::AlreadyStored(id) => eprintln!(
            "{} holds run {id} of {}, which is already there; nothing changed",
            file.display(),
            path.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
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
    let problems = report::plausible::problems(&run);
    if !problems.is_empty() {
        // One line per problem; the last one also says what happened.
        let lines: Vec<String> = problems.iter().map(|p| format!("{name}: {p}")).collect();
        return Err(UserError::BadOption(format!(
            "{}; no measurement gives that, so nothing was imported (export the run again \
             from the database that holds it)",
            lines.join("\n")
        )));
    }
    Ok(run)
}

//! `oslab import`: a run exported elsewhere, stored once.

use super::*;

/// Everything that can refuse the file is decided before the database is opened, so a bad
/// file leaves the database exactly as it was.
pub(super) fn import(db: Option<PathBuf>, file: &std::path::Path) -> Result<ExitCode> {
    use crate::store::Imported;
    let text = std::fs::read_to_string(file).map_err(|e| {
        UserError::BadOption(format!(
            "cannot read {}: {e}; pass a file written by `oslab export --format json`",
            file.display()
        ))
    })?;
    let run = report::export::read_document(&text)
        .map_err(|e| UserError::BadOption(format!("{} {e}", file.display())))?;
    let problems = report::plausible::problems(&run);
    if !problems.is_empty() {
        // One line per problem; the last one also says what happened.
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {p}", file.display()))
            .collect();
        return Err(UserError::BadOption(format!(
            "{}; no measurement gives that, so nothing was imported (export the run again \
             from the database that holds it)",
            lines.join("\n")
        ))
        .into());
    }
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

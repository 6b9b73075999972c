//! `oslab export`: a run as a versioned JSON document or CSV.

use super::*;

pub(super) fn export(
    mut source: Source,
    which: &str,
    format: ExportFormat,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    if let (ExportFormat::Json, Source::Local { .. }) = (format, &source) {
        let id = source.id_of(Some(which))?;
        if let Source::Local { store, path } = &source {
            return stream_json(store, path, id, output);
        }
    }
    let run = source.resolve(Some(which))?;
    let text = match format {
        ExportFormat::Json => {
            let mut s = serde_json::to_string_pretty(&report::export::json_document(&run))?;
            s.push('\n');
            s
        }
        ExportFormat::Csv => report::export::csv(&run),
    };
    match output {
        None => write_stdout(&text)?,
        Some(file) => {
            write_file(&file, &text)?;
            crate::say!("exported run {} to {}", run.id, file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A run of the local database as JSON, written a result at a time as each is read: memory
/// holds one result whatever the run's size. The same bytes as the whole document.
fn stream_json(
    store: &Store,
    path: &std::path::Path,
    id: i64,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    let (header, results) = store.read_run(id).map_err(|e| match e {
        crate::store::StoreError::NoSuchRun { .. } => {
            UserError::NoSuchRun(id.to_string(), path.display().to_string()).into()
        }
        e => anyhow::Error::from(e),
    })?;
    let mut results = Some(results);
    let nothing = |file: &std::path::Path| format!("nothing was written to {}", file.display());
    let mut write = |out: &mut dyn Write, file: Option<&std::path::Path>| -> Result<()> {
        let Some(results) = results.take() else {
            return Ok(());
        };
        // Ctrl-C (handled only when writing a file) stops between two results.
        let results = results.map(|r| {
            if let Some(file) = file {
                check_interrupt(|| nothing(file))?;
            }
            Ok::<_, anyhow::Error>(r?)
        });
        match report::export::write_document(out, &header, results) {
            Ok(()) => Ok(()),
            Err(report::export::WriteError::Io(e)) => Err(e.into()),
            Err(report::export::WriteError::Source(e)) => Err(e),
        }
    };
    match output {
        None => {
            // Stored strings may come from a foreign document: no terminal escape gets
            // through (as `write_stdout` does for a whole text).
            let mut out = report::text::Printable::new(std::io::stdout().lock());
            if let Err(e) = write(&mut out, None).and_then(|()| Ok(out.flush()?)) {
                match e.downcast::<std::io::Error>() {
                    Ok(io) if io.kind() == std::io::ErrorKind::BrokenPipe => {}
                    Ok(io) => return Err(UserError::output("stdout".into(), &io).into()),
                    Err(other) => return Err(other),
                }
            }
        }
        Some(file) => {
            write_file_with(&file, &mut |out| write(out, Some(&file)))?;
            crate::say!("exported run {id} to {}", file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `oslab export`: a run as a versioned JSON document or CSV.

use super::*;

pub(super) fn export(
    mut source: Source,
    which: &str,
    format: ExportFormat,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
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
            eprintln!("exported run {} to {}", run.id, file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

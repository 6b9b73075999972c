//! `oslab report`: the self-contained HTML page.

use super::*;

pub(super) fn html_report(
    mut source: Source,
    which: &[String],
    output: &std::path::Path,
) -> Result<ExitCode> {
    let runs: Vec<Run> = if which.is_empty() {
        vec![source.resolve(None)?]
    } else {
        which
            .iter()
            .map(|w| source.resolve(Some(w)))
            .collect::<Result<_>>()?
    };
    let page = report::html::render(&runs);
    write_file(output, &page)?;
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    crate::say!(
        "wrote the report of run {} to {}",
        ids.join(", "),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

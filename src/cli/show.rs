//! `oslab show`: a stored run as tables or JSON, or the list of runs.

use super::*;

pub(super) fn show(
    mut source: Source,
    which: Option<String>,
    json: bool,
    list: bool,
) -> Result<ExitCode> {
    if list {
        write_stdout(&report::list::runs(&source.list()?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let run = source.resolve(which.as_deref())?;
    print_run(&run, json)?;
    Ok(ExitCode::SUCCESS)
}

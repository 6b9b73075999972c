//! `oslab show` and finding a stored run by id or tag.

use super::*;

pub(super) fn show(
    db: Option<PathBuf>,
    which: Option<String>,
    json: bool,
    list: bool,
) -> Result<ExitCode> {
    let path = db_path(db)?;
    let store = Store::open_existing(&path)?;
    if list {
        write_stdout(&report::list::runs(&store.list_runs()?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let run = resolve_run(&store, &path, which.as_deref())?;
    print_run(&run, json)?;
    Ok(ExitCode::SUCCESS)
}

/// The run named by `which` (an id, else a tag), or the latest when `None`.
pub(super) fn resolve_run(
    store: &Store,
    path: &std::path::Path,
    which: Option<&str>,
) -> Result<Run> {
    let id = match which {
        None => store.latest_run_id()?,
        Some(text) => match text.parse::<i64>() {
            Ok(id) => Some(id),
            Err(_) => store.run_id_for_tag(text)?,
        },
    };
    let Some(id) = id else {
        return Err(match which {
            Some(which) => UserError::NoSuchRun(which.to_string(), path.display().to_string()),
            None => UserError::BadOption(format!(
                "no runs stored in {} yet; `oslab run` makes one",
                path.display()
            )),
        }
        .into());
    };
    match store.load_run(id) {
        Ok(run) => Ok(run),
        Err(crate::store::StoreError::NoSuchRun { .. }) => {
            Err(UserError::NoSuchRun(id.to_string(), path.display().to_string()).into())
        }
        Err(e) => Err(e.into()),
    }
}

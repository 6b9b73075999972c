//! Where `show`, `compare`, `export`, `report` and `profile --runs` read runs from: the local
//! database, or with `--store URL` a fleet store. A run is named by its id in that store, a
//! tag (the latest run with it) or its UUID; `tag:NAME` names a tag that reads as an id.

use super::*;
use crate::store::RunSummary;
use crate::store::fleet::{Fleet, Target};

/// What names a run by its tag alone: `tag:1` is the run tagged `1`, where `1` is run 1.
const TAG_PREFIX: &str = "tag:";

pub(super) enum Source {
    Local { store: Store, path: PathBuf },
    Fleet(Box<Fleet>),
}

impl Source {
    /// The fleet store `store` names, else the local database (which must exist).
    pub(super) fn open(db: Option<PathBuf>, store: Option<String>) -> Result<Source> {
        match store {
            Some(url) => Ok(Source::Fleet(Box::new(connect(Some(&url))?))),
            None => {
                let path = db_path(db)?;
                Ok(Source::Local {
                    store: Store::open_existing(&path)?,
                    path,
                })
            }
        }
    }

    /// How errors name it: the file, or the store's URL with its password masked.
    fn name(&self) -> String {
        match self {
            Source::Local { path, .. } => path.display().to_string(),
            Source::Fleet(f) => f.shown().to_string(),
        }
    }

    pub(super) fn list(&mut self) -> Result<Vec<RunSummary>> {
        Ok(match self {
            Source::Local { store, .. } => store.list_runs()?,
            Source::Fleet(f) => f.list_runs()?,
        })
    }

    /// The run named by `which` (an id, a UUID, else a tag; `tag:NAME` a tag whatever it
    /// reads as), or the latest when `None`.
    pub(super) fn resolve(&mut self, which: Option<&str>) -> Result<Run> {
        let id = self.id_of(which)?;
        self.load(id)
    }

    /// The id of the run `which` names, without reading the run.
    pub(super) fn id_of(&mut self, which: Option<&str>) -> Result<i64> {
        let id = match (which, &mut *self) {
            (None, Source::Local { store, .. }) => store.latest_run_id()?,
            (None, Source::Fleet(f)) => f.latest_run_id()?,
            // `tag:1`: a tag that reads as an id or a UUID (or anything) named as a tag.
            (Some(text), source) if text.starts_with(TAG_PREFIX) => {
                let tag = &text[TAG_PREFIX.len()..];
                match source {
                    Source::Local { store, .. } => store.run_id_for_tag(tag)?,
                    Source::Fleet(f) => f.run_id_for_tag(tag)?,
                }
            }
            (Some(text), source) => match text.parse::<i64>() {
                Ok(id) => Some(id),
                Err(_) if crate::model::identity::is_run_uuid(text) => match source {
                    Source::Local { store, .. } => store.run_id_for_uuid(text)?,
                    Source::Fleet(f) => f.run_id_for_uuid(text)?,
                },
                Err(_) => match source {
                    Source::Local { store, .. } => store.run_id_for_tag(text)?,
                    Source::Fleet(f) => f.run_id_for_tag(text)?,
                },
            },
        };
        let Some(id) = id else {
            return Err(match which {
                Some(which) => UserError::NoSuchRun(which.to_string(), self.name()),
                None => UserError::BadOption(format!(
                    "no runs stored in {} yet; `oslab run` makes one{}",
                    self.name(),
                    match self {
                        Source::Fleet(_) => " and `oslab push` sends it there",
                        Source::Local { .. } => "",
                    }
                )),
            }
            .into());
        };
        Ok(id)
    }

    /// The run with id `id`, whole.
    pub(super) fn load(&mut self, id: i64) -> Result<Run> {
        let loaded = match self {
            Source::Local { store, .. } => store.load_run(id).map_err(|e| match e {
                crate::store::StoreError::NoSuchRun { .. } => None,
                e => Some(anyhow::Error::from(e)),
            }),
            Source::Fleet(f) => f.load_run(id).map_err(|e| match e {
                crate::store::fleet::FleetError::NoSuchRun { .. } => None,
                e => Some(anyhow::Error::from(e)),
            }),
        };
        match loaded {
            Ok(run) => Ok(run),
            Err(None) => Err(UserError::NoSuchRun(id.to_string(), self.name()).into()),
            Err(Some(e)) => Err(e),
        }
    }
}

/// Connect to the fleet store `given` names (`None`: OSLAB_STORE, else the libpq variables).
pub(super) fn connect(given: Option<&str>) -> Result<Fleet> {
    let target = Target::resolve(given, &|k| std::env::var(k).ok())?;
    Ok(Fleet::connect(target)?)
}

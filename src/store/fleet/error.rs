//! What can go wrong with a fleet store, each as one line that names the store (its password
//! masked) and what to do about it.

use postgres::error::SqlState;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error(
        "no fleet store given: pass --store postgres://USER@HOST/DATABASE, or set OSLAB_STORE \
         (or PGHOST and the other libpq variables)"
    )]
    NoStore,

    #[error(
        "--store {url}: {reason}; give postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or \
         host=HOST port=PORT user=USER dbname=DATABASE"
    )]
    BadUrl { url: String, reason: String },

    #[error("cannot read sslrootcert {path}: {reason}; give a PEM file of the server's CA")]
    RootCert { path: String, reason: String },

    #[error(
        "cannot connect to the fleet store {target}: {detail}; is the server running and the address right?"
    )]
    Unreachable { target: String, detail: String },

    #[error(
        "the fleet store {target} refused the login: {detail}; check the user and password \
         (the URL's, or PGUSER and PGPASSWORD)"
    )]
    Login { target: String, detail: String },

    #[error(
        "the fleet store {target} has schema {found}, this oslab knows up to {supported}; \
         upgrade oslab to read and push to it"
    )]
    TooNew {
        target: String,
        found: i64,
        supported: i64,
    },

    #[error(
        "the fleet store {target} holds a table oslab.meta that is not oslab's; give another \
         database"
    )]
    Foreign { target: String },

    #[error("no run {which} in the fleet store {target}; `oslab show --list --store` lists them")]
    NoSuchRun { target: String, which: String },

    #[error("the fleet store {target} closed the connection while {what}: {detail}")]
    Lost {
        target: String,
        what: String,
        detail: String,
    },

    #[error("fleet store {target}: {what}: {detail}")]
    Sql {
        target: String,
        what: String,
        detail: String,
    },

    #[error(
        "the fleet store {target} holds another run under UUID {uuid} (its run {id}, other \
         content); this run was not pushed: to push it as a run of its own, export it, remove \
         the document's \"uuid\", import it and push that"
    )]
    UuidConflict {
        target: String,
        uuid: String,
        id: i64,
    },

    #[error("fleet store {target}: {what}: {detail}")]
    Data {
        target: String,
        what: String,
        detail: String,
    },
}

/// Turns a client error into the right [`FleetError`], with `target` (masked) and the step.
pub(super) fn classify(
    e: &postgres::Error,
    target: &str,
    secret: Option<&str>,
    what: &str,
) -> FleetError {
    let detail = mask(&detail(e), secret);
    let target = target.to_string();
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            || *code == SqlState::INVALID_CATALOG_NAME
        {
            return FleetError::Login { target, detail };
        }
        if *code == SqlState::ADMIN_SHUTDOWN || *code == SqlState::CRASH_SHUTDOWN {
            return FleetError::Lost {
                target,
                what: what.to_string(),
                detail,
            };
        }
        return FleetError::Sql {
            target,
            what: what.to_string(),
            detail,
        };
    }
    if e.is_closed() || what != "connecting" && io_error(e) {
        return FleetError::Lost {
            target,
            what: what.to_string(),
            detail,
        };
    }
    if what == "connecting" {
        return FleetError::Unreachable { target, detail };
    }
    FleetError::Sql {
        target,
        what: what.to_string(),
        detail,
    }
}

fn io_error(e: &postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// The error and its causes on one line: the server's message for a server error (its code
/// after it), else the chain "error connecting to server: Connection refused (os error 111)".
fn detail(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ").replace('\n', " ")
}

/// `text` with every occurrence of the password replaced: no error line may print it.
pub(super) fn mask(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "***"),
        _ => text.to_string(),
    }
}

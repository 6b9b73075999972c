//! Errors a user can fix. Each renders as one line that names the fix, and makes the process
//! exit with code 2 (so do the store's refusals, `store::StoreError`, which the CLI treats
//! alike). Everything else is an internal error (exit code 1) carried by `anyhow`.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum UserError {
    #[error("unknown experiment or family '{0}'; `oslab list` shows them")]
    UnknownExperiment(String),
    #[error("--param '{0}' is not NAME=VALUE; write e.g. --param size=4K")]
    ParamSyntax(String),
    #[error("{experiment}: parameter {name}={value} is invalid; expected {expected}")]
    BadParam {
        experiment: String,
        name: String,
        value: String,
        expected: String,
    },
    #[error("no selected experiment has a parameter '{name}'; {hint}")]
    UnknownParam { name: String, hint: String },
    #[error("{option} {given}: {why}; this process may use CPUs {allowed}")]
    BadCpu {
        option: &'static str,
        given: String,
        why: String,
        allowed: String,
    },
    #[error("{0}")]
    BadOption(String),
    #[error("no run {0} in {1}; `oslab show --list` lists the runs")]
    NoSuchRun(String, String),
    /// Output that could not be written, to stdout or a file: nothing partial is left.
    #[error("cannot write {what}: {error}; {fix}")]
    Output {
        what: String,
        error: String,
        fix: &'static str,
    },
}

impl UserError {
    /// An output failure, with the fix its error kind suggests.
    pub fn output(what: String, error: &std::io::Error) -> UserError {
        use std::io::ErrorKind;
        let fix = match error.kind() {
            ErrorKind::FileTooLarge => {
                "the file-size limit (ulimit -f) is reached: raise it or write less"
            }
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
                "the disk is full: free space or write elsewhere"
            }
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
                "check the path and its permissions"
            }
            ErrorKind::NotFound => "its directory does not exist: create it or write elsewhere",
            _ => "check the path, its permissions and the free space",
        };
        UserError::Output {
            what,
            error: error.to_string(),
            fix,
        }
    }
}

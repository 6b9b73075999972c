//! Why an experiment could not be set up: shared by the experiments that raise it and the
//! harness and platform code that report it, so it lives below both.

/// Why an experiment could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// It cannot run on this machine (missing feature, permission, architecture): not a failure.
    #[error("{0}")]
    Unsupported(String),
    /// It should have run and could not.
    #[error("{0}")]
    Failed(String),
}

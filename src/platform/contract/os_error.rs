//! A call into the operating system that failed: which call, and the system's own error kept
//! as the source, so a caller can match on its kind or errno and decide the wording.

use crate::model::routine::RoutineError;

/// `call` failed with `source`.
#[derive(Debug, thiserror::Error)]
#[error("{call} failed: {source}")]
pub struct OsError {
    /// The call as a reader knows it: `posix_fadvise`, `fcntl(F_NOCACHE)`.
    pub call: &'static str,
    #[source]
    pub source: std::io::Error,
}

impl OsError {
    /// `call` failed just now: the thread's errno.
    pub fn last(call: &'static str) -> OsError {
        OsError {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}

/// A routine's platform call that failed fails the operation with the same call and error.
impl From<OsError> for RoutineError {
    fn from(e: OsError) -> RoutineError {
        RoutineError::Os {
            call: e.call.to_string(),
            source: e.source,
        }
    }
}

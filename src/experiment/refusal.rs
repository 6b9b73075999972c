//! Why an experiment refuses a configuration before any worker starts ([`Refusal`], what a
//! [`Preflight`](super::Preflight) returns): in the experiment's own parameter names and the
//! machine's figures. The command line words the fix (which flag to change); nothing here
//! names one.

use std::path::PathBuf;

use crate::model::routine::RoutineError;

/// What a preflight found wrong with a configuration.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// Parameter `param` must not exceed parameter `limit` (a buffer larger than its file).
    #[error("{param} {value} is larger than {limit} {limit_value}")]
    Exceeds {
        param: &'static str,
        value: String,
        limit: &'static str,
        limit_value: String,
    },
    /// Parameter `param` asks for more memory than the machine can spare (there may be no
    /// swap): more than half of what is available.
    #[error("{param} {value} is more than half of MemAvailable ({})", human(*available))]
    Memory {
        param: &'static str,
        value: String,
        /// MemAvailable, bytes.
        available: u64,
    },
    /// The work directory's file system has too little room for `what`. `shrink` is the
    /// parameter that makes it smaller (`None`: several do).
    #[error("needs {} free in {} for {what} but only {} is free", human(*need), dir.display(), human(*free))]
    Room {
        need: u64,
        free: u64,
        dir: PathBuf,
        what: String,
        shrink: Option<&'static str>,
    },
    /// The room could not be measured.
    #[error(transparent)]
    Os(#[from] RoutineError),
}

impl Refusal {
    /// The same refusal with parameter names translated by `rename` (a family that runs
    /// another's preflight under its own names for the same parameters).
    pub fn renamed(self, rename: impl Fn(&'static str) -> &'static str) -> Refusal {
        match self {
            Refusal::Exceeds {
                param,
                value,
                limit,
                limit_value,
            } => Refusal::Exceeds {
                param: rename(param),
                value,
                limit: rename(limit),
                limit_value,
            },
            Refusal::Memory {
                param,
                value,
                available,
            } => Refusal::Memory {
                param: rename(param),
                value,
                available,
            },
            Refusal::Room {
                need,
                free,
                dir,
                what,
                shrink,
            } => Refusal::Room {
                need,
                free,
                dir,
                what,
                shrink: shrink.map(rename),
            },
            os @ Refusal::Os(_) => os,
        }
    }
}

/// A size in MiB, or GiB from 1 GiB on, to one decimal.
pub fn human(bytes: u64) -> String {
    let mib = bytes as f64 / (1u64 << 20) as f64;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_translates_every_parameter_and_keeps_the_figures() {
        let r = Refusal::Exceeds {
            param: "bufsize",
            value: "1 MiB".into(),
            limit: "size",
            limit_value: "4 KiB".into(),
        }
        .renamed(|p| match p {
            "bufsize" => "iosize",
            "size" => "filesize",
            other => other,
        });
        assert_eq!(r.to_string(), "iosize 1 MiB is larger than filesize 4 KiB");
        let room = Refusal::Room {
            need: 3 << 30,
            free: 1 << 20,
            dir: "/x".into(),
            what: "a file".into(),
            shrink: Some("size"),
        }
        .renamed(|_| "filesize");
        assert_eq!(
            room.to_string(),
            "needs 3.0 GiB free in /x for a file but only 1.0 MiB is free"
        );
        assert!(matches!(
            room,
            Refusal::Room {
                shrink: Some("filesize"),
                ..
            }
        ));
    }
}

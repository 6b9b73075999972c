//! What ended a process that did not exit ([`Killed`]): a signal on Unix, an exception on
//! Windows. Each backend's `process::ending` returns it.

/// What ended a process that did not exit on its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Killed {
    /// A Unix signal, by name (`SIGSEGV`) and number.
    #[error("{name} (signal {number})")]
    Signal { name: String, number: i32 },
    /// A Windows exception status, with its name where oslab knows it.
    #[error("{}", exception(*code, *name))]
    Exception {
        code: u32,
        name: Option<&'static str>,
    },
    /// Neither (the status as the standard library writes it).
    #[error("{0}")]
    Other(String),
}

fn exception(code: u32, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{name} ({code:#010X})"),
        None => format!("exception {code:#010X}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ending_reads_as_before() {
        let signal = Killed::Signal {
            name: "SIGSEGV".into(),
            number: 11,
        };
        assert_eq!(signal.to_string(), "SIGSEGV (signal 11)");
        let named = Killed::Exception {
            code: 0xC000_0005,
            name: Some("STATUS_ACCESS_VIOLATION"),
        };
        assert_eq!(named.to_string(), "STATUS_ACCESS_VIOLATION (0xC0000005)");
        let unnamed = Killed::Exception {
            code: 0xC000_0135,
            name: None,
        };
        assert_eq!(unnamed.to_string(), "exception 0xC0000135");
    }
}

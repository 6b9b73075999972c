//! The operating systems oslab knows by name. Which one this build runs on is the platform
//! layer's to say (`platform::CURRENT`); experiments declare the ones they support as data,
//! so `oslab list` can print it and a comparison across systems never pairs unlike things.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    Linux,
    FreeBsd,
    MacOs,
    Windows,
}

impl Os {
    /// Every system oslab knows, in the order tables list them.
    pub const ALL: [Os; 4] = [Os::Linux, Os::FreeBsd, Os::MacOs, Os::Windows];

    /// The system of a lowercase name (`Environment::os`, [`Os::name`]); `None` for one
    /// oslab does not know.
    pub fn from_name(name: &str) -> Option<Os> {
        Os::ALL.into_iter().find(|os| os.name() == name)
    }

    /// The name as the system's makers write it, for messages: `FreeBSD`, `macOS`.
    pub fn title(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::FreeBsd => "FreeBSD",
            Os::MacOs => "macOS",
            Os::Windows => "Windows",
        }
    }

    /// The lowercase name used in `oslab list`, JSON and `Environment::os`.
    pub fn name(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::FreeBsd => "freebsd",
            Os::MacOs => "macos",
            Os::Windows => "windows",
        }
    }
}

impl std::fmt::Display for Os {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde() {
        for os in Os::ALL {
            assert_eq!(
                serde_json::to_string(&os).unwrap(),
                format!("\"{}\"", os.name())
            );
            assert_eq!(Os::from_name(os.name()), Some(os));
        }
        assert_eq!(Os::from_name("plan9"), None);
    }
}

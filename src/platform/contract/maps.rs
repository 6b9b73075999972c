//! Why this process's own mapping at an address could not be read ([`RegionError`]): what
//! `maps::own_region_containing` returns on every backend.

/// Why the mapping holding an address could not be told.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    /// The map could not be read.
    #[error("{path}: {source}")]
    Read {
        path: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The map did not parse (the parser's line and reason).
    #[error("{path}: {what}")]
    Garbled { path: &'static str, what: String },
    /// No mapping holds the address.
    #[error("{path}: no mapping holds {address:#x}")]
    NoMapping { path: &'static str, address: u64 },
    /// This system's backend reads no memory maps (its reason).
    #[error("{0}")]
    Absent(String),
}

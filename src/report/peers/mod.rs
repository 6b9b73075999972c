//! Summaries in the shape of other tools' reports, from oslab's pooled results.

#[cfg(unix)]
pub mod filemicro;

//! Presentation: everything here reads finished records and returns text.

pub mod env_table;

//! Presentation: everything here reads finished records and returns text or JSON.

pub mod charts;
pub mod compare;
pub mod env_table;
pub mod export;
pub mod flame;
pub mod fleet;
pub mod format;
pub mod history;
pub mod host;
pub mod html;
pub mod json;
pub mod ladder;
pub mod levels;
pub mod list;
pub mod maps;
pub mod names;
pub mod paired;
pub mod peers;
pub mod plausible;
pub mod pool;
pub mod profile;
pub mod progress;
pub mod reclaim;
pub mod scaling;
mod show_sections;
pub mod text;
pub mod trace;

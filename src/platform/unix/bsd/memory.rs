//! Memory as FreeBSD and macOS report it, the parts they share: the page size, and what every
//! system without Linux's /proc lacks (`absent::memory`). Each backend adds `meminfo()` from
//! its own sysctls.

pub use super::env::page_size;
pub use crate::platform::absent::memory::*;

//! Anonymous memory for experiments (the platform's `anon::Anon`: mmap on Unix, VirtualAlloc
//! on Windows), unmapped when dropped.

pub use crate::platform::anon::Anon;

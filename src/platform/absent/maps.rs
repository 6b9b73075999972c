//! No memory maps yet: `oslab maps` refuses with the backend's reason, and an experiment that
//! asks what the kernel put behind its region gets the reason as its error.

use anyhow::Result;

use crate::model::error::UserError;
use crate::model::maps::{Region, Snapshot};
pub use crate::platform::contract::maps::RegionError;

fn why() -> String {
    super::refusal("oslab maps", super::super::this_os::why::MAPS)
}

/// Refused: see the module.
pub fn read(_pid: u32) -> Result<Snapshot> {
    Err(UserError::BadOption(why()).into())
}

/// Linux's `kernel.randomize_va_space`: no such setting here.
pub fn randomize_va_space() -> Option<u8> {
    None
}

/// Refused: see the module.
pub fn own_region_containing(_address: u64) -> std::result::Result<Region, RegionError> {
    Err(RegionError::Absent(why()))
}

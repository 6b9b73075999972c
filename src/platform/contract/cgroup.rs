//! The memory cgroup's types, the same for every backend (`platform::cgroup`).

/// Which cgroup interface holds the memory controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

impl CgroupVersion {
    pub fn limit_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        }
    }

    pub fn usage_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.usage_in_bytes",
            CgroupVersion::V2 => "memory.current",
        }
    }
}

/// The limits of a new cgroup, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The hard limit (v2 `memory.max`, v1 `memory.limit_in_bytes`).
    pub max: u64,
    /// v2 `memory.high`: where the kernel starts throttling and reclaiming (v1 has none).
    pub high: u64,
    /// How much may be swapped out, when there is swap and the kernel accounts it.
    pub swap: u64,
}

//! Arm's Main ID Register (MIDR_EL1): who designed a core and which core it is. Linux shows
//! its fields in `/proc/cpuinfo` ("CPU implementer", "CPU variant", "CPU part", "CPU
//! revision") and has no model name on arm64, so oslab names the core from this table.
//!
//! The identifiers are those Arm and the implementers publish (the Technical Reference
//! Manuals; Linux's `arch/arm64/include/asm/cputype.h`; util-linux's `lscpu-arm.c`).

use std::fmt;

/// MIDR_EL1's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Midr {
    pub implementer: u8,
    pub variant: u8,
    pub part: u16,
    pub revision: u8,
}

impl Midr {
    /// The register's value: implementer[31:24] variant[23:20] architecture[19:16]=0xf
    /// part[15:4] revision[3:0].
    pub fn value(&self) -> u32 {
        (u32::from(self.implementer) << 24)
            | (u32::from(self.variant & 0xf) << 20)
            | (0xf << 16)
            | (u32::from(self.part & 0xfff) << 4)
            | u32::from(self.revision & 0xf)
    }

    /// The implementer's name, e.g. "ARM", "Ampere", or None when unknown.
    pub fn vendor(&self) -> Option<&'static str> {
        IMPLEMENTERS
            .iter()
            .find(|(id, _, _)| *id == self.implementer)
            .map(|(_, name, _)| *name)
    }

    /// The core's name, e.g. "Neoverse-N1", or None when the table does not know it.
    pub fn core(&self) -> Option<&'static str> {
        let (_, _, parts) = IMPLEMENTERS
            .iter()
            .find(|(id, _, _)| *id == self.implementer)?;
        parts
            .iter()
            .find(|(part, _)| *part == self.part)
            .map(|(_, name)| *name)
    }
}

/// "ARM Neoverse-N1 r3p1"; an unknown core shows its numbers: "implementer 0x12 part 0x345 r0p1".
impl fmt::Display for Midr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rp = format!("r{}p{}", self.variant, self.revision);
        match (self.vendor(), self.core()) {
            (Some(vendor), Some(core)) => write!(f, "{vendor} {core} {rp}"),
            (Some(vendor), None) => write!(f, "{vendor} part {:#05x} {rp}", self.part),
            _ => write!(
                f,
                "implementer {:#04x} part {:#05x} {rp}",
                self.implementer, self.part
            ),
        }
    }
}

type Parts = &'static [(u16, &'static str)];

const IMPLEMENTERS: &[(u8, &str, Parts)] = &[
    (0x41, "ARM", ARM),
    (
        0x42,
        "Broadcom",
        &[(0x100, "Brahma-B53"), (0x516, "ThunderX2")],
    ),
    (0x43, "Cavium", CAVIUM),
    (0x46, "Fujitsu", &[(0x001, "A64FX")]),
    (
        0x48,
        "HiSilicon",
        &[(0xd01, "Kunpeng-920"), (0xd40, "Cortex-A76")],
    ),
    (
        0x4e,
        "NVIDIA",
        &[(0x000, "Denver"), (0x003, "Denver-2"), (0x004, "Carmel")],
    ),
    (0x50, "APM", &[(0x000, "X-Gene")]),
    (0x51, "Qualcomm", QUALCOMM),
    (
        0x53,
        "Samsung",
        &[
            (0x001, "Exynos-M1"),
            (0x002, "Exynos-M3"),
            (0x003, "Exynos-M4"),
            (0x004, "Exynos-M5"),
        ],
    ),
    (0x61, "Apple", APPLE),
    (
        0x70,
        "Phytium",
        &[
            (0x660, "FTC660"),
            (0x661, "FTC661"),
            (0x662, "FTC662"),
            (0x663, "FTC663"),
        ],
    ),
    (0xc0, "Ampere", &[(0xac3, "Ampere-1"), (0xac4, "Ampere-1a")]),
];

const ARM: Parts = &[
    (0xd01, "Cortex-A32"),
    (0xd02, "Cortex-A34"),
    (0xd03, "Cortex-A53"),
    (0xd04, "Cortex-A35"),
    (0xd05, "Cortex-A55"),
    (0xd06, "Cortex-A65"),
    (0xd07, "Cortex-A57"),
    (0xd08, "Cortex-A72"),
    (0xd09, "Cortex-A73"),
    (0xd0a, "Cortex-A75"),
    (0xd0b, "Cortex-A76"),
    (0xd0c, "Neoverse-N1"),
    (0xd0d, "Cortex-A77"),
    (0xd0e, "Cortex-A76AE"),
    (0xd40, "Neoverse-V1"),
    (0xd41, "Cortex-A78"),
    (0xd42, "Cortex-A78AE"),
    (0xd43, "Cortex-A65AE"),
    (0xd44, "Cortex-X1"),
    (0xd46, "Cortex-A510"),
    (0xd47, "Cortex-A710"),
    (0xd48, "Cortex-X2"),
    (0xd49, "Neoverse-N2"),
    (0xd4a, "Neoverse-E1"),
    (0xd4b, "Cortex-A78C"),
    (0xd4c, "Cortex-X1C"),
    (0xd4d, "Cortex-A715"),
    (0xd4e, "Cortex-X3"),
    (0xd4f, "Neoverse-V2"),
    (0xd80, "Cortex-A520"),
    (0xd81, "Cortex-A720"),
    (0xd82, "Cortex-X4"),
    (0xd84, "Neoverse-V3"),
    (0xd8e, "Neoverse-N3"),
];

const CAVIUM: Parts = &[
    (0x0a1, "ThunderX-88XX"),
    (0x0a2, "ThunderX-81XX"),
    (0x0a3, "ThunderX-83XX"),
    (0x0af, "ThunderX2-99xx"),
    (0x0b8, "ThunderX3-T110"),
];

const QUALCOMM: Parts = &[
    (0x001, "Oryon"),
    (0x800, "Falkor-V1/Kryo"),
    (0x801, "Kryo-V2"),
    (0x802, "Kryo-3XX-Gold"),
    (0x803, "Kryo-3XX-Silver"),
    (0x804, "Kryo-4XX-Gold"),
    (0x805, "Kryo-4XX-Silver"),
    (0xc00, "Falkor"),
    (0xc01, "Saphira"),
];

const APPLE: Parts = &[
    (0x022, "Icestorm-M1"),
    (0x023, "Firestorm-M1"),
    (0x024, "Icestorm-M1-Pro"),
    (0x025, "Firestorm-M1-Pro"),
    (0x028, "Icestorm-M1-Max"),
    (0x029, "Firestorm-M1-Max"),
    (0x032, "Blizzard-M2"),
    (0x033, "Avalanche-M2"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn midr(implementer: u8, variant: u8, part: u16, revision: u8) -> Midr {
        Midr {
            implementer,
            variant,
            part,
            revision,
        }
    }

    #[test]
    fn names_the_cores_of_known_machines() {
        // Neoverse-N1 r3p1 (Ampere Altra, Graviton2): MIDR 0x413fd0c1.
        let n1 = midr(0x41, 3, 0xd0c, 1);
        assert_eq!(n1.value(), 0x413f_d0c1);
        assert_eq!(n1.to_string(), "ARM Neoverse-N1 r3p1");
        let ampere = midr(0xc0, 0, 0xac3, 0);
        assert_eq!(ampere.to_string(), "Ampere Ampere-1 r0p0");
        let little = midr(0x41, 0, 0xd03, 4);
        assert_eq!(little.core(), Some("Cortex-A53"));
    }

    #[test]
    fn an_unknown_core_shows_its_numbers() {
        let arm = midr(0x41, 1, 0xfff, 2);
        assert_eq!(arm.to_string(), "ARM part 0xfff r1p2");
        let nobody = midr(0x12, 0, 0x345, 0);
        assert_eq!(nobody.to_string(), "implementer 0x12 part 0x345 r0p0");
    }
}

//! What CPUID tells about the processor, on any OS (x86-64 only; nothing elsewhere): the
//! backends of the systems without a CPU description of their own (the BSDs, Windows) use it.

/// What CPUID tells besides the OS (x86 only).
#[derive(Debug, Default)]
pub struct CpuidFacts {
    pub tsc_invariant: Option<bool>,
    pub xsave_bytes: Option<u32>,
    pub hypervisor: Option<String>,
    /// The brand string (`AMD EPYC 7B13`).
    pub model: Option<String>,
}

#[cfg(target_arch = "x86_64")]
pub fn facts() -> CpuidFacts {
    let cpuid = raw_cpuid::CpuId::new();
    let hypervisor = cpuid
        .get_feature_info()
        .filter(|f| f.has_hypervisor())
        .and_then(|_| cpuid.get_hypervisor_info())
        .map(|h| format!("{:?}", h.identify()));
    CpuidFacts {
        tsc_invariant: cpuid
            .get_advanced_power_mgmt_info()
            .map(|a| a.has_invariant_tsc()),
        xsave_bytes: cpuid
            .get_extended_state_info()
            .map(|x| x.xsave_area_size_enabled_features())
            .filter(|&size| size > 0),
        hypervisor,
        model: cpuid
            .get_processor_brand_string()
            .map(|b| b.as_str().trim().to_string())
            .filter(|b| !b.is_empty()),
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn facts() -> CpuidFacts {
    CpuidFacts::default()
}

//! Whether this binary runs under user-mode emulation (qemu-user through binfmt_misc): the
//! kernel's own architecture (`/proc/sys/kernel/arch`, which qemu-user passes through, unlike
//! `uname`, which it fakes) is not the one oslab was built for.

use std::fs;

/// What runs this binary when the kernel's architecture is not its own, in words; `None` on
/// native hardware (or a kernel without `kernel.arch`).
pub(super) fn emulation() -> Option<String> {
    let kernel = fs::read_to_string("/proc/sys/kernel/arch").ok()?;
    describe(std::env::consts::ARCH, kernel.trim(), &handlers())
}

/// The binfmt_misc handlers registered: (name, interpreter) of each enabled one.
fn handlers() -> Vec<(String, String)> {
    let Ok(dir) = fs::read_dir("/proc/sys/fs/binfmt_misc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let text = fs::read_to_string(entry.path()).ok()?;
            handler(&name, &text)
        })
        .collect()
}

/// A binfmt_misc entry's name and interpreter, if it is enabled.
fn handler(name: &str, text: &str) -> Option<(String, String)> {
    if text.lines().next().is_none_or(|l| l.trim() != "enabled") {
        return None;
    }
    let interpreter = text
        .lines()
        .find_map(|l| l.strip_prefix("interpreter "))?
        .trim()
        .to_string();
    Some((name.to_string(), interpreter))
}

/// `ours` (the build's architecture) under a kernel of `kernel`'s: the emulator a
/// binfmt_misc handler for `ours` names, or the plain fact.
fn describe(ours: &str, kernel: &str, handlers: &[(String, String)]) -> Option<String> {
    if same_arch(ours, kernel) {
        return None;
    }
    let by = handlers
        .iter()
        .find(|(name, _)| name.contains(ours))
        .map(|(name, interpreter)| format!("{name} (binfmt_misc: {interpreter}), "))
        .unwrap_or_default();
    Some(format!(
        "{by}user-mode emulation of {ours} on an {kernel} kernel: timings are not this CPU's \
         cost"
    ))
}

/// Rust's architecture names against the kernel's (`uname -m`).
fn same_arch(ours: &str, kernel: &str) -> bool {
    match ours {
        "x86" => kernel.len() == 4 && kernel.starts_with('i') && kernel.ends_with("86"),
        "arm" => kernel.starts_with("arm"),
        "powerpc64" => kernel.starts_with("ppc64"),
        "loongarch64" => kernel == "loongarch64",
        _ => ours == kernel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_kernel_means_emulation_named_by_its_binfmt_handler() {
        let qemu = "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: POC\n\
                    offset 0\nmagic 7f454c46\n";
        let handlers: Vec<_> = [("qemu-aarch64", qemu), ("python3.11", "disabled\n")]
            .iter()
            .filter_map(|(n, t)| handler(n, t))
            .collect();
        assert_eq!(handlers.len(), 1, "a disabled handler runs nothing");
        let said = describe("aarch64", "x86_64", &handlers).expect("emulated");
        assert!(said.starts_with("qemu-aarch64 (binfmt_misc: /usr/libexec/qemu-binfmt/"));
        assert!(said.contains("aarch64 on an x86_64 kernel"), "{said}");
        assert_eq!(describe("aarch64", "aarch64", &handlers), None);
        assert_eq!(describe("x86_64", "x86_64", &[]), None);
        assert_eq!(describe("x86", "i686", &[]), None);
        assert_eq!(describe("arm", "armv7l", &[]), None);
        assert!(
            describe("riscv64", "x86_64", &[])
                .unwrap()
                .starts_with("user-mode")
        );
    }
}

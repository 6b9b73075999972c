//! Kernel function names for sampled addresses, from /proc/kallsyms: each text symbol's start
//! address, sorted, so an address belongs to the last symbol at or below it. With
//! `kptr_restrict` hiding addresses from this user every address reads as 0, and there is
//! nothing to name a frame by: [`KernelSymbols::read`] says so.

use std::io;

/// The kernel's text symbols by address.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSymbols {
    /// (start address, name), sorted by address.
    symbols: Vec<(u64, String)>,
}

/// Why kernel frames cannot be named here.
#[derive(Debug, thiserror::Error)]
pub enum KallsymsError {
    #[error("cannot read /proc/kallsyms: {0}")]
    Read(#[from] io::Error),
    #[error(
        "/proc/kallsyms shows every address as 0 (kptr_restrict); run as root or set \
         kernel.kptr_restrict=0 to name kernel frames"
    )]
    Hidden,
}

impl KernelSymbols {
    /// The running kernel's symbols.
    pub fn read() -> Result<KernelSymbols, KallsymsError> {
        let text = std::fs::read_to_string("/proc/kallsyms")?;
        let symbols = KernelSymbols::parse(&text);
        if symbols.symbols.is_empty() {
            return Err(KallsymsError::Hidden);
        }
        Ok(symbols)
    }

    /// Text symbols (`t`, `T`, `w`, `W`) with a non-zero address from kallsyms text; other
    /// lines are skipped.
    pub fn parse(text: &str) -> KernelSymbols {
        let mut symbols: Vec<(u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let address = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                let text_symbol = matches!(kind, "t" | "T" | "w" | "W");
                (text_symbol && address != 0).then(|| (address, name.to_string()))
            })
            .collect();
        symbols.sort_by_key(|(address, _)| *address);
        KernelSymbols { symbols }
    }

    /// The function `address` falls in, if it is at or above the first symbol.
    pub fn name(&self, address: u64) -> Option<&str> {
        let after = self.symbols.partition_point(|(start, _)| *start <= address);
        after.checked_sub(1).map(|i| self.symbols[i].1.as_str())
    }

    /// The start address of the function named `name`, if there is one.
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.symbols
            .iter()
            .find(|(_, n)| n == name)
            .map(|(a, _)| *a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
ffffffff81000000 T _text
ffffffff81000100 t entry_SYSCALL_64
ffffffff81000080 D some_data
ffffffff81000200 T do_syscall_64
0000000000000000 T hidden
ffffffff81000300 W weak_thing [module]
garbage line
";

    #[test]
    fn an_address_belongs_to_the_last_symbol_at_or_below_it() {
        let k = KernelSymbols::parse(SAMPLE);
        assert_eq!(k.name(0xffff_ffff_8100_0100), Some("entry_SYSCALL_64"));
        assert_eq!(k.name(0xffff_ffff_8100_01ff), Some("entry_SYSCALL_64"));
        assert_eq!(k.name(0xffff_ffff_8100_0250), Some("do_syscall_64"));
        assert_eq!(
            k.name(0xffff_ffff_8100_0090),
            Some("_text"),
            "data is not a function"
        );
        assert_eq!(k.name(0xffff_ffff_8100_0400), Some("weak_thing"));
        assert_eq!(k.name(0x1000), None);
    }

    #[test]
    fn hidden_addresses_name_nothing() {
        let k = KernelSymbols::parse("0000000000000000 T _text\n0000000000000000 t f\n");
        assert_eq!(k.name(0xffff_ffff_8100_0000), None);
    }
}

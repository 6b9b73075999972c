//! Names for sampled frames: kernel addresses from /proc/kallsyms ([`KernelSymbols`]), user
//! addresses of a live process from its mappings and the ELF symbol tables of the files they
//! map (blazesym, which also demangles Rust and C++ names). A return address (every frame
//! but the leaf) is named by the byte before it, the call instruction, so a call at the very
//! end of a function is not mistaken for the next function.

use std::collections::{HashMap, HashSet};

use blazesym::Pid;
use blazesym::symbolize::source::{Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};

use super::kallsyms::KernelSymbols;
use super::stacks::RawStack;
use crate::model::profile::{KERNEL_FRAME, KERNEL_SUFFIX, USER_FRAME};

/// Names frames of this machine's kernel and live processes.
pub struct FrameNamer {
    kernel: Result<KernelSymbols, String>,
    user: Symbolizer,
}

impl Default for FrameNamer {
    fn default() -> FrameNamer {
        FrameNamer::new()
    }
}

impl FrameNamer {
    /// Reads the kernel's symbols now (~50 ms); user symbols are read when asked for.
    pub fn new() -> FrameNamer {
        FrameNamer {
            kernel: KernelSymbols::read().map_err(|e| e.to_string()),
            user: Symbolizer::new(),
        }
    }

    /// Why kernel frames read [`KERNEL_FRAME`], if they do.
    pub fn kernel_problem(&self) -> Option<&str> {
        self.kernel.as_ref().err().map(String::as_str)
    }

    /// Each stack of process `pid` (`None`: this one), named leaf first: its kernel frames
    /// (with [`KERNEL_SUFFIX`]) then its user frames. The process must still be alive.
    pub fn name(&self, pid: Option<u32>, stacks: &[RawStack]) -> Vec<Vec<String>> {
        let users = self.user_names(pid, stacks);
        stacks
            .iter()
            .map(|stack| {
                let mut names = Vec::with_capacity(stack.kernel.len() + stack.user.len());
                for (i, &address) in stack.kernel.iter().enumerate() {
                    let name = self
                        .kernel
                        .as_ref()
                        .ok()
                        .and_then(|k| k.name(called(i, address)));
                    names.push(match name {
                        Some(name) => format!("{}{KERNEL_SUFFIX}", clean(name)),
                        None => KERNEL_FRAME.to_string(),
                    });
                }
                // The user frames continue the kernel's: the first is a leaf only if the
                // sample has no kernel frames.
                let offset = stack.kernel.len();
                for (i, &address) in stack.user.iter().enumerate() {
                    let name = users.get(&called(offset + i, address));
                    names.push(name.cloned().unwrap_or_else(|| USER_FRAME.to_string()));
                }
                names
            })
            .collect()
    }

    /// The user addresses of `stacks` that blazesym could name, looked up in one call.
    fn user_names(&self, pid: Option<u32>, stacks: &[RawStack]) -> HashMap<u64, String> {
        let wanted: HashSet<u64> = stacks
            .iter()
            .flat_map(|s| {
                let offset = s.kernel.len();
                s.user
                    .iter()
                    .enumerate()
                    .map(move |(i, &a)| called(offset + i, a))
            })
            .collect();
        let addresses: Vec<u64> = wanted.into_iter().collect();
        let process = Process::new(pid.map_or(Pid::Slf, Pid::from));
        let Ok(named) = self
            .user
            .symbolize(&Source::Process(process), Input::AbsAddr(&addresses))
        else {
            return HashMap::new();
        };
        addresses
            .iter()
            .zip(named)
            .filter_map(|(&address, named)| match named {
                Symbolized::Sym(sym) => Some((address, clean(&sym.name))),
                Symbolized::Unknown(_) => None,
            })
            .collect()
    }
}

/// The address to name for the `depth`-th frame of a stack (0: the leaf, where the sample
/// interrupted; deeper ones are return addresses).
fn called(depth: usize, address: u64) -> u64 {
    if depth == 0 {
        address
    } else {
        address.saturating_sub(1)
    }
}

/// A name as a folded stack can hold it: `;` separates frames there.
fn clean(name: &str) -> String {
    name.replace(';', ":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_of_this_test() -> u64 {
        std::hint::black_box(7)
    }

    #[test]
    fn this_process_and_this_kernel_are_named() {
        let namer = FrameNamer::new();
        let here = a_function_of_this_test as *const () as usize as u64;
        let stack = RawStack {
            kernel: Vec::new(),
            user: vec![here + 1, 0x10],
        };
        let names = namer.name(None, &[stack]);
        assert!(
            names[0][0].contains("a_function_of_this_test"),
            "{:?}",
            names[0]
        );
        assert_eq!(names[0][1], USER_FRAME, "an unmapped address");
        assert!(!names[0][0].ends_with(KERNEL_SUFFIX));

        let Ok(kernel) = KernelSymbols::read() else {
            assert!(namer.kernel_problem().is_some());
            return;
        };
        let Some(address) = kernel.address_of("do_syscall_64") else {
            return;
        };
        let stack = RawStack {
            kernel: vec![address + 1, address + 2],
            user: Vec::new(),
        };
        let names = namer.name(None, &[stack]);
        assert_eq!(names[0], ["do_syscall_64_[k]", "do_syscall_64_[k]"]);
    }

    #[test]
    fn a_return_address_is_named_by_its_call() {
        assert_eq!(called(0, 100), 100);
        assert_eq!(called(3, 100), 99);
        assert_eq!(clean("a;b"), "a:b");
    }
}

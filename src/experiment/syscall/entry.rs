//! The path into the kernel, a parameter of every system-call rung: `entry=call` (the trap
//! instruction in a function that is never inlined, as every program reaches the kernel: the
//! headline figure), `entry=inline` (the instruction written inline in the timed loop: the
//! floor) or `entry=libc` (the C library's own wrapper, where it has one). The ladder measures
//! `call` and `inline` by default and shows the gap between them (docs/syscall-path.md).

use super::super::{ParamKind, ParamSpec, Params};

#[cfg(unix)]
pub use calls::*;

/// How one rung enters the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Call,
    Inline,
    Libc,
}

impl Entry {
    pub const NAME: &'static str = "entry";

    /// The entry a result was measured on, from its parameters (`call` when absent: the
    /// default).
    pub fn of(params: &Params) -> Entry {
        match params.get(Self::NAME) {
            Some("inline") => Entry::Inline,
            Some("libc") => Entry::Libc,
            _ => Entry::Call,
        }
    }

    #[cfg(test)]
    pub fn as_str(self) -> &'static str {
        match self {
            Entry::Call => "call",
            Entry::Inline => "inline",
            Entry::Libc => "libc",
        }
    }
}

const HELP: &str = "how the call enters the kernel: call = the trap instruction in a function \
                    that is never inlined (what a program pays), inline = the instruction \
                    inline in the timed loop (the floor), libc = the C library's wrapper \
                    (for clock_gettime, glibc's syscall())";

/// Every rung that enters the kernel.
pub const ENTRY_PARAM: ParamSpec = ParamSpec {
    name: Entry::NAME,
    kind: ParamKind::Choice(&["call", "inline", "libc"]),
    default: "call",
    help: HELP,
};

/// Both paths by default, so the ladder can show the gap.
pub const ENTRY_SWEEP: &[(&str, &[&str])] = &[(Entry::NAME, &["call", "inline"])];

/// What `oslab list` says of the path of a rung with the parameter.
pub const PATH: &str = "raw syscall instruction in a called function (entry=call), inline in \
                        the loop (entry=inline), or libc's wrapper (entry=libc)";

/// The routine of a rung, POSIX's: a closure that traps and the kernel's result.
#[cfg(unix)]
mod calls {
    use super::super::super::Routine;
    use crate::experiment::RoutineError;
    use crate::platform::raw;
    use std::hint::black_box;

    /// A routine around a closure that performs one operation and returns the kernel's result;
    /// a negative result stops the experiment with the errno.
    struct Calls<F: FnMut(u64) -> i64> {
        what: &'static str,
        call: F,
    }

    impl<F: FnMut(u64) -> i64> Routine for Calls<F> {
        #[inline(never)]
        fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
            for i in 0..ops {
                let ret = (self.call)(black_box(i));
                if ret < 0 {
                    return Err(RoutineError::Check(format!(
                        "{} failed: {}",
                        self.what,
                        raw::errno_text(ret)
                    )));
                }
            }
            Ok(())
        }
    }

    pub fn boxed<F: FnMut(u64) -> i64 + 'static>(what: &'static str, call: F) -> Box<dyn Routine> {
        Box::new(Calls { what, call })
    }

    /// A libc result (`-1` with errno) as a raw one (`-errno`).
    #[inline(always)]
    /// libc's syscall() result as an i64: a long on Linux, an int on the BSDs.
    pub fn widen<T: Into<i64>>(ret: T) -> i64 {
        ret.into()
    }

    pub fn from_libc(ret: i64) -> i64 {
        if ret == -1 {
            -(std::io::Error::last_os_error().raw_os_error().unwrap_or(0) as i64)
        } else {
            ret
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn entry_reads_its_parameter() {
        let of = |v: &str| Entry::of(&Params::from_pairs(&[("entry", v)]));
        assert_eq!(of("inline"), Entry::Inline);
        assert_eq!(of("libc"), Entry::Libc);
        assert_eq!(of("call"), Entry::Call);
        assert_eq!(
            Entry::of(&Params::default()),
            Entry::Call,
            "call is the default"
        );
        let spec = ENTRY_PARAM;
        assert!(spec.kind.check(spec.default).is_ok());
        assert!(spec.kind.check("libc").is_ok());
        assert!(spec.kind.check("syscall").is_err());
        for value in ENTRY_SWEEP[0].1 {
            assert!(spec.kind.check(value).is_ok());
        }
    }

    #[test]
    fn libc_errors_become_negative_errnos() {
        assert_eq!(from_libc(3), 3);
        // SAFETY: closing a descriptor that cannot be open fails with EBADF and touches nothing.
        let ret = from_libc(unsafe { libc::close(-1) } as i64);
        assert_eq!(ret, -(libc::EBADF as i64));
    }
}

//! No steal time: the `Steal` of every backend but Linux's (FreeBSD's kern.cp_times has no
//! steal state; macOS and Windows are not read yet).

/// The time a hypervisor stole from a CPU, where the system does not say it: never opens.
pub struct Steal(());

impl Steal {
    /// `None`: no steal figure here (the backend's `NO_STEAL` says why).
    pub fn open(_cpu: Option<usize>) -> Option<Steal> {
        None
    }

    /// Never reached: no `Steal` exists here.
    pub fn read_ns(&mut self) -> Option<u64> {
        None
    }
}

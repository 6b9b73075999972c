//! Sampled stacks turned into what a reader asks of them: folded stacks (the input of a flame
//! graph, one line `root;…;leaf count` per distinct stack, as Brendan Gregg's
//! stackcollapse scripts write them) and the share of samples in each part of the kernel,
//! judged by the function a sample was in (its leaf frame).
//!
//! A frame is a function name; kernel frames end in `_[k]` (see `model::profile`).

use std::collections::BTreeMap;

use crate::model::profile::{FoldedStack, KERNEL_SUFFIX, Profile, USER_FRAME};

/// A kernel frame's function name without its `_[k]`; other frames as they are.
pub fn function(frame: &str) -> &str {
    frame.strip_suffix(KERNEL_SUFFIX).unwrap_or(frame)
}

/// Where a sampled CPU moment went, by the function it was in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bucket {
    /// Entering and leaving the kernel: the syscall entry and return paths, and the
    /// speculative-execution mitigations on them (return thunks, indirect-branch thunks,
    /// branch-history clearing, untraining).
    EntryExit,
    /// The scheduler: picking, switching and waking tasks.
    Scheduler,
    /// Handling a page fault.
    PageFault,
    /// The virtual file system and file systems: path lookup, files, inodes, the page cache.
    Vfs,
    /// The rest of the kernel: the work the system call was made for.
    Body,
    /// User space.
    User,
}

impl Bucket {
    pub const ALL: [Bucket; 6] = [
        Bucket::EntryExit,
        Bucket::Body,
        Bucket::Scheduler,
        Bucket::PageFault,
        Bucket::Vfs,
        Bucket::User,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Bucket::EntryExit => "entry/exit",
            Bucket::Scheduler => "scheduler",
            Bucket::PageFault => "page fault",
            Bucket::Vfs => "vfs",
            Bucket::Body => "syscall body",
            Bucket::User => "user",
        }
    }

    /// The bucket of a frame: user space, or a part of the kernel by the function's name.
    pub fn of(frame: &str) -> Bucket {
        let Some(function) = frame.strip_suffix(KERNEL_SUFFIX) else {
            return Bucket::User;
        };
        const ENTRY_EXIT: &[&str] = &[
            "entry_SYSCALL",
            "do_syscall_64",
            "syscall_return",
            "syscall_exit",
            "exit_to_user_mode",
            "syscall_enter_from_user_mode",
            "__x86_indirect_thunk",
            "__x86_return_thunk",
            "srso_",
            "retbleed_",
            "clear_bhb_loop",
            "entry_untrain_ret",
            "x64_sys_call",
            "__pfx_",
        ];
        const SCHEDULER: &[&str] = &[
            "schedule",
            "__schedule",
            "pick_next",
            "context_switch",
            "finish_task_switch",
            "try_to_wake_up",
            "enqueue_",
            "dequeue_",
            "update_curr",
            "switch_mm",
            "__switch_to",
            "yield",
            "sched_",
            "ttwu_",
        ];
        const PAGE_FAULT: &[&str] = &[
            "asm_exc_page_fault",
            "exc_page_fault",
            "do_user_addr_fault",
            "handle_mm_fault",
            "__handle_mm_fault",
            "do_anonymous_page",
            "do_fault",
            "do_wp_page",
            "wp_page_copy",
            "handle_pte_fault",
            "clear_page",
            "alloc_anon_folio",
            "do_huge_pmd",
        ];
        const VFS: &[&str] = &[
            "vfs_",
            "path_",
            "link_path_walk",
            "walk_component",
            "lookup_",
            "filename_",
            "do_sys_open",
            "do_filp_open",
            "do_sys_openat",
            "getname",
            "putname",
            "dput",
            "d_alloc",
            "__d_lookup",
            "inode_",
            "generic_perm",
            "fput",
            "__fput",
            "filp_",
            "ext4_",
            "tmpfs",
            "shmem_",
            "filemap_",
            "iomap_",
            "do_statx",
            "vfs_fstat",
            "cp_new_stat",
            "fd_install",
            "alloc_fd",
            "close_fd",
            "file_close_fd",
        ];
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| function.starts_with(p));
        if starts(ENTRY_EXIT) {
            Bucket::EntryExit
        } else if starts(SCHEDULER) {
            Bucket::Scheduler
        } else if starts(PAGE_FAULT) {
            Bucket::PageFault
        } else if starts(VFS) {
            Bucket::Vfs
        } else {
            Bucket::Body
        }
    }
}

/// Stacks (leaf first, as sampled) folded: `root;…;leaf` → how many samples had it.
/// Consecutive `[user]` frames are one.
pub fn fold(stacks: &[Vec<String>]) -> BTreeMap<String, u64> {
    let mut folded = BTreeMap::new();
    for stack in stacks {
        let mut frames: Vec<&str> = Vec::with_capacity(stack.len());
        for frame in stack.iter().rev() {
            if frame == USER_FRAME && frames.last() == Some(&USER_FRAME) {
                continue;
            }
            frames.push(frame);
        }
        if !frames.is_empty() {
            *folded.entry(frames.join(";")).or_insert(0) += 1;
        }
    }
    folded
}

/// Each bucket's share of the samples (0–1), by each sample's leaf frame; empty with no
/// samples.
pub fn bucket_shares(folded: &BTreeMap<String, u64>) -> BTreeMap<Bucket, f64> {
    let total: u64 = folded.values().sum();
    if total == 0 {
        return BTreeMap::new();
    }
    let mut counts: BTreeMap<Bucket, u64> = BTreeMap::new();
    for (leaf, n) in leaf_counts(folded) {
        *counts.entry(Bucket::of(leaf)).or_insert(0) += n;
    }
    counts
        .into_iter()
        .map(|(b, n)| (b, n as f64 / total as f64))
        .collect()
}

/// The functions samples were in (their leaf frames), most first, with their share: at most
/// `n`.
pub fn top_functions(folded: &BTreeMap<String, u64>, n: usize) -> Vec<(String, f64)> {
    let total: u64 = folded.values().sum();
    let mut top: Vec<(String, f64)> = leaf_counts(folded)
        .into_iter()
        .map(|(f, c)| (f.to_string(), c as f64 / total.max(1) as f64))
        .collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(n);
    top
}

/// How each function's share of samples (as a leaf) moved from profile `a` to profile `b`:
/// (frame, share in a, share in b), the largest moves first; at most `n`.
pub fn share_changes(
    a: &BTreeMap<String, u64>,
    b: &BTreeMap<String, u64>,
    n: usize,
) -> Vec<(String, f64, f64)> {
    let share = |folded: &BTreeMap<String, u64>| -> BTreeMap<String, f64> {
        let total = folded.values().sum::<u64>().max(1) as f64;
        leaf_counts(folded)
            .into_iter()
            .map(|(f, c)| (f.to_string(), c as f64 / total))
            .collect()
    };
    let (sa, sb) = (share(a), share(b));
    let mut frames: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    frames.sort();
    frames.dedup();
    let mut changes: Vec<(String, f64, f64)> = frames
        .into_iter()
        .map(|f| {
            let get = |m: &BTreeMap<String, f64>| m.get(f).copied().unwrap_or(0.0);
            (f.clone(), get(&sa), get(&sb))
        })
        .collect();
    changes.sort_by(|x, y| {
        (y.2 - y.1)
            .abs()
            .total_cmp(&(x.2 - x.1).abs())
            .then_with(|| x.0.cmp(&y.0))
    });
    changes.truncate(n);
    changes
}

/// A profile's stacks as [`fold`] gives them.
pub fn folded(profile: &Profile) -> BTreeMap<String, u64> {
    profile
        .stacks
        .iter()
        .map(|s| (s.stack.clone(), s.count))
        .collect()
}

/// Folded stacks as a profile holds them, sorted by stack.
pub fn stacks(folded: BTreeMap<String, u64>) -> Vec<FoldedStack> {
    folded
        .into_iter()
        .map(|(stack, count)| FoldedStack { stack, count })
        .collect()
}

/// How many samples each function was in (the leaf frame of their folded stack).
fn leaf_counts(folded: &BTreeMap<String, u64>) -> BTreeMap<&str, u64> {
    let mut by_leaf: BTreeMap<&str, u64> = BTreeMap::new();
    for (stack, count) in folded {
        let leaf = stack.rsplit(';').next().unwrap_or(stack);
        *by_leaf.entry(leaf).or_insert(0) += count;
    }
    by_leaf
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stack(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn stacks_fold_root_first_and_user_runs_merge() {
        let stacks = vec![
            stack(&[
                "do_syscall_64_[k]",
                "entry_SYSCALL_64_[k]",
                "[user]",
                "[user]",
            ]),
            stack(&["do_syscall_64_[k]", "entry_SYSCALL_64_[k]", "[user]"]),
            stack(&["[user]", "[user]"]),
        ];
        let folded = fold(&stacks);
        assert_eq!(folded["[user];entry_SYSCALL_64_[k];do_syscall_64_[k]"], 2);
        assert_eq!(folded["[user]"], 1);
        assert_eq!(folded.len(), 2);
    }

    #[test]
    fn leaves_decide_the_bucket() {
        let stacks = vec![
            stack(&["srso_safe_ret_[k]", "do_syscall_64_[k]", "[user]"]),
            stack(&["link_path_walk_[k]", "do_sys_openat2_[k]", "[user]"]),
            stack(&[
                "clear_page_erms_[k]",
                "do_anonymous_page_[k]",
                "asm_exc_page_fault_[k]",
            ]),
            stack(&["__schedule_[k]", "schedule_[k]"]),
            stack(&["getppid_impl_[k]"]),
            stack(&["[user]"]),
        ];
        let shares = bucket_shares(&fold(&stacks));
        for b in [
            Bucket::EntryExit,
            Bucket::Vfs,
            Bucket::PageFault,
            Bucket::Scheduler,
            Bucket::Body,
            Bucket::User,
        ] {
            assert!((shares[&b] - 1.0 / 6.0).abs() < 1e-12, "{b:?}: {shares:?}");
        }
        let top = top_functions(&fold(&stacks), 2);
        assert_eq!(top.len(), 2);
        assert!((top[0].1 - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn share_changes_put_the_largest_move_first() {
        let a = fold(&[stack(&["x_[k]"]), stack(&["y_[k]"])]);
        let b = fold(&[
            stack(&["x_[k]"]),
            stack(&["x_[k]"]),
            stack(&["x_[k]"]),
            stack(&["z_[k]"]),
        ]);
        let changes = share_changes(&a, &b, 10);
        assert_eq!(changes[0].0, "y_[k]", "{changes:?}");
        assert_eq!((changes[0].1, changes[0].2), (0.5, 0.0));
        let x = changes.iter().find(|c| c.0 == "x_[k]").unwrap();
        assert_eq!((x.1, x.2), (0.5, 0.75));
        assert_eq!(share_changes(&a, &b, 1).len(), 1);
    }

    proptest! {
        #[test]
        fn shares_sum_to_one_and_folding_keeps_every_sample(
            stacks in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec![
                    "[user]", "entry_SYSCALL_64_[k]", "do_syscall_64_[k]", "vfs_read_[k]", "schedule_[k]",
                    "exc_page_fault_[k]", "ksys_read_[k]",
                ]), 1..8),
                1..40,
            ),
        ) {
            let stacks: Vec<Vec<String>> =
                stacks.iter().map(|s| s.iter().map(|f| f.to_string()).collect()).collect();
            let folded = fold(&stacks);
            prop_assert_eq!(folded.values().sum::<u64>(), stacks.len() as u64);
            let total: f64 = bucket_shares(&folded).values().sum();
            prop_assert!((total - 1.0).abs() < 1e-9);
        }
    }
}

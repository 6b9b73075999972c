//! A fileset's directory tree as Filebench draws it (`fileset.c`, `fileset_populate` and
//! `fileset_populate_subdir`), so that a lookup here walks as many directories as Filebench's
//! does: statfile's 10000 files at width 20 lie 2 to 10 directories deep there, and each
//! directory is one more component for the kernel's path walk.
//!
//! The mean depth is ln(entries) / ln(dirwidth). Every directory draws its own depth and width
//! from gamma distributions of shape 3/2 around those means (Filebench's default `dirgamma`
//! 1500): it holds files when its depth has reached the depth it drew, else subdirectories,
//! about as many as the width it drew. The top directory keeps making subdirectories until
//! every file has a place. Names are Filebench's: eight digits, the serial within the parent.
//! The draws are oslab's seeded generator, so the tree is the same in every run.

use std::path::{Path, PathBuf};

use crate::analysis::rng::Rng;

/// The directories (parents before children, relative to the fileset's directory) and the
/// files (relative paths) of a fileset.
#[derive(Debug, Default)]
pub(super) struct Tree {
    pub dirs: Vec<PathBuf>,
    pub files: Vec<PathBuf>,
}

impl Tree {
    /// The tree of `entries` files with a mean of `width` entries per directory (at least 2).
    pub fn filebench(entries: u64, width: u64, rng: &mut Rng) -> Tree {
        let width = width.max(2) as f64;
        let mut draw = Draw {
            entries,
            width,
            mean_depth: (entries.max(1) as f64).ln() / width.ln(),
            rng,
            tree: Tree::default(),
        };
        draw.subdir(None, 1, 0);
        draw.tree
    }
}

struct Draw<'a> {
    entries: u64,
    width: f64,
    mean_depth: f64,
    rng: &'a mut Rng,
    tree: Tree,
}

impl Draw<'_> {
    /// fileset_populate_subdir: directory `serial` under `parent` (None: the top one) at
    /// `depth` directories below the fileset's.
    fn subdir(&mut self, parent: Option<&Path>, serial: u64, depth: u32) {
        let depth = depth + 1;
        let dir = match parent {
            Some(p) => p.join(format!("{serial:08}")),
            None => PathBuf::from(format!("{serial:08}")),
        };
        self.tree.dirs.push(dir.clone());
        // Filebench truncates the depth it draws and makes a zero one.
        let own_depth = (self.rng.gamma_three_halves(self.mean_depth) as u32).max(1);
        let mut own_width = self.rng.gamma_three_halves(self.width);
        if own_width == 0.0 {
            own_width = 1.0;
        }
        let leaf = parent.is_some() && depth >= own_depth;
        let mut i = 1u64;
        while (parent.is_none() || (i as f64) < own_width + 1.0) && self.placed() < self.entries {
            if leaf {
                self.tree.files.push(dir.join(format!("{i:08}")));
            } else {
                self.subdir(Some(&dir), i, depth);
            }
            i += 1;
        }
    }

    fn placed(&self) -> u64 {
        self.tree.files.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many directories deep each file lies (its parents below the fileset's directory).
    fn depths(tree: &Tree) -> Vec<usize> {
        tree.files
            .iter()
            .map(|f| f.components().count() - 1)
            .collect()
    }

    #[test]
    fn every_file_has_a_directory_made_before_it() {
        let tree = Tree::filebench(10_000, 20, &mut Rng::new(1));
        assert_eq!(tree.files.len(), 10_000);
        let dirs: std::collections::HashSet<_> = tree.dirs.iter().collect();
        assert_eq!(dirs.len(), tree.dirs.len(), "no directory twice");
        for f in &tree.files {
            assert!(dirs.contains(&f.parent().unwrap().to_path_buf()), "{f:?}");
        }
        for (i, d) in tree.dirs.iter().enumerate() {
            if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
                let at = tree.dirs.iter().position(|x| x == parent).unwrap();
                assert!(at < i, "{d:?} after its parent");
            }
        }
    }

    /// Filebench 1.5 made statfile's tree (10000 files, width 20) with files 2 to 10
    /// directories deep, 7.1 on average (counted on its tree on this machine; seeds 1 to 5
    /// gave 7.5 to 7.9 here).
    #[test]
    fn statfiles_tree_is_about_as_deep_as_filebenchs() {
        let tree = Tree::filebench(10_000, 20, &mut Rng::new(0x0f11_e5e7));
        let depths = depths(&tree);
        let mean = depths.iter().sum::<usize>() as f64 / depths.len() as f64;
        assert!((5.0..=9.5).contains(&mean), "mean depth {mean}");
        assert!(
            depths.iter().all(|d| *d >= 2),
            "files lie below the top directory"
        );
    }

    #[test]
    fn a_wide_tree_is_shallow_and_one_file_is_enough() {
        let tree = Tree::filebench(20_000, 100_000, &mut Rng::new(3));
        assert_eq!(tree.files.len(), 20_000);
        assert!(depths(&tree).iter().all(|d| *d <= 3));
        assert_eq!(Tree::filebench(1, 20, &mut Rng::new(3)).files.len(), 1);
    }
}

//! The syntax trees of library files kept on disk between runs, for the front ends.
//!
//! Input: the keys and bytes `eqm_syntax::parse_file_kept` hands over. Output: the bytes kept
//! under a key, one file `KEY.tree` per tree in the cache directory. A tree is written to a
//! temporary file of this process and renamed into place, so a process reading it (a sweep runs
//! many at once) sees a whole file or none. It deliberately decides nothing about validity:
//! the key already says which text and which parser a tree belongs to, and a file that does
//! not decode is parsed again by the caller. Nothing is ever removed: a tree is small next to
//! its text, and an old key is simply never asked for again.

use std::path::PathBuf;

/// Syntax trees kept in a directory.
#[derive(Debug, Clone)]
pub struct DiskTreeCache {
    dir: PathBuf,
}

impl DiskTreeCache {
    /// Trees kept in `dir` (created when the first tree is saved).
    pub fn new(dir: impl Into<PathBuf>) -> DiskTreeCache {
        DiskTreeCache { dir: dir.into() }
    }

    /// The directory the user's environment chooses, the same for every front end: `trees`
    /// in EQM's cache directory (see [`crate::cache_root`]).
    pub fn from_environment() -> DiskTreeCache {
        DiskTreeCache::new(crate::cache_root().join("trees"))
    }

    fn path(&self, key: u64) -> PathBuf {
        self.dir.join(format!("{key:016x}.tree"))
    }
}

impl eqm_syntax::TreeCache for DiskTreeCache {
    fn load(&self, key: u64) -> Option<Vec<u8>> {
        std::fs::read(self.path(key)).ok()
    }

    fn save(&self, key: u64, bytes: &[u8]) {
        // Failing to keep a tree costs the next run a parse, nothing more: errors are dropped.
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let partial = self.dir.join(format!("{key:016x}.{}.partial", std::process::id()));
        if std::fs::write(&partial, bytes).is_ok() && std::fs::rename(&partial, self.path(key)).is_err() {
            let _ = std::fs::remove_file(&partial);
        }
    }
}

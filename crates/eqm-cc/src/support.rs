//! What the building of external functions and of libraries from sources share: the messages
//! of a failed build, the files of a directory with their contents, and the hash that names
//! what is cached.
//!
//! Input: paths, texts and bytes. Output: a `LinkError`, the files of a directory, a hash. It
//! deliberately runs no compiler and decides no cache path.

use eqm_ir::external::LinkError;
use std::path::Path;

/// A link error with `message`.
pub(crate) fn error(message: String) -> LinkError {
    LinkError { message }
}

/// Why `compiler` could not be run: not found (the commonest case: no C compiler installed),
/// or the system's reason.
pub(crate) fn not_run(compiler: &str, e: &std::io::Error) -> LinkError {
    if e.kind() == std::io::ErrorKind::NotFound {
        error(format!(
            "no C compiler: `{compiler}` was not found; install one (such as gcc) or name it in the environment variable CC"
        ))
    } else {
        error(format!("the C compiler `{compiler}` could not be run: {e}"))
    }
}

/// The regular files directly in `dir`, sorted by name, with their contents; nothing for a
/// directory that cannot be read.
pub(crate) fn directory_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            Some((
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).ok()?,
            ))
        })
        .collect();
    files.sort();
    files
}

/// FNV-1a, 64 bits: a hash that is the same in every process and version, for the cache.
pub(crate) struct Fnv(pub(crate) u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(eqm_syntax::kept::FNV_OFFSET)
    }
}

impl Fnv {
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        // A separator after the bytes, so that ("ab", "c") and ("a", "bc") differ.
        self.0 = eqm_syntax::kept::fnv1a(eqm_syntax::kept::fnv1a(self.0, bytes), &[0xff]);
    }

    pub(crate) fn text(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }
}

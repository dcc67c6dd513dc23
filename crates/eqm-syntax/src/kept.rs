//! Syntax trees kept between runs, so that a library file whose text has not changed is not
//! parsed again.
//!
//! Input: a source text, its [`FileId`] in this run, and a [`TreeCache`] a front end gives (the
//! binary keeps the bytes on disk). Output: the same tree and diagnostics [`parse_file`] gives.
//! A tree is stored under a key that hashes the text together with [`PARSER_FINGERPRINT`], the
//! hash of every source of this crate that decides what tree a text parses to (the grammar, the
//! lexer, the tree's types, the node builders). A changed text or a changed parser is therefore
//! a different key, never a stale tree: the key is the whole of the invalidation, so neither the
//! file's time nor its name matters. Bytes that do not decode (a truncated file, another
//! format) are parsed again as if nothing were kept.
//!
//! Only texts that parse without any diagnostic are kept, so a kept tree never hides a syntax
//! error. This module does no IO; where and how the bytes are kept is the cache's business.

use crate::ast::StoredDefinition;
use crate::parse_file;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, in_file};

/// Where syntax trees are kept between runs, by key. Implementations must tolerate concurrent
/// processes (a sweep runs many) and may drop anything at any time.
pub trait TreeCache: Send + Sync {
    /// The bytes saved under `key`, if they are still kept.
    fn load(&self, key: u64) -> Option<Vec<u8>>;
    /// Keeps `bytes` under `key`; failing to keep them is not an error.
    fn save(&self, key: u64, bytes: &[u8]);
}

impl std::fmt::Debug for dyn TreeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TreeCache")
    }
}

/// The hash of the sources that decide the tree a text parses to; part of every key.
pub const PARSER_FINGERPRINT: u64 = {
    let sources: [&str; 8] = [
        env!("CARGO_PKG_VERSION"),
        include_str!("../grammar/eqm.lalrpop"),
        include_str!("ast.rs"),
        include_str!("lexer.rs"),
        include_str!("parser.rs"),
        include_str!("parser/build.rs"),
        include_str!("parser/errors.rs"),
        include_str!("../../eqm-diag/src/source.rs"),
    ];
    let mut hash = FNV_OFFSET;
    let mut k = 0;
    while k < sources.len() {
        hash = fnv1a(hash, sources[k].as_bytes());
        k += 1;
    }
    hash
};

/// Where FNV-1a starts.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, continuing from `hash`: the same in every process, platform and
/// version, as a key on disk must be.
pub const fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut k = 0;
    while k < bytes.len() {
        hash ^= bytes[k] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        k += 1;
    }
    hash
}

/// The key of `text`'s tree.
pub fn tree_key(text: &str) -> u64 {
    fnv1a(PARSER_FINGERPRINT, text.as_bytes())
}

/// Parses `text` as [`parse_file`] does, taking the tree from `cache` when it keeps one for this
/// text, and keeping the tree there when the text parses without diagnostics.
pub fn parse_file_kept(file: FileId, text: &str, cache: &dyn TreeCache) -> (StoredDefinition, Vec<Diagnostic>) {
    let key = tree_key(text);
    if let Some(tree) = cache.load(key).and_then(|bytes| decode(&bytes, file)) {
        return (tree, Vec::new());
    }
    let (tree, diagnostics) = parse_file(file, text);
    if diagnostics.is_empty()
        && let Ok(bytes) = postcard::to_allocvec(&tree)
    {
        cache.save(key, &bytes);
    }
    (tree, diagnostics)
}

/// The tree in `bytes`, its spans in `file`; `None` when the bytes are not a whole tree.
fn decode(bytes: &[u8], file: FileId) -> Option<StoredDefinition> {
    in_file(file, || postcard::from_bytes(bytes).ok())
}

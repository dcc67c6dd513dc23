//! Integration tests of `eqm-structural`. The graph algorithms of structural analysis on ids, against brute force and on large chains.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/structural_chain.rs"]
mod structural_chain;

mod structural_graph;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

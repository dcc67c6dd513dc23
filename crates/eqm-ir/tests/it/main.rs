//! Integration tests of `eqm-ir`. The symbolic core: simplification, differentiation, solving and evaluation of expressions.
//!
//! One test binary for the crate; each module is one family of tests.

mod arena;
mod disjoint_sets;
mod shared_call;
mod symbolic;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

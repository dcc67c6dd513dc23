//! Integration tests of `eqm-syntax`. The syntax crate: lexing, parsing, recovery, pretty-printing and robustness against hostile input.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/models.rs"]
mod models;
#[path = "../../../../tests/support/ui_harness.rs"]
mod ui_harness;

mod robustness;
mod syntax;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

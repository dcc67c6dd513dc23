//! Integration tests of `eqm-flatten`. Flattening: the flat model of every example, the spring–mass
//! example's equations one by one, and the diagnostics of names, instantiation and connections.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/ui_harness.rs"]
mod ui_harness;

mod diagram;
mod flatten;
mod ui;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

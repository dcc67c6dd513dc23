//! Integration tests of `eqm-integrators`. The integration methods: convergence orders, tolerances, dense output, failures, user tableaux.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/chain.rs"]
mod chain;
#[path = "../../../../tests/support/chain_system.rs"]
mod chain_system;
mod integrators;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

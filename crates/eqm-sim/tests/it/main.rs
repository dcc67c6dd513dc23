//! Integration tests of `eqm-sim`. Running programs: the interpreter, native code against it bit for bit, the symbolic Jacobian, and the stiff and sparse solvers on models.
//!
//! One test binary for the crate; each module is one family of tests.

#[path = "../../../../tests/support/pipeline.rs"]
mod pipeline;
#[path = "../../../../tests/support/stiff.rs"]
mod stiff_problems;

mod backends;
mod exec;
mod jacobian;
mod jit;
mod sparse;
mod state_choice;
mod stiff;

/// The repository root, where the examples and the standard library live.
#[allow(dead_code)]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

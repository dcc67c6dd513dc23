//! Integration tests of `eqm-syntax`. The syntax crate: lexing, parsing, recovery, pretty-printing and robustness against hostile input.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::models;
use eqm_testkit::ui_harness;

mod robustness;
mod syntax;

pub use eqm_testkit::REPO;

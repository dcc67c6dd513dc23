//! Integration tests of `eqm-structural`. The graph algorithms of structural analysis on ids, against brute force and on large chains.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::structural_chain;

mod structural_graph;

pub use eqm_testkit::REPO;

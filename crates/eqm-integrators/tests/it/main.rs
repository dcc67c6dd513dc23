//! Integration tests of `eqm-integrators`. The integration methods: convergence orders, tolerances, dense output, failures, user tableaux.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::chain;
use eqm_testkit::chain_system;
mod integrators;

pub use eqm_testkit::REPO;
